"""tests/support/backends.py: the same Arrow tables, hostile names and all, in each backend."""

from __future__ import annotations

import datetime as dt
import decimal
import sqlite3
from urllib.parse import parse_qs, urlsplit

import pyarrow as pa
import pytest
from backends import kind_params, load_tables

from cataloger_dagster.resources.database.errors import DatabaseError
from cataloger_dagster.resources.database.resource import DatabaseResource

TABLE = "we\"ird 'tbl' ü`%s"
NAMES = {
    "id": "select",            # a reserved word
    "text": 'a"b`c\'d',         # every quote
    "real": "x%s ?",            # what drivers take for placeholders
    "flag": "ünïcødé 名前",
    "day": "group by",
    "moment": " lead",
    "amount": "1col",
    "blob": "-",
    "empty": "all null",
}
ROWS = 3


def _table() -> pa.Table:
    n = NAMES
    return pa.table({
        n["id"]: pa.array([1, 2, None], pa.int64()),
        n["text"]: pa.array(["O'Brien", 'say "hi" `now`', None]),
        n["real"]: pa.array([1.5, -0.25, None]),
        n["flag"]: pa.array([True, False, None]),
        n["day"]: pa.array([dt.date(2020, 2, 29), None, dt.date(1900, 1, 1)]),
        n["moment"]: pa.array([dt.datetime(2020, 1, 1, 12, 30, 0, 123456), None, dt.datetime(1999, 12, 31)],
                              pa.timestamp("us")),
        n["amount"]: pa.array([decimal.Decimal("12.50"), None, decimal.Decimal("-0.01")], pa.decimal128(10, 2)),
        n["blob"]: pa.array([b"\x00\xff", b"", None]),
        n["empty"]: pa.nulls(ROWS),
    })


# how each backend gives the values back through ibis (the module docstring's mapping)
TYPES = {
    "duckdb": {"id": "int64", "flag": "boolean", "amount": "decimal(10, 2)", "moment": "timestamp(6)"},
    "sqlite": {"id": "int64", "flag": "boolean", "amount": "decimal(10, 2)", "moment": "timestamp"},
    "postgres": {"id": "int64", "flag": "boolean", "amount": "decimal(10, 2)", "moment": "timestamp(6)"},
    # MySQL's BOOLEAN is TINYINT(1), which the resource reads as boolean
    "mysql": {"id": "int64", "flag": "boolean", "amount": "decimal(10, 2)", "moment": "timestamp(6)"},
}


@pytest.mark.parametrize("kind", kind_params())
def test_every_backend_holds_the_same_values_under_hostile_names(kind, scratch):
    source = _table()
    url = load_tables(kind, {TABLE: source, "order": source.slice(0, 1)}, scratch)
    db = DatabaseResource(url=url)
    assert db.list_tables() == sorted([TABLE, "order"])
    table = db.table(TABLE)
    assert table.columns == tuple(NAMES.values())
    schema = table.schema()
    for key, expected in TYPES[kind].items():
        assert str(schema[NAMES[key]]) == expected, (kind, key)
    assert schema[NAMES["empty"]].is_string() and schema[NAMES["text"]].is_string()
    got = sorted(table.to_pyarrow().to_pylist(), key=lambda r: (r[NAMES["id"]] is None, r[NAMES["id"]]))
    assert got == source.to_pylist()
    assert db.table("order").count().execute() == 1
    db.close()


@pytest.mark.parametrize("kind", kind_params())
def test_scratch_drops_what_it_loaded(kind, tmp_path, request):
    from backends import Scratch

    where = Scratch(tmp_path, lambda k: request.getfixturevalue(f"{k}_admin_url"))
    url = load_tables(kind, {"t": pa.table({"a": [1, 2]})}, where)
    assert DatabaseResource(url=url).list_tables() == ["t"]
    where.close()
    if kind in ("duckdb", "sqlite"):
        assert not list(tmp_path.iterdir())
    elif kind == "mysql":
        with pytest.raises(DatabaseError, match=r"database .* does not exist on mysql:"):
            DatabaseResource(url=url).list_tables()
    else:
        import psycopg

        schema = parse_qs(urlsplit(url).query)["schema"][0]
        admin = request.getfixturevalue("postgres_admin_url").replace("postgres://", "postgresql://", 1)
        with psycopg.connect(admin) as con:
            found = con.execute("SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", [schema])
            assert found.fetchone() is None


@pytest.mark.postgres
@pytest.mark.mysql
def test_names_a_backend_would_change_are_refused(scratch):
    long = "c" * 64
    with pytest.raises(ValueError, match="PostgreSQL cuts"):
        load_tables("postgres", {"t": pa.table({long: [1]})}, scratch)
    with pytest.raises(ValueError, match="no trailing space"):
        load_tables("mysql", {"t": pa.table({"trailing ": [1]})}, scratch)
    with pytest.raises(ValueError, match="for one"):
        load_tables("mysql", {"t": pa.table({"Name": [1], "name": [2]})}, scratch)
    with pytest.raises(ValueError, match="no backend"):
        load_tables("duckdb", {"t": pa.table({"a\x00b": [1]})}, scratch)


@pytest.mark.mysql
def test_mysql_text_compares_as_in_the_other_backends(scratch):
    # the server's default collation (utf8mb4_general_ci) would merge both pairs
    values = pa.table({"status": ["Shipped", "shipped", "a", "a "]})
    db = DatabaseResource(url=load_tables("mysql", {"t": values}, scratch))
    assert db.table("t").status.nunique().execute() == 4
    db.close()


def test_sqlite_declares_the_types_ibis_reads(scratch):
    url = load_tables("sqlite", {"t": _table()}, scratch)
    con = sqlite3.connect(url.split("://", 1)[1])
    declared = {name: kind for _, name, kind, *_ in con.execute('PRAGMA table_info("t")')}
    con.close()
    assert declared[NAMES["flag"]] == "BOOLEAN" and declared[NAMES["amount"]] == "DECIMAL(10,2)"
    assert declared[NAMES["moment"]] == "TIMESTAMP" and declared[NAMES["empty"]] == "TEXT"
