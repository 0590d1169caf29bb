"""What `cataloger export --to soda` writes besides the checks: Soda's configuration of the
catalog's database, from its URL (the password stays out: an environment variable's name)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from cataloger_dagster.core.guardrails.soda_configuration import (
    PASSWORD_VARIABLE,
    data_source_name,
    duckdb_source,
    postgres_source,
    soda_configuration,
)
from cataloger_dagster.resources.database.connection import file_path, server_location, url_scheme

CONFIGURATION = "configuration.yml"


def configuration_of(url: str, database: str) -> str:
    """Soda's configuration of the database at `url`; ValueError (one line) for a source Soda's
    export does not configure."""
    scheme = url_scheme(url)
    if scheme == "duckdb":
        return soda_configuration(database, duckdb_source(str(file_path(url).resolve())))
    if scheme in ("postgres", "postgresql"):
        location, name, schema = server_location(url)
        host, _, port = location.rpartition(":")
        username = unquote(urlsplit(url).username or "")
        return soda_configuration(database, postgres_source(host, int(port), username, name, schema))
    raise ValueError(
        f"database {database!r}: the Soda export configures DuckDB and PostgreSQL sources, not {scheme}: "
        f"write {CONFIGURATION} by hand (the checks files are written)"
    )


def write_configuration(out: Path, database: str | None, name: str | None, store: str | None, catalog: str) -> str:
    """Write `out`/configuration.yml for the catalog's database, unless one is there (a person may
    have edited it); what happened, in one line for the terminal."""
    from cataloger_dagster.settings.model import load_settings

    path = out / CONFIGURATION
    if path.exists():
        return f"{path}: kept as it is (delete it to have it written again)"
    settings = load_settings(database=database, name=name, store=store)
    if "database" not in settings.model_fields_set:
        return (
            f"{CONFIGURATION} not written: give --database (or CATALOGER_DATABASE) to have Soda's configuration written"
        )
    path.write_text(configuration_of(settings.database, catalog), encoding="utf-8")
    return (
        f"Soda's configuration -> {path} (a password is read from ${PASSWORD_VARIABLE} when Soda scans); "
        f"run: soda scan -d {data_source_name(catalog)} -c {path} {out}/*.checks.yml"
    )
