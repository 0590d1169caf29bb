"""What `cataloger export --to soda` writes besides the checks: Soda's configuration of the
catalog's database, from its URL (the password stays out: an environment variable's name)."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from cataloger_dagster.core.guardrails.soda_configuration import duckdb_source, postgres_source, soda_configuration
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
