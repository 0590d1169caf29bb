"""Databases for run_sql's tests: a DuckDB file and a PostgreSQL schema holding the same two
tables, the latter reached through the read-only role SECURITY.md documents."""

from __future__ import annotations

import duckdb
import pytest
from sql_databases import TABLES, drop_role, reader_role, with_search_path

from cataloger_dagster.resources.database.resource import DatabaseResource


@pytest.fixture
def duck(tmp_path):
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as con:
        for statement in TABLES:
            con.execute(statement.format(serial="INTEGER"))
        con.execute("CREATE SEQUENCE orders_id_seq")
    db = DatabaseResource(url=f"duckdb://{path}")
    yield db
    db.close()


@pytest.fixture
def pg_tables(postgres_schema):
    schema, admin = postgres_schema
    admin.execute(f"SET search_path = {schema}")
    for statement in TABLES:
        admin.execute(statement.format(serial="SERIAL"))
    return schema, admin


@pytest.fixture
def pg(pg_tables, postgres_admin_url):
    """(DatabaseResource over the read-only role, the admin's connection)."""
    schema, admin = pg_tables
    role, url = reader_role(admin, postgres_admin_url, schema)
    db = DatabaseResource(url=url)
    yield db, admin
    db.close()
    drop_role(admin, role)


@pytest.fixture
def pg_superuser(pg_tables, postgres_admin_url):
    """(DatabaseResource over the test server's superuser URL, the admin's connection)."""
    schema, admin = pg_tables
    db = DatabaseResource(url=with_search_path(postgres_admin_url, schema))
    yield db, admin
    db.close()
