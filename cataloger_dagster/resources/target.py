"""What a database URL points at, checked when the connection opens: the schema or database it
names exists and holds the user's tables, not the server's own catalog.

A URL naming a schema that does not exist must stop before any table is tried (PostgreSQL would
otherwise list its system views as the tables), with one line that names it and the schemas
there are.  The system catalogs (PostgreSQL's pg_catalog and information_schema, MySQL's mysql,
sys, performance_schema and information_schema, SQLite's sqlite_* tables, DuckDB's internal
views) are never cataloged, and a table asked for by name among them is refused as such.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

# PostgreSQL reserves every schema name starting with pg_ (pg_catalog, pg_toast, pg_temp_3...)
POSTGRES_SYSTEM_SCHEMAS = frozenset({"information_schema"})
POSTGRES_SYSTEM_PREFIX = "pg_"
MYSQL_SYSTEM_DATABASES = frozenset({"mysql", "sys", "performance_schema", "information_schema"})
# SQLite reserves the prefix: sqlite_sequence, sqlite_stat1, sqlite_master...
SQLITE_INTERNAL_PREFIX = "sqlite_"
MYSQL_UNKNOWN_DATABASE = 1049  # the server's error number for a database that does not exist


class WrongTarget(ValueError):
    """The URL points at a schema or database that does not exist or holds no user tables;
    the message names it and those that exist."""


def url_schema(url: str) -> str | None:
    """The schema a PostgreSQL URL names with ?schema=, if any."""
    return parse_qs(urlsplit(url).query).get("schema", [None])[-1] or None


def is_postgres_system_schema(name: str) -> bool:
    return name in POSTGRES_SYSTEM_SCHEMAS or name.startswith(POSTGRES_SYSTEM_PREFIX)


def is_sqlite_internal(name: str) -> bool:
    return name.lower().startswith(SQLITE_INTERNAL_PREFIX)


def _rows(conn: Any, sql: str, **parameters: Any) -> list[tuple]:
    cur = conn.raw_sql(sql, **parameters)
    try:
        return [tuple(row) for row in cur.fetchall()]
    finally:
        cur.close()


def _listed(names: list[str]) -> str:
    return ", ".join(names) if names else "none"


# ------------------------------------------------------------------ PostgreSQL


def postgres_schemas(conn: Any) -> list[str]:
    """The user schemas of the connected database."""
    rows = _rows(conn, "SELECT nspname FROM pg_catalog.pg_namespace ORDER BY nspname")
    return [name for (name,) in rows if not is_postgres_system_schema(name)]


def postgres_target(conn: Any, url: str, shown: str) -> tuple[str, str]:
    """(database, schema) the connection reads its tables from: the URL's ?schema=, else the
    first schema of the search path that exists.  `shown` is the URL as it may be shown."""
    [(database, schema)] = _rows(conn, "SELECT current_database(), current_schema()")
    asked = url_schema(url)
    if schema is None:
        what = (
            f"schema {asked!r} does not exist in {shown}"
            if asked
            else (f"{shown} names no schema (?schema=) and its search path finds none (no 'public')")
        )
        raise WrongTarget(f"{what}; its schemas: {_listed(postgres_schemas(conn))}: name one with ?schema=")
    if is_postgres_system_schema(schema):
        raise WrongTarget(
            f"schema {schema!r} of {shown} is PostgreSQL's own catalog, not user tables; "
            f"its schemas: {_listed(postgres_schemas(conn))}: name one with ?schema="
        )
    return database, schema


def postgres_system_table(conn: Any, name: str) -> bool:
    """Whether `name` is a table or view of PostgreSQL's own catalog (pg_class, tables...)."""
    rows = _rows(
        conn,
        "SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
        "ON n.oid = c.relnamespace WHERE c.relname = %(name)s",
        params={"name": name},
    )
    return any(is_postgres_system_schema(schema) for (schema,) in rows)


# ------------------------------------------------------------------ MySQL / MariaDB


def _user_databases(rows: list[tuple]) -> list[str]:
    return sorted(name for (name, *_) in rows if name.lower() not in MYSQL_SYSTEM_DATABASES)


def mysql_target(conn: Any, shown: str) -> str:
    """The database the connection reads its tables from: the URL's, a user database."""
    [(database,)] = _rows(conn, "SELECT DATABASE()")
    if database is None or database.lower() in MYSQL_SYSTEM_DATABASES:
        databases = _user_databases(_rows(conn, "SHOW DATABASES"))
        what = (
            f"{shown} names no database"
            if database is None
            else f"database {database!r} of {shown} is the server's own catalog, not user tables"
        )
        raise WrongTarget(
            f"{what}; its databases: {_listed(databases)}: put one in the URL's path (mysql://user@host/<database>)"
        )
    return database


def mysql_missing_database(arguments: dict[str, Any], shown: str) -> WrongTarget:
    """The error for a URL whose database the server does not have, listing those it has."""
    import MySQLdb

    others = {k: v for k, v in arguments.items() if k not in ("database", "db")}
    try:
        con = MySQLdb.connect(**others)
        try:
            with con.cursor() as cur:
                cur.execute("SHOW DATABASES")
                databases = _listed(_user_databases(list(cur.fetchall())))
        finally:
            con.close()
    except Exception:  # noqa: BLE001 - the missing database is the message; the list is a courtesy
        databases = "(cannot be listed)"
    return WrongTarget(
        f"database {arguments.get('database')!r} does not exist on {shown}; its databases: "
        f"{databases}: put one in the URL's path (mysql://user@host/<database>)"
    )


def mysql_system_table(conn: Any, name: str) -> bool:
    rows = _rows(conn, "SELECT table_schema FROM information_schema.tables WHERE table_name = %s", args=(name,))
    return any(schema.lower() in MYSQL_SYSTEM_DATABASES for (schema,) in rows)


# ------------------------------------------------------------------ DuckDB


def duckdb_system_table(conn: Any, name: str) -> bool:
    """Whether `name` is one of DuckDB's internal views (duckdb_tables, pg_class, sqlite_master...)."""
    found = conn.con.execute(
        "SELECT 1 FROM duckdb_views() WHERE internal AND view_name = ? "
        "UNION ALL SELECT 1 FROM duckdb_tables() WHERE internal AND table_name = ?",
        [name, name],
    ).fetchall()
    return bool(found)
