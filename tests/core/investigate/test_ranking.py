"""`ranking.rank_scripts`, the one ranking of a table's scripts, on hand-made records.

(The ranking against the current issues and schema, and the relearned penalty, are in
tests/assets/test_investigations.py; that `cataloger scripts show best` is what the next
run starts from, over real runs, is in tests/cli/test_scripts.py.)"""

from cataloger_dagster.core.investigate.ranking import rank_scripts, script_origin
from cataloger_dagster.resources.store import ScriptRecord


def record(ts, metrics):
    return ScriptRecord(timestamp=ts, code="", metrics=metrics, uri=ts)


def order(records, **context):
    return [r.timestamp for r in rank_scripts(records, **context)]


def test_unknown_current_issues_rank_by_the_recorded_coverage():
    records = [record("1", {"pass_rate": 1.0, "coverage": 0.5, "answered": ["a"], "seconds": 1}),
               record("2", {"pass_rate": 1.0, "coverage": 1.0, "answered": ["b"], "seconds": 9})]
    assert order(records) == ["2", "1"]
    # known current issues: coverage of those, whatever the run recorded
    assert order(records, current_ids={"a"}) == ["1", "2"]
    # a table with no issues now: every script covers them all, so time decides
    assert order(records, current_ids=set()) == ["1", "2"]


def test_an_unknown_schema_is_neutral():
    records = [record("1", {"pass_rate": 1.0, "schema_hash": "s", "seconds": 9}),
               record("2", {"pass_rate": 1.0, "seconds": 1})]
    assert order(records) == ["2", "1"]
    assert order(records, schema_hash="s") == ["1", "2"]


def test_bad_values_rank_as_missing_and_equals_go_to_the_newest():
    records = [record("1", {"pass_rate": "1.0", "seconds": True}),   # hand-edited: text and a bool
               record("2", {"pass_rate": 0.2, "seconds": float("nan")}),
               record("4", {"pass_rate": 0.2, "seconds": -0.0})]
    assert order(records) == ["4", "2", "1"]
    same = [record("1", {"pass_rate": 0.5}), record("3", {"pass_rate": 0.5}), record("2", {"pass_rate": 0.5})]
    assert order(same) == ["3", "2", "1"]


def test_a_script_relearned_by_a_later_run_of_another_table_is_not_penalised():
    records = [record("1", {"pass_rate": 1.0, "investigations": 2, "seconds": 1}),
               record("2", {"pass_rate": 1.0, "investigations": 2, "seconds": 5, "based_on": "1",
                            "based_on_table": "other", "relearned": ["a", "b"]})]
    assert order(records) == ["1", "2"]
    records[1].metrics.pop("based_on_table")
    assert order(records) == ["2", "1"]


def test_only_the_catalogs_own_scripts_rank_whatever_the_others_claim():
    """An MCP save's metrics are what its code printed: with a perfect claimed pass rate it
    still never ranks, nor does a script with no metrics to say who wrote it."""
    claims = {"pass_rate": 1.0, "coverage": 1.0, "answered": ["a"], "seconds": 0.1}
    records = [record("1", {"pass_rate": 0.5, "answered": ["a"], "seconds": 9, "origin": "catalog"}),
               record("2", {**claims, "origin": "mcp", "session": "s"}),
               record("3", {**claims, "agent": "mcp", "source": "mcp", "session": "s"}),  # saved before "origin"
               record("4", None),
               record("5", {**claims, "origin": "someone"})]
    assert [script_origin(r.metrics) for r in records] == ["catalog", "mcp", "mcp", "unknown", "someone"]
    assert order(records, current_ids={"a"}) == ["1"]
    assert order(records[1:]) == []
    # written by a catalog run before the field existed: the catalog's
    assert script_origin({"pass_rate": 1.0, "agent": "heuristic"}) == "catalog"
