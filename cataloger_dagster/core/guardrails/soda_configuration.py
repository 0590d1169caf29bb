"""The `configuration.yml` a `soda scan` of the exported checks reads: the database as Soda Core
3 names its connection.  Nothing secret is written: the password is a reference to an
environment variable, which Soda resolves when it scans.

Soda renders the whole file's text with Jinja (twice) before it reads the YAML, so no escape
survives: a value holding ``$`` or ``{`` is refused, with what to do."""

from __future__ import annotations

import re
from typing import Any

import yaml


PASSWORD_VARIABLE = "CATALOGER_SOURCE_PASSWORD"  # the password's environment variable, never the password
# Soda renders its configuration with Jinja: this is read from the environment at scan time
PASSWORD_REFERENCE = "${ env_var('" + PASSWORD_VARIABLE + "') }"


def data_source_name(database: str) -> str:
    """The name `soda scan -d` takes: the catalog's database name as the identifier Soda accepts
    (a letter or `_`, then at least one more letter, digit or `_`)."""
    name = re.sub(r"[^a-z0-9_]+", "_", database.lower()).strip("_")
    return name if re.fullmatch(r"[a-z_][a-z0-9_]+", name) else f"source_{name}".rstrip("_")


def _literal(what: str, value: str) -> str:
    if "$" in value or "{" in value:
        raise ValueError(
            f"the {what} {value!r} holds '$' or '{{', which Soda's configuration reads as a template: "
            "write configuration.yml by hand (the checks files are written)"
        )
    return value


def duckdb_source(path: str) -> dict[str, Any]:
    return {"type": "duckdb", "path": _literal("DuckDB file", path), "read_only": True}


def postgres_source(host: str, port: int, username: str, database: str, schema: str) -> dict[str, Any]:
    return {
        "type": "postgres",
        "host": _literal("host", host),
        "port": str(port),
        "username": _literal("username", username),
        "password": PASSWORD_REFERENCE,
        "database": _literal("database", database),
        "schema": _literal("schema", schema),
    }


def soda_configuration(database: str, source: dict[str, Any]) -> str:
    return yaml.safe_dump(
        {f"data_source {data_source_name(database)}": source},
        sort_keys=False,
        allow_unicode=False,
        width=1_000_000,
    )
