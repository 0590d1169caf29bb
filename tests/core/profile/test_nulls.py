"""Structural NULLs, mined with the profile in one query: a threshold, a date, a category, a
column family whose NULLs grow; rules with a few exceptions; and the look-alikes that explain nothing."""

from __future__ import annotations

import ibis
import ibis.expr.types as ir
import pytest

from cataloger_dagster.core.models import NullPattern
from cataloger_dagster.core.profile import nulls
from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
from cataloger_dagster.core.profile.profiling import compute_profile
from tests.support import null_shapes


@pytest.fixture
def con():
    c = ibis.duckdb.connect()
    yield c
    c.disconnect()


def _profile(con, sql: str, name: str):
    con.raw_sql(sql)
    table = con.table(name)
    return compute_profile(table, database="t", table_name=name, fingerprint=compute_fingerprint(table))


def _of(patterns: list[NullPattern], column: str) -> NullPattern | None:
    return next((p for p in patterns if column in p.columns), None)


def test_a_category_null_exactly_below_a_threshold_is_explained(con):
    prof = _profile(con, null_shapes.STORMS, "storms")
    found = _of(prof.null_patterns, "category")
    assert found is not None and found.kind == "below" and found.by == "wind" and found.value == 65
    assert found.sentence == "category is NULL exactly when wind < 65."
    assert found.rows == prof.column("category").nulls > 0
    # the pressure's scattered NULLs: no column explains them
    assert _of(prof.null_patterns, "pressure") is None


def test_two_measures_null_before_a_date_are_one_sentence(con):
    prof = _profile(con, null_shapes.BEFORE_A_YEAR, "readings")
    found = _of(prof.null_patterns, "ozone")
    assert found is not None and found.columns == ["ozone", "humidity"] and found.by == "day"
    assert found.kind == "below" and str(found.value).startswith("2004-01-01")
    assert found.sentence.startswith("ozone and humidity are NULL exactly when day < 2004-01-01")
    assert len([p for p in prof.null_patterns if p.kind != "not_null_when"]) == 1


def test_week_columns_whose_nulls_grow_are_one_monotone_pattern(con):
    prof = _profile(con, null_shapes.chart_sql(), "chart")
    [found] = [p for p in prof.null_patterns if p.kind == "monotone"]
    assert found.columns == [f"wk{w}" for w in range(1, 77)] and found.value == "up"
    assert found.sentence.startswith("wk1…wk76 (76 columns) are one measure over several columns: each is NULL "
                                     "wherever the one before it is")
    assert not [p for p in prof.null_patterns if p.kind == "not_null_when"]


def test_one_row_against_the_threshold_and_nothing_is_explained(con):
    con.raw_sql(null_shapes.STORMS)
    con.raw_sql("UPDATE storms SET category = NULL WHERE obs = (SELECT min(obs) FROM storms WHERE wind = 155)")
    table = con.table("storms")
    prof = compute_profile(table, database="t", table_name="storms", fingerprint=compute_fingerprint(table))
    # wind no longer separates them: status does not either (a hurricane without category)
    assert _of(prof.null_patterns, "category") is None


def test_a_category_explains_nulls_when_no_threshold_does(con):
    prof = _profile(con, """CREATE TABLE orders AS SELECT i AS id, ['open', 'shipped', 'void'][1 + i % 3] AS status,
                            CASE WHEN i % 3 = 1 THEN DATE '2024-01-01' + INTERVAL (i % 300) DAY END AS shipped_on
                            FROM range(900) r(i)""", "orders")
    found = _of(prof.null_patterns, "shipped_on")
    assert found is not None and found.by == "status"
    assert found.kind == "not_among" and found.value == ["shipped"]
    assert found.sentence == "shipped_on is NULL exactly when status is not 'shipped'."


def test_a_row_number_or_a_few_nulls_explain_nothing(con):
    # the first rows lost their value: a broken load, not a rule of the data (the id is no explanation)
    prof = _profile(con, """CREATE TABLE t AS SELECT i AS id, CASE WHEN i < 40 THEN NULL ELSE i * 2 END AS amount,
                            CASE WHEN i < 3 THEN NULL ELSE i END AS other FROM range(500) r(i)""", "t")
    assert prof.null_patterns == []


def test_equal_null_sets_in_a_family_are_no_growth(con):
    # q1...q4 missing together on the same rows: a country without figures, not a structure
    prof = _profile(con, """CREATE TABLE q AS SELECT i AS id, """ + ", ".join(
        f"CASE WHEN i % 7 = 0 THEN NULL ELSE i + {k} END AS q{k}_2020" for k in range(1, 5)) +
        " FROM range(700) r(i)", "q")
    assert not [p for p in prof.null_patterns if p.kind == "monotone"]


def test_a_column_set_wherever_another_is_but_on_a_few_rows_is_a_rule(con):
    prof = _profile(con, null_shapes.DOSES, "doses")
    [rule] = [p for p in prof.null_patterns if p.kind == "not_null_when"]
    assert (rule.columns, rule.by, rule.exceptions, rule.rows) == (["unit"], "dose", 3, 200)
    assert rule.sentence == "unit holds a value wherever dose does, but on 3 rows."


def test_independent_nulls_make_no_rule(con):
    prof = _profile(con, null_shapes.INDEPENDENT, "survey")
    assert prof.null_patterns == []


def test_a_wide_table_is_mined_in_one_bounded_query(con, monkeypatch):
    # 120 columns with NULLs, 40 numbers, a family of 60: the candidates are bounded, whatever the width
    cols = [f"CASE WHEN hash(i * {k}) % 5 = 0 THEN NULL ELSE i + {k} END AS m_{_letters(k)}" for k in range(120)]
    cols += [f"(hash(i + {k}) % 1000)::INTEGER AS n_{_letters(k)}" for k in range(40)]
    cols += [f"CASE WHEN hash(i * {k}) % 3 = 0 THEN NULL ELSE i END AS wk{k}" for k in range(60)]
    con.raw_sql(f"CREATE TABLE wide AS SELECT {', '.join(cols)} FROM range(2000) r(i)")
    table = con.table("wide")
    prof = compute_profile(table, database="t", table_name="wide", fingerprint=compute_fingerprint(table))
    plan = nulls._plan(table, prof.columns, prof.row_count)
    assert 0 < len(plan.aggs) <= nulls.MAX_AGGREGATES
    sent = []
    original = ir.Table.aggregate
    monkeypatch.setattr(ir.Table, "aggregate", lambda self, **aggs: (sent.append(len(aggs)), original(self, **aggs))[1])
    assert nulls.null_patterns(table, prof.columns, prof.row_count) == []
    assert sent == [len(plan.aggs)]


def _letters(k: int) -> str:
    return chr(97 + k % 26) + chr(97 + k // 26)


def test_structural_nulls_name_each_explained_column():
    patterns = [NullPattern(kind="below", columns=["a", "b"], by="year", value=2004, rows=5, sentence="s"),
                NullPattern(kind="not_null_when", columns=["c"], by="d", rows=30, exceptions=2, sentence="r")]
    assert set(nulls.structural_nulls(patterns)) == {"a", "b"}
