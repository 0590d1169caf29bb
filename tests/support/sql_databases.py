"""The two tables run_sql's tests query, and the PostgreSQL roles they connect as."""

from __future__ import annotations

import uuid
from urllib.parse import quote, urlsplit, urlunsplit

TABLES = [
    "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT)",
    "CREATE TABLE orders (id {serial} PRIMARY KEY, customer INTEGER, amount DOUBLE PRECISION, status TEXT, "
    "created_at TIMESTAMP)",
    "INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com'), (2, 'Bob', NULL), (3, 'Cy', 'cy@other.org'), "
    "(4, 'Dee', 'dee@example.com')",
    "INSERT INTO orders (id, customer, amount, status, created_at) VALUES "
    "(1, 1, 12.5, 'paid', '2024-01-03 10:00:00'), (2, 1, 80, 'shipped', '2024-01-20 11:00:00'), "
    "(3, 2, 5, 'paid', '2024-02-01 09:00:00'), (4, 3, NULL, 'open', '2024-02-11 12:00:00'), "
    "(5, 2, 55.25, 'shipped', '2024-03-05 08:30:00'), (6, 7, 99, 'paid', '2024-03-09 17:00:00')",
]


def with_search_path(url: str, schema: str) -> str:
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-csearch_path={schema}')}"


def reader_role(admin, admin_url: str, schema: str) -> tuple[str, str]:
    """Creates the documented read-only role (READER_ROLE_SQL, as SECURITY.md gives it) for
    `schema`; (role, its URL)."""
    from cataloger_dagster.mcp.sql_run import READER_ROLE_SQL

    role, password = f"reader_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    parts = urlsplit(admin_url)
    database = parts.path.lstrip("/")
    for statement in READER_ROLE_SQL.format(role=role, password=password, database=database,
                                            schema=schema).split(";\n"):
        admin.execute(statement)
    netloc = f"{role}:{password}@{parts.hostname}:{parts.port or 5432}"
    return role, with_search_path(urlunsplit((parts.scheme, netloc, parts.path, "", "")), schema)


def drop_role(admin, role: str) -> None:
    admin.execute(f"DROP OWNED BY {role}")
    admin.execute(f"DROP ROLE {role}")
