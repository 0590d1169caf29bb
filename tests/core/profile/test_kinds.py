"""A column's kind, the words a note uses for it, and the column being profiled."""

from __future__ import annotations

import ibis
import pytest

from cataloger_dagster.core.profile.kinds import Column, column_kind, profiled_columns, stat_words


@pytest.mark.parametrize("dtype, kind", [
    ("boolean", "boolean"), ("int8", "integer"), ("uint64", "integer"), ("decimal(10, 2)", "decimal"),
    ("float32", "float"), ("string", "string"), ("timestamp('UTC')", "timestamp"), ("date", "date"),
    ("time", "time"), ("uuid", "uuid"), ("binary", "binary"), ("interval('s')", "interval"),
    ("json", "json"), ("array<int64>", "nested"), ("struct<a: int64>", "nested"), ("map<string, int64>", "nested"),
    ("null", "other"),
])
def test_each_type_has_its_kind(dtype, kind):
    assert column_kind(ibis.dtype(dtype)) == kind


def test_a_statistic_is_named_as_the_reader_knows_it():
    assert [stat_words(s) for s in ("q3", "q_approx", "pat_email", "len_max", "nan", "bogus_sum")] == [
        "quantiles", "quantiles", "pattern counts", "lengths", "NaN count", "bogus sum"]


def test_a_failure_is_one_note_and_one_degradation_in_words():
    c = Column(2, "tags", ibis.dtype("array<string>"), "nested", ibis.literal(1))
    error = RuntimeError("Conversion Error: 'secret-1' at LINE 3")
    c.fail("len_min", "duckdb", error)
    c.fail("len_max", "duckdb", error)   # the same words: said once
    assert c.notes == ["lengths: could not be computed on duckdb for array"]
    assert [(d.stage, d.column, d.reason) for d in c.degradations] == [
        ("profile", "tags", "lengths could not be computed on duckdb for this array column")]
    c.skip("min/max")
    assert c.notes[-1] == "min/max: not defined for array"


def test_a_column_profiled_again_as_text_forgets_what_was_said():
    t = ibis.memtable({"n": [1, 2], "s": ["a", "b"]})
    n, s = profiled_columns(t, "duckdb")
    assert (n.index, n.kind, s.kind, n.text) == (0, "integer", "string", None) and n.counted
    n.fail("mean", "duckdb", RuntimeError("x"))
    n.local_quantiles = n.expr
    n.restart_as_text(t, "duckdb could not compute the statistics of its type (integer)")
    assert n.kind == "other" and n.degradations == [] and n.local_quantiles is None and n.counted
    assert n.notes == ["profiled as text: duckdb could not compute the statistics of its type (integer)"]
    assert n.expr.type().is_string()
