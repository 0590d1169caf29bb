"""core/portable.py: columns Arrow cannot carry go as text, with the reason; never the table."""

from __future__ import annotations

import sqlite3

import duckdb
import ibis

from cataloger_dagster.core import portable


def test_duckdb_types_without_an_arrow_form_are_read_as_text(tmp_path):
    path = tmp_path / "odd.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE odd AS SELECT 1 AS id, INTERVAL 1 MONTH + INTERVAL 2 DAY AS span, "
                    "'0101'::BIT AS bits, 7::UNION(num INTEGER, str VARCHAR) AS either, "
                    "{'s': INTERVAL 3 DAY} AS record, [1, 2] AS plain_list")
    table = ibis.duckdb.connect(str(path), read_only=True).table("odd")
    # the types that failed when the table went through Arrow as it is
    data, reasons = portable.read_arrow(table)
    assert data.to_pylist() == [{"id": 1, "span": "1 month 2 days", "bits": "0101", "either": "7",
                                 "record": "{'s': 3 days}", "plain_list": [1, 2]}]
    assert set(reasons) == {"span", "bits", "either", "record"}
    assert "intervals" in reasons["span"] and "(bit)" in reasons["bits"] and "(union)" in reasons["either"]


def test_sqlite_columns_of_several_storage_classes_are_text(tmp_path):
    path = tmp_path / "mixed.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE m (id INTEGER, n INTEGER, t TEXT)")
    con.executemany("INSERT INTO m VALUES (?, ?, ?)", [(1, 1, "a"), (2, "two", "b"), (3, b"\x00\xff", "c"), (4, 2.5, None)])
    con.commit()
    table = ibis.sqlite.connect(path).table("m")
    assert portable.sqlite_mixed_reasons(table) == {
        "n": "its values are of several SQLite storage classes (1 integer, 1 real, 1 text, 1 blob) "
             "although it is declared int64"}
    data, reasons = portable.read_arrow(table)
    # a blob that is not UTF-8 comes as x'hex', as SQLite writes it
    assert [r["n"] for r in data.to_pylist()] == ["1", "two", "x'00FF'", "2.5"]
    assert list(reasons) == ["n"]


def test_a_column_that_fails_is_found_and_sent_as_text(tmp_path):
    """Beyond the known types: a column whose values fail (here SQLite's declared NUMERIC
    holding text, which ibis reads as a decimal) is found by trying and carried as text."""
    path = tmp_path / "bad.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE b (id INTEGER, price NUMERIC)")
    con.executemany("INSERT INTO b VALUES (?, ?)", [(1, 2.5), (2, "n/a")])
    con.commit()
    table = ibis.sqlite.connect(path).table("b")
    data, reasons = portable.read_arrow(table, known={})      # the storage classes not looked up
    assert [r["price"] for r in data.to_pylist()] == ["2.5", "n/a"]
    assert reasons == {"price": "its values (decimal) could not be read as that type"}


def test_a_narrow_view_reads_only_its_columns_and_is_cheap_to_compile(tmp_path):
    path = tmp_path / "wide.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE wide AS SELECT " + ", ".join(f"range * {j} AS c{j}" for j in range(400))
                    + " FROM range(5)")
    backend = ibis.duckdb.connect(str(path))
    table = backend.table("wide")
    view = portable.narrow(table, ["c7", "c3"])
    assert list(view.columns) == ["c7", "c3"]
    # the filter of a narrow view must not become SELECT * of the whole table
    filtered = view.filter(view.c3 > 3)
    assert filtered.to_pyarrow().column_names == ["c7", "c3"]
    assert filtered.to_pyarrow().to_pylist() == table.select("c7", "c3").filter(table.c3 > 3).to_pyarrow().to_pylist()
    assert "c5" not in backend.compile(filtered)
    # a view over the table (as the MySQL resource makes) is rebuilt on the narrow table
    shown = table.select(doubled=table.c2 * 2, c9=table.c9, text=table.c4.cast("string"))
    narrow = portable.narrow(shown, ["text", "doubled"])
    assert narrow.to_pyarrow().to_pylist() == shown.select("text", "doubled").to_pyarrow().to_pylist()
    assert "c9" not in backend.compile(narrow)
