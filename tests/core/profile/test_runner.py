"""The queries as the backend takes them: its capabilities probed (typed, compiled only),
a failing column or statistic isolated and noted, a branch rebuilt on the values as text,
very wide tables cut in pieces, and what a backend lacks degraded with a note."""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3

import duckdb
import ibis
import pytest

from cataloger_dagster.core.models import Fingerprint
from cataloger_dagster.core.profile import aggregates
from cataloger_dagster.core.profile.kinds import profiled_columns
from cataloger_dagster.core.profile.profiling import ProfileOptions, compute_profile
from cataloger_dagster.core.profile.runner import Branch, Capabilities, Metric, Runner, probe_capabilities


def fp(rows: int) -> Fingerprint:
    return Fingerprint(schema_hash="x", row_count=rows, value="x")


def close(a, b, rel=1e-9):
    return a == b or (a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-9))


def _duckdb(path, sql: str) -> ibis.Table:
    with duckdb.connect(str(path)) as con:
        con.execute(f"CREATE TABLE t AS {sql}")
    return ibis.duckdb.connect(str(path), read_only=True).table("t")


def _sqlite(path) -> ibis.Table:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (n INTEGER, x REAL, s TEXT)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", [(i, i / 2, f"v{i}") for i in range(10)])
    con.commit()
    return ibis.sqlite.connect(path).table("t")


def test_capabilities_are_a_typed_record_probed_per_backend(tmp_path):
    table = _duckdb(tmp_path / "c.duckdb", "SELECT range AS n, 'a' AS s FROM range(3)")
    duck = probe_capabilities(table, table.get_backend(), profiled_columns(table, "duckdb"))
    assert isinstance(duck, Capabilities)
    assert duck == Capabilities(multi_quantile=True, quantile=True, approx_multi_quantile=True, approx_nunique=True,
                                isnan=True, nan_is_null=False, regex=True, std=True, sample=True, subsample=True)
    lite = _sqlite(tmp_path / "c.sqlite")
    caps = probe_capabilities(lite, lite.get_backend(), profiled_columns(lite, "sqlite"))
    # SQLite: no quantile function, no seeded sample, and a NaN is stored as NULL
    assert caps.nan_is_null and not caps.isnan and not caps.quantile and not caps.multi_quantile
    assert not caps.sample
    with pytest.raises(dataclasses.FrozenInstanceError):
        caps.regex = True  # type: ignore[misc]


def test_a_failing_metric_is_isolated_and_the_rest_of_the_query_kept(tmp_path):
    table = _duckdb(tmp_path / "m.duckdb", "SELECT range AS n, 'x' || range AS s FROM range(5)")
    cols = profiled_columns(table, "duckdb")
    runner = Runner(table, cols, "duckdb")
    got = runner.aggregate([Metric(0, "count", table.n.count()), Metric(1, "bogus_sum", table.s.cast("int64").sum()),
                            Metric(1, "count", table.s.count()), Metric(-1, "rows", table.count())])
    assert [(m.col, m.stat, int(v)) for m, v in got] == [(0, "count", 5), (1, "count", 5), (-1, "rows", 5)]
    assert cols[1].notes == ["bogus sum: could not be computed on duckdb for string"] and not cols[0].notes
    assert runner.queries > 1   # the error path spends queries, only there
    with pytest.raises(RuntimeError, match="rows: failed on duckdb"):   # a table-level figure has no column to note
        runner.aggregate([Metric(-1, "rows", table.s.cast("int64").sum())])


class _AsText:
    def __init__(self, table: ibis.Table):
        self.table = table

    def as_text(self) -> ibis.Table:
        t = self.table
        return t.group_by(v=t.s).aggregate(n=t.count()).select(c=ibis.literal(1, "int64"), k=ibis.literal("t"),
                                                                   v="v", n="n")


def test_a_failing_branch_is_rebuilt_on_the_values_as_text_and_says_so(tmp_path):
    table = _duckdb(tmp_path / "b.duckdb", "SELECT range AS n, 'x' AS s FROM range(4)")
    cols = profiled_columns(table, "duckdb")
    runner = Runner(table, cols, "duckdb")
    failing = table.group_by(v=table.s.cast("int64")).aggregate(n=table.count()).select(
        c=ibis.literal(1, "int64"), k=ibis.literal("t"), v=ibis._.v.cast("string"), n="n")
    fine = table.aggregate(v=ibis.literal("4"), n=table.count()).select(
        c=ibis.literal(0, "int64"), k=ibis.literal("s"), v="v", n="n")
    rows = runner.union([Branch(0, "sample size", fine), Branch(1, "top values", failing, _AsText(table))])
    assert sorted((r.col, r.tag, r.value, r.n) for r in rows) == [(0, "s", "4", 4), (1, "t", "x", 4)]
    assert cols[1].notes == ["top values: counted on the values as text"]
    rows = Runner(table, cols, "duckdb").union([Branch(1, "histogram", failing)])
    assert rows == [] and cols[1].notes[-1] == "histogram: could not be computed on duckdb for string"


