from cataloger_dagster.core.guardrails.diff import diff_suites
from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite


def _suite(*guardrails):
    return GuardrailSuite(database="d", table="t", dialect="duckdb", built_at="x", guardrails=list(guardrails))


def _g(name, high, sql="SELECT 1"):
    return Guardrail(name=name, kind="row_count", sql=sql, high=high, why="w")


def test_a_diff_names_what_was_added_removed_and_moved():
    before = _suite(_g("a", 1), _g("b", 2), _g("c", 3))
    after = _suite(_g("a", 1), _g("b", 5), _g("c", 3, "SELECT 2"), _g("d", 4))
    diff = diff_suites(before, after)
    assert diff.added == ["d"] and diff.removed == [] and diff.changed == ["b: ..2 -> ..5", "c: its statement"]
    assert not diff_suites(after, after)
    assert diff_suites(None, after).added == ["a", "b", "c", "d"]
