"""The optional parts of the package, each installed with its extra (pyproject.toml).

A base install catalogs with the heuristic agent and the local sandbox; the Anthropic agent, the
Docker sandbox and images, and the MCP server each need their extra, and say so where they start.
"""

from __future__ import annotations

import importlib

# extra -> the module it brings
EXTRAS = {"anthropic": "anthropic", "docker": "docker", "mcp": "mcp"}


class MissingExtra(ImportError):
    """An optional part of the package is used without its extra installed."""


def missing_extra(extra: str, what: str) -> MissingExtra:
    """The error that says which extra `what` needs and how to install it."""
    return MissingExtra(f"{what} needs the {extra!r} extra: pip install 'cataloger-dagster[{extra}]'")


def require(extra: str, what: str) -> None:
    """Raise MissingExtra unless the module of `extra` imports."""
    try:
        importlib.import_module(EXTRAS[extra])
    except ImportError as exc:
        raise missing_extra(extra, what) from exc
