"""Query 1, the wide aggregate: each statistic as the backend can compute it, the columns
whose statistics fail profiled again as their text, and the exact pattern counts."""

from __future__ import annotations

import sqlite3

import duckdb
import ibis
import pytest

from cataloger_dagster.core.models import Fingerprint
from cataloger_dagster.core.profile.aggregates import Figures, column_metrics
from cataloger_dagster.core.profile.kinds import profiled_columns
from cataloger_dagster.core.profile.profiling import ProfileOptions, compute_profile
from cataloger_dagster.core.profile.runner import Capabilities


def fp(rows: int) -> Fingerprint:
    return Fingerprint(schema_hash="x", row_count=rows, value="x")


def _table(path, sql: str) -> ibis.Table:
    with duckdb.connect(str(path)) as con:
        con.execute(f"CREATE TABLE t AS {sql}")
    return ibis.duckdb.connect(str(path), read_only=True).table("t")


def test_figures_keep_each_statistic_in_its_field_and_refuse_an_unknown_one():
    f = Figures()
    f.put("count", 7)
    f.put("nan", 2)
    f.put("q3", 1.5)
    f.put("distinct_approx", 4)
    assert (f.count, f.nan, f.q_parts, f.distinct_approx, f.values()) == (7, 2, {3: 1.5}, 4, 5)
    with pytest.raises(ValueError, match="no figure of a column is called 'bogus_sum'"):
        f.put("bogus_sum", 1)


def test_approximate_distinct_above_threshold(tmp_path):
    table = _table(tmp_path / "c.duckdb", "SELECT i::BIGINT AS c0, i / 3.0 AS c1 FROM range(50) r(i)")
    prof = compute_profile(table, database="d", table_name="t", fingerprint=fp(50),
                           options=ProfileOptions(approx_distinct_above=10))
    assert prof.approximate and prof.column("c0").distinct_approximate
    assert abs(prof.column("c0").distinct - 50) <= 50 * 0.15   # HyperLogLog error
    assert any("approximate" in n for n in prof.column("c1").notes)


def test_what_a_backend_lacks_is_left_out_with_a_note_or_left_to_the_process(tmp_path):
    """Without std, isnan or a quantile function, no such statistic is asked of the database:
    each missing piece is a note, and the quantiles are marked to be computed in process."""
    table = _table(tmp_path / "n.duckdb", "SELECT i::BIGINT AS n, i / 2.0 AS x FROM range(10) r(i)")
    n, x = profiled_columns(table, "duckdb")
    bare = Capabilities()
    n_stats = [m.stat for m in column_metrics(n, bare, approximate=False)]
    x_stats = [m.stat for m in column_metrics(x, bare, approximate=False)]
    assert n_stats == ["count", "distinct", "min", "max", "mean"] and x_stats[0] == "count"
    assert "std: not available on this backend" in n.notes and n.local_quantiles is not None
    assert "nan_count: isnan not available on this backend" in x.notes and "nan" not in x_stats
    full = Capabilities(multi_quantile=True, isnan=True, std=True, approx_nunique=True, approx_multi_quantile=True)
    m, y = profiled_columns(table, "duckdb")
    assert [s.stat for s in column_metrics(m, full, approximate=True)] == [
        "count", "distinct_approx", "min", "max", "mean", "std", "q_approx"]
    assert [s.stat for s in column_metrics(y, full, approximate=False, sampled=True)] == [
        "count", "nan", "distinct", "min", "max", "mean", "std"]   # sampled: quantiles in query 2


def test_a_sqlite_column_of_several_storage_classes_is_profiled_again_as_text(tmp_path):
    path = tmp_path / "m.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (code INTEGER, n INTEGER)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(i if i % 4 else f"x{i}", i) for i in range(40)])
    con.commit()
    prof = compute_profile(ibis.sqlite.connect(path).table("t"), database="s", table_name="t", fingerprint=fp(40))
    code = prof.column("code")
    assert code.storage_classes == {"integer": 30, "text": 10} and code.kind == "string"
    assert code.profiled_as_text.startswith("its values are of several SQLite storage classes (30 integer, 10 text)")
    assert code.count == 40 and code.distinct == 40 and code.length.max == 3
    assert code.pattern_counts["number"] == 30
    assert prof.column("n").storage_classes is None and prof.column("n").mean == 19.5


def test_exact_pattern_counts_of_an_empty_table_are_zero(tmp_path):
    table = _table(tmp_path / "e.duckdb", "SELECT 'a@b.org' AS s FROM range(0) r(i)")
    prof = compute_profile(table, database="d", table_name="t", fingerprint=fp(0))
    counts = prof.column("s").pattern_counts
    assert counts and set(counts.values()) == {0} and {"email", "sentinel", "padded"} <= set(counts)


def test_what_a_backend_cannot_compute_is_profiled_as_text_or_a_degradation(postgres_schema, postgres_admin_url):
    """PostgreSQL money reaches ibis as '$1.50' where it expects a decimal, an enum has no
    length(), ranges and points no Arrow form: each column is profiled as its text, with the
    reason in its notes, and nothing of a backend's error text anywhere."""
    schema, conn = postgres_schema
    conn.execute(f"CREATE TYPE {schema}.mood AS ENUM ('sad', 'ok', 'happy')")
    conn.execute(f"CREATE TABLE {schema}.odd AS SELECT g AS id, (g * 1.5)::numeric::money AS cash, "
                 f"(array['sad', 'ok', 'happy'])[g % 3 + 1]::{schema}.mood AS mood, "
                 "int4range(g, g + 2) AS span, point(g, g) AS spot, g % 2 = 0 AS flag, "
                 "'v' || g AS label FROM generate_series(1, 30) g")
    url = f"{postgres_admin_url}?schema={schema}".replace("postgres://", "postgresql://")
    prof = compute_profile(ibis.connect(url).table("odd"), database="pg", table_name="odd", fingerprint=fp(30))
    assert prof.degradations == []
    for name in ("cash", "mood", "span", "spot"):
        c = prof.column(name)
        assert c.count == 30 and c.top_values and any(n.startswith("profiled as text: ") for n in c.notes), c
        assert c.profiled_as_text and f"profiled as text: {c.profiled_as_text}" in c.notes
        assert not any("Error" in n or "LINE" in n or "does not exist" in n for n in c.notes), c.notes
    assert prof.column("cash").top_values[0].value.startswith("$")
    assert prof.column("flag").mean == 0.5 and prof.column("label").pattern_counts["number"] == 0
    assert prof.sample_rows[0]["span"] == "[1,3)"
