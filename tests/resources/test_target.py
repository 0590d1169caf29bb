"""What a database URL points at is checked when the connection opens, and only user tables are
listed or opened, on the real backends: DuckDB and SQLite files, the PostgreSQL and MySQL/MariaDB
servers of tests/conftest.py (skipped without them, failing under CATALOGER_REQUIRE_SERVICES=1)."""

import sqlite3
import uuid
from urllib.parse import urlsplit

import pyarrow as pa
import pytest

from backends import KINDS, load_tables
from cataloger_dagster.resources.database.errors import DatabaseError, NoTablesError
from cataloger_dagster.resources.database.resource import DatabaseResource

ORDERS = pa.table({"id": pa.array(range(10), pa.int64()), "qty": pa.array([i % 3 for i in range(10)])})


def _error_of(url: str) -> str:
    db = DatabaseResource(url=url)
    try:
        with pytest.raises(DatabaseError) as info:
            db.list_tables()
    finally:
        db.close()
    return str(info.value)


def _with_query(url: str, **params: str) -> str:
    parts = urlsplit(url)
    query = "&".join([*filter(None, [parts.query]), *(f"{k}={v}" for k, v in params.items())])
    return parts._replace(query=query).geturl()


# ------------------------------------------------------------------ the schema or database named


def test_a_postgres_schema_that_does_not_exist_is_one_line_naming_it_and_the_schemas_there_are(
        postgres_admin_url, postgres_schema):
    existing, _ = postgres_schema
    missing = f"nosuch_{uuid.uuid4().hex[:8]}"
    message = _error_of(_with_query(postgres_admin_url, schema=missing))
    assert "\n" not in message
    assert f"schema {missing!r} does not exist" in message and existing in message and "?schema=" in message
    # no system schema is offered as one to name
    listed = message.split("its schemas: ", 1)[1]
    assert "pg_catalog" not in listed and "information_schema" not in listed and "pg_toast" not in listed


@pytest.mark.parametrize("system", ["pg_catalog", "information_schema", "pg_toast"])
def test_a_postgres_system_schema_is_refused(postgres_admin_url, system):
    message = _error_of(_with_query(postgres_admin_url, schema=system))
    assert "\n" not in message and f"schema {system!r}" in message and "own catalog" in message


def test_a_mysql_database_that_does_not_exist_is_one_line_naming_it_and_the_databases_there_are(scratch):
    url = load_tables("mysql", {"orders": ORDERS}, scratch)
    existing = urlsplit(url).path.strip("/")
    missing = f"nosuch_{uuid.uuid4().hex[:8]}"
    password = urlsplit(url).password
    message = _error_of(urlsplit(url)._replace(path=f"/{missing}").geturl())
    assert "\n" not in message and password not in message
    assert f"database {missing!r} does not exist" in message and existing in message
    listed = message.split("its databases: ", 1)[1]
    for system in ("mysql", "performance_schema", "information_schema"):
        assert f"{system}," not in listed and not listed.startswith(f"{system}:")


@pytest.mark.parametrize("path", ["/", "/mysql", "/information_schema", "/performance_schema"])
def test_a_mysql_url_without_a_user_database_is_refused(mysql_admin_url, path):
    message = _error_of(urlsplit(mysql_admin_url)._replace(path=path).geturl())
    assert "\n" not in message and "its databases: " in message and "URL's path" in message
    assert ("names no database" in message) if path == "/" else ("own catalog" in message)


# ------------------------------------------------------------------ only user tables


def _add_sqlite_internals(url: str) -> None:
    """sqlite_sequence (AUTOINCREMENT) and sqlite_stat1 (ANALYZE): tables SQLite writes itself."""
    with sqlite3.connect(urlsplit(url).path) as con:
        con.execute("CREATE TABLE counter (id INTEGER PRIMARY KEY AUTOINCREMENT, x INTEGER)")
        con.execute("INSERT INTO counter (x) VALUES (1)")
        con.execute("CREATE INDEX counter_x ON counter (x)")
        con.execute("ANALYZE")
    names = {r[0] for r in sqlite3.connect(urlsplit(url).path).execute("SELECT name FROM sqlite_master")}
    assert {"sqlite_sequence", "sqlite_stat1"} <= names


@pytest.mark.parametrize("kind", KINDS)
def test_only_user_tables_are_listed(kind, scratch):
    url = load_tables(kind, {"orders": ORDERS}, scratch)
    expected = ["orders"]
    if kind == "sqlite":
        _add_sqlite_internals(url)
        expected = ["counter", "orders"]
    db = DatabaseResource(url=url)
    try:
        assert db.list_tables() == expected
    finally:
        db.close()


SYSTEM_TABLES = {
    "duckdb": ["duckdb_tables", "pg_class", "sqlite_master"],
    "sqlite": ["sqlite_master", "sqlite_sequence", "sqlite_stat1"],
    "postgres": ["pg_class", "pg_namespace", "tables"],
    "mysql": ["tables", "columns"],
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_system_table_asked_for_by_name_is_refused_as_such(kind, scratch):
    url = load_tables(kind, {"orders": ORDERS}, scratch)
    if kind == "sqlite":
        _add_sqlite_internals(url)
    db = DatabaseResource(url=url)
    try:
        for name in SYSTEM_TABLES[kind]:
            with pytest.raises(DatabaseError) as info:
                db.table(name)
            message = str(info.value)
            assert f"table {name!r} is one of the database's own catalog tables" in message, message
            assert "only user tables are cataloged" in message and "orders" in message
        # a name that is nowhere is still just not found, and a user table still opens
        with pytest.raises(DatabaseError, match="table 'nowhere' not found"):
            db.table("nowhere")
        assert db.table("orders").count().execute() == 10
    finally:
        db.close()


# ------------------------------------------------------------------ nothing to catalog


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_database_lists_no_table_and_its_error_names_where_it_looked(kind, scratch):
    url = load_tables(kind, {}, scratch)
    db = DatabaseResource(url=url)
    try:
        assert db.list_tables() == []
        error = db.no_tables_error()
    finally:
        db.close()
    assert isinstance(error, NoTablesError) and isinstance(error, DatabaseError)
    message = str(error)
    assert message.startswith(f"no tables in {db.safe_url}") and "check the URL's database/schema" in message
    if kind == "postgres":
        assert f"(schema {dict(p.split('=') for p in urlsplit(url).query.split('&'))['schema']})" in message
