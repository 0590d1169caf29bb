"""Each dialect's comment statements and the queries that read the comments back.

Every identifier goes through sqlglot's quoting for the dialect and every text is a string
literal of it, so a name or a description holding quotes, backslashes, newlines or ``;`` is data
in the statement, never SQL.
"""

from __future__ import annotations

from typing import Literal, Optional

from sqlglot import exp

Dialect = Literal["duckdb", "postgres", "mysql"]
DIALECTS: tuple[Dialect, ...] = ("duckdb", "postgres", "mysql")


def identifier(name: str, dialect: Dialect) -> str:
    return exp.to_identifier(name, quoted=True).sql(dialect=dialect)


def literal(text: str, dialect: Dialect) -> str:
    return exp.Literal.string(text).sql(dialect=dialect)


def qualified(schema: Optional[str], table: str, dialect: Dialect) -> str:
    """The table's name as statements give it: under ``schema`` (PostgreSQL's schema, MySQL's
    database) when there is one."""
    name = identifier(table, dialect)
    return f"{identifier(schema, dialect)}.{name}" if schema else name


def table_comment(dialect: Dialect, schema: Optional[str], table: str, text: str) -> str:
    if dialect == "mysql":
        return f"ALTER TABLE {qualified(schema, table, dialect)} COMMENT = {literal(text, dialect)};"
    return f"COMMENT ON TABLE {qualified(schema, table, dialect)} IS {literal(text, dialect)};"


def column_comment(
    dialect: Dialect, schema: Optional[str], table: str, column: str, text: str, definition: str = ""
) -> str:
    """The statement setting ``column``'s comment; MySQL's restates the column's whole
    ``definition`` (mysql.py), which the comment is part of."""
    if dialect == "mysql":
        if not definition:
            raise ValueError(f"column {column!r} of {table!r}: MySQL needs the column's definition to comment it")
        return (
            f"ALTER TABLE {qualified(schema, table, dialect)} MODIFY COLUMN {identifier(column, dialect)} "
            f"{definition} COMMENT {literal(text, dialect)};"
        )
    target = f"{qualified(schema, table, dialect)}.{identifier(column, dialect)}"
    return f"COMMENT ON COLUMN {target} IS {literal(text, dialect)};"


def comment_queries(dialect: Dialect, schema: Optional[str], table: str) -> tuple[str, str]:
    """(the query of the table's comment: one row, one value; the query of its columns' comments:
    (column, comment) rows in the table's order).  A table absent from the database reads as no
    row."""
    t = literal(table, dialect)
    if dialect == "duckdb":
        where = f"table_name = {t} AND schema_name = current_schema() AND database_name = current_database()"
        return (
            f"SELECT comment FROM duckdb_tables() WHERE {where}",
            f"SELECT column_name, comment FROM duckdb_columns() WHERE {where} ORDER BY column_index",
        )
    if dialect == "postgres":
        s = literal(schema or "public", dialect)
        relation = f"SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = {s} AND c.relname = {t}"
        return (
            f"SELECT obj_description(c.oid, 'pg_class') FROM pg_class c WHERE c.oid IN ({relation})",
            "SELECT a.attname, col_description(a.attrelid, a.attnum) FROM pg_attribute a "
            f"WHERE a.attrelid IN ({relation}) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        )
    s = literal(schema or "", dialect)
    return (
        f"SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = {s} AND TABLE_NAME = {t}",
        "SELECT COLUMN_NAME, COLUMN_COMMENT FROM information_schema.COLUMNS "
        f"WHERE TABLE_SCHEMA = {s} AND TABLE_NAME = {t} ORDER BY ORDINAL_POSITION",
    )


def show_create_table(schema: Optional[str], table: str) -> str:
    return f"SHOW CREATE TABLE {qualified(schema, table, 'mysql')}"
