"""Comment statements whose names and texts are data in each dialect: run on DuckDB, a hostile
text comes back exactly; the MySQL and PostgreSQL forms are checked as the servers read them in
tests/core/writeback/test_session.py."""

from __future__ import annotations

import duckdb
import pytest

from commented_tables import HOSTILE, ODD_COLUMN, TABLE
from cataloger_dagster.core.writeback import sql


def test_duckdb_reads_back_the_exact_text_and_names():
    con = duckdb.connect()
    con.execute(f"CREATE TABLE {sql.identifier(TABLE, 'duckdb')} ({sql.identifier(ODD_COLUMN, 'duckdb')} INTEGER)")
    con.execute(sql.table_comment("duckdb", None, TABLE, HOSTILE))
    con.execute(sql.column_comment("duckdb", None, TABLE, ODD_COLUMN, HOSTILE + " (column)"))
    table_query, columns_query = sql.comment_queries("duckdb", None, TABLE)
    assert con.execute(table_query).fetchall() == [(HOSTILE,)]
    assert con.execute(columns_query).fetchall() == [(ODD_COLUMN, HOSTILE + " (column)")]
    assert con.execute(sql.comment_queries("duckdb", None, "absent")[0]).fetchall() == []


def test_mysql_escapes_backslashes_and_restates_the_definition():
    statement = sql.column_comment("mysql", "shop", "t`1", "c", "a\\b'c\nd", "int NOT NULL DEFAULT 3")
    assert statement == "ALTER TABLE `shop`.`t``1` MODIFY COLUMN `c` int NOT NULL DEFAULT 3 COMMENT 'a\\\\b''c\\nd';"
    assert sql.table_comment("mysql", "shop", "t", "x") == "ALTER TABLE `shop`.`t` COMMENT = 'x';"
    with pytest.raises(ValueError, match="'c' of 't': MySQL needs the column's definition"):
        sql.column_comment("mysql", "shop", "t", "c", "x")


def test_postgres_qualifies_with_the_schema():
    assert sql.column_comment("postgres", 'sa"les', "t", "c", "it's") == (
        'COMMENT ON COLUMN "sa""les"."t"."c" IS \'it\'\'s\';')