def test_a_failing_statistic_is_a_degradation_in_words(tmp_path, monkeypatch):
    """A statistic the database refuses (here a text column's sum, which DuckDB refuses with
    a Conversion Error quoting the value) first makes the column be profiled as its text;
    when it fails even so, it is a Degradation: a sentence, never the database's error."""
    path = tmp_path / "d.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t AS SELECT range AS x, 'secret-' || range AS s FROM range(20)")
    table = ibis.duckdb.connect(str(path), read_only=True).table("t")
    real = aggregates.column_metrics
    monkeypatch.setattr(aggregates, "column_metrics", lambda c, *a, **k: [
        *real(c, *a, **k), *([Metric(c.index, "bogus_sum", c.expr.cast("int64").sum())]
                             if c.kind == "string" else [])])
    prof = compute_profile(table, database="d", table_name="t", fingerprint=fp(20))
    s = prof.column("s")
    assert [d.model_dump() for d in prof.degradations] == [
        {"stage": "profile", "column": "s", "reason": "bogus sum could not be computed on duckdb for this string column"}]
    assert s.notes[0] == "profiled as text: duckdb could not compute the statistics of its type (string)"
    assert s.profiled_as_text == "duckdb could not compute the statistics of its type (string)"
    assert s.count == 20 and s.distinct == 20 and s.length.max == 9          # the rest is there
    assert not any("secret" in n or "Error" in n for n in s.notes)
    assert prof.column("x").notes == [] and prof.column("x").mean == 9.5
    assert prof.column("x").profiled_as_text is None


def _mixed_rows(n: int):
    return [(i if i % 5 else None, i / 4, ["a@b.com", "NA", "x", " y "][i % 4], f"u{i}@x.org",
             f"2024-01-{i % 28 + 1:02d}") for i in range(n)]


def _check_large_mode_degrades(prof, rows: int):
    """Approximate + sampled mode forced on a small table of a backend that
    lacks some of DuckDB's functions: a note per missing piece, no crash (the fifth query: the
    NULL patterns of a column with NULLs)."""
    assert prof.approximate and prof.row_count == rows and prof.queries <= 5
    i, f, s, d = (prof.column(n) for n in ("i", "f", "s", "d"))
    assert i.count == rows - rows // 5 and i.nulls == rows // 5 and f.count == rows
    assert (i.min, i.max) == (1, rows - 1) and close(f.mean, (rows - 1) / 8)
    assert sum(f.histogram.counts) == rows and sum(d.histogram.counts) == rows
    assert all(c.notes for c in prof.columns)
    assert abs(s.pattern_counts["sentinel"] - rows / 4) <= 0.1 * rows
    assert abs(s.pattern_counts["email"] - rows / 4) <= 0.1 * rows
    assert s.top_values and abs(s.top_values[0].count - rows / 4) <= 0.1 * rows
    assert prof.column("e").semantic_type == "email"
    json.dumps(prof.model_dump(mode="json"), allow_nan=False)


def test_sqlite_large_mode_degrades_gracefully(tmp_path):
    path = tmp_path / "big.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (i INTEGER, f REAL, s TEXT, e TEXT, d DATE)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", _mixed_rows(3000))
    con.commit()
    prof = compute_profile(ibis.sqlite.connect(path).table("t"), database="s", table_name="t",
                           fingerprint=fp(3000), options=ProfileOptions(approx_distinct_above=1000, sample_rows=1000))
    _check_large_mode_degrades(prof, 3000)
    # SQLite has no seeded sample: every row is counted, exactly
    assert [tv.count for tv in prof.column("s").top_values] == [750] * 4
    assert any("quantiles" in n for n in prof.column("f").notes)


def test_postgres_large_mode(postgres_admin_url, postgres_schema):
    schema, conn = postgres_schema
    conn.execute(f"CREATE TABLE {schema}.t (i int, f double precision, s text, e text, d date)")
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {schema}.t VALUES (%s, %s, %s, %s, %s)", _mixed_rows(3000))
    url = postgres_admin_url.replace("postgres://", "postgresql://")
    table = ibis.connect(url).table("t", database=schema)
    prof = compute_profile(table, database="pg", table_name="t", fingerprint=fp(3000),
                           options=ProfileOptions(approx_distinct_above=1000, sample_rows=1000))
    _check_large_mode_degrades(prof, 3000)
    assert any("sample" in n for n in prof.column("s").notes)        # PostgreSQL samples
    assert prof.column("f").quantiles is not None


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_wide_table_is_cut_into_queries_the_backend_takes(backend, tmp_path, request):
    """400 columns: more expressions than PostgreSQL's 1,664 per SELECT and more branches
    than SQLite's 500 per UNION, in one table that once failed as a whole."""
    width, rows = 400, 20
    cols = ", ".join(f"c{j} {'INTEGER' if j % 2 else 'TEXT'}" for j in range(width))
    values = [tuple(i * j if j % 2 else f"v{i % 3}" for j in range(width)) for i in range(rows)]
    if backend == "sqlite":
        con = sqlite3.connect(tmp_path / "w.sqlite")
        con.execute(f"CREATE TABLE w ({cols})")
        con.executemany(f"INSERT INTO w VALUES ({', '.join('?' * width)})", values)
        con.commit()
        table = ibis.sqlite.connect(tmp_path / "w.sqlite").table("w")
    else:
        schema, conn = request.getfixturevalue("postgres_schema")
        conn.execute(f"CREATE TABLE {schema}.w ({cols})")
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {schema}.w VALUES ({', '.join(['%s'] * width)})", values)
        url = request.getfixturevalue("postgres_admin_url").replace("postgres://", "postgresql://")
        table = ibis.connect(url).table("w", database=schema)
    prof = compute_profile(table, database="d", table_name="w", fingerprint=fp(rows))
    assert prof.degradations == [] and prof.column_count == width
    assert prof.column("c399").max == 19 * 399 and prof.column("c398").distinct == 3
    assert all(c.top_values for c in prof.columns)
