"""`fingerprint`: what the sensors compare to decide a table changed, on real DuckDB, SQLite and
PostgreSQL tables: schema hash, row count and the maximum of a last-modified column."""

from __future__ import annotations

import sqlite3

import duckdb
import ibis
import pytest

from cataloger_dagster.core.profile.fingerprint import (
    DEFAULT_UPDATE_COLUMNS,
    compute_fingerprint,
    schema_hash,
    update_column,
)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "fp.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("""CREATE TABLE items AS SELECT range AS id, 'n' || range AS name,
                       TIMESTAMP '2024-01-01' + INTERVAL (range) HOUR AS Updated_At FROM range(10)""")
        con.execute("CREATE TABLE plain AS SELECT range AS id FROM range(5)")
    return path


def fingerprint_of(path, table, **kw):
    con = ibis.duckdb.connect(str(path))
    try:
        return compute_fingerprint(con.table(table), **kw)
    finally:
        con.disconnect()


def sql(path, statement):
    with duckdb.connect(str(path)) as con:
        con.execute(statement)


def test_rows_schema_and_last_update_are_read(db):
    fp = fingerprint_of(db, "items")
    assert fp.row_count == 10
    # the candidate names match whatever the case of the column
    assert fp.update_column == "Updated_At" and fp.max_updated == "2024-01-01T09:00:00"
    assert len(fp.schema_hash) == 16 and len(fp.value) == 16
    assert fp == fingerprint_of(db, "items")          # the same table, the same fingerprint


def test_an_in_place_update_changes_the_fingerprint_though_rows_and_schema_do_not(db):
    before = fingerprint_of(db, "items")
    sql(db, "UPDATE items SET name = 'x', Updated_At = TIMESTAMP '2025-05-05 05:05:05' WHERE id = 3")
    after = fingerprint_of(db, "items")
    assert (after.row_count, after.schema_hash) == (before.row_count, before.schema_hash)
    assert after.max_updated == "2025-05-05T05:05:05" and after.value != before.value


def test_each_part_moves_the_value(db):
    before = fingerprint_of(db, "plain")
    assert before.update_column is None and before.max_updated is None
    sql(db, "INSERT INTO plain VALUES (99)")
    grown = fingerprint_of(db, "plain")
    assert grown.row_count == 6 and grown.value != before.value and grown.schema_hash == before.schema_hash
    sql(db, "DELETE FROM plain WHERE id = 99")
    assert fingerprint_of(db, "plain") == before
    sql(db, "ALTER TABLE plain ALTER id TYPE DOUBLE")
    retyped = fingerprint_of(db, "plain")
    assert retyped.schema_hash != before.schema_hash and retyped.value != before.value


def test_schema_hash_sees_names_types_and_order():
    t = ibis.table({"a": "int64", "b": "string"}, name="t")
    assert schema_hash(t) == schema_hash(ibis.table({"a": "int64", "b": "string"}, name="other"))
    assert schema_hash(t) != schema_hash(ibis.table({"b": "string", "a": "int64"}, name="t"))
    assert schema_hash(t) != schema_hash(ibis.table({"a": "int32", "b": "string"}, name="t"))
    assert schema_hash(t) != schema_hash(ibis.table({"A": "int64", "b": "string"}, name="t"))
    # a nullable and a non-null column are different schemas
    assert schema_hash(t) != schema_hash(ibis.table({"a": "!int64", "b": "string"}, name="t"))


def test_update_column_needs_a_known_name_and_a_temporal_type():
    assert update_column(ibis.table({"updated_at": "string"})) is None       # text, not a time
    assert update_column(ibis.table({"updated_at": "date"})) == "updated_at"
    # candidates are tried in order, not by column position
    both = ibis.table({"updated": "timestamp", "modified_at": "timestamp"})
    assert update_column(both) == "modified_at"
    assert DEFAULT_UPDATE_COLUMNS.index("modified_at") < DEFAULT_UPDATE_COLUMNS.index("updated")
    assert update_column(both, candidates=("UPDATED",)) == "updated"
    assert update_column(both, candidates=()) is None


def test_a_known_row_count_is_taken_as_given(db):
    # the sensors pass the count when they have it, to save the query
    fp = fingerprint_of(db, "plain", row_count=1234)
    assert fp.row_count == 1234 and fp.value != fingerprint_of(db, "plain").value
    custom = fingerprint_of(db, "items", update_columns=("id",))
    assert custom.update_column is None                 # id is no time


def test_an_empty_table(db):
    sql(db, "CREATE TABLE empty_items AS SELECT * FROM items WHERE false")
    fp = fingerprint_of(db, "empty_items")
    assert fp.row_count == 0 and fp.update_column == "Updated_At" and fp.max_updated is None


def test_sqlite(tmp_path):
    path = tmp_path / "fp.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (id INTEGER, modified_at TIMESTAMP)")
        con.executemany("INSERT INTO t VALUES (?, ?)", [(1, "2024-01-01 10:00:00"), (2, "2024-03-01 08:30:00")])
    table = ibis.sqlite.connect(str(path)).table("t")
    fp = compute_fingerprint(table)
    assert fp.row_count == 2 and fp.update_column == "modified_at"
    assert fp.max_updated == "2024-03-01T08:30:00"


def test_postgres(postgres_admin_url, postgres_schema):
    schema, conn = postgres_schema
    conn.execute(f"CREATE TABLE {schema}.t (id int, last_modified timestamptz)")
    conn.execute(f"INSERT INTO {schema}.t VALUES (1, '2024-01-01 10:00:00+00'), (2, '2024-02-01 10:00:00+00')")
    con = ibis.connect(postgres_admin_url.replace("postgres://", "postgresql://"))
    try:
        before = compute_fingerprint(con.table("t", database=schema))
        assert before.row_count == 2 and before.update_column == "last_modified"
        assert before.max_updated.startswith("2024-02-01T10:00:00")
        conn.execute(f"UPDATE {schema}.t SET last_modified = '2024-06-01 00:00:00+00' WHERE id = 1")
        after = compute_fingerprint(con.table("t", database=schema))
        assert after.value != before.value and after.max_updated.startswith("2024-06-01")
    finally:
        con.disconnect()
