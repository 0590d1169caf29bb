"""The `cataloger` command, one module per verb group.

`main` (the console script `cataloger_dagster.cli:main`) is defined in `app`
and loaded on first use, so that `python -m cataloger_dagster.cli.sandbox`
runs its module once, as __main__, without importing it first through `main`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["main"]


def __getattr__(name: str) -> Any:
    if name == "main":
        from cataloger_dagster.cli.app import main

        globals()["main"] = main
        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
