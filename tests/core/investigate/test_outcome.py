"""investigations_result and script_metrics: what a run's investigations come to."""

from cataloger_dagster.core.investigate.investigator import InvestigationRun, PreviousScript
from cataloger_dagster.core.investigate.outcome import (
    SessionStats,
    investigations_result,
    script_metrics,
    verdict_counts,
)
from cataloger_dagster.core.models import CodeInvestigation, Fingerprint, IssueModel, TableProfile


def _issue(issue_id: str) -> IssueModel:
    return IssueModel(id=issue_id, type="missing_values", severity="high", description="d",
                      affectedColumns=["page"], suggestedAction="a", category="quick_fixes")


def _profile() -> TableProfile:
    fp = Fingerprint(schema_hash="s1", row_count=10, value="f1")
    return TableProfile(database="shop", table="events", row_count=10, column_count=0,
                        columns=[], sample_rows=[], fingerprint=fp)


RUN = InvestigationRun(
    investigations=[
        CodeInvestigation(code="a", success=True, output=None, issue_id="i1", verdict="confirmed"),
        CodeInvestigation(code="b", success=True, output=None, issue_id="i2", verdict="refuted"),
        CodeInvestigation(code="c", success=False, output=None, issue_id="i3", error="boom"),
    ],
    reused=["i1"], relearned=["i3"],
)
SESSION = SessionStats(cells=2, seconds=1.23456, cell_seconds=[0.5, 0.7], wall_seconds=2.5)


def test_a_warm_run_on_its_own_tables_script():
    previous = PreviousScript(timestamp="2026-03-01T10:00:00.000000Z", code="", table="events")
    result = investigations_result("events", RUN, previous, SESSION, backend="local", agent="heuristic")
    assert result.pass_rate == 2 / 3
    assert (result.cells, result.sandbox_seconds) == (2, 1.235)
    assert not result.explored and result.based_on == previous.timestamp and result.based_on_table is None
    assert (result.reused, result.relearned) == (["i1"], ["i3"])

    issues = [_issue("i1"), _issue("i2"), _issue("i3"), _issue("i4")]
    metrics = script_metrics(result, RUN, issues, _profile(), SESSION, why="best of 1",
                             usage={"tokens": 0}, tokens=0)
    assert metrics["answered"] == ["i1", "i2"] and metrics["coverage"] == 0.5
    assert metrics["verdicts"] == {"confirmed": 1, "refuted": 1, "inconclusive": 0}
    assert metrics["pass_rate"] == 2 / 3 and metrics["investigations"] == 3
    assert (metrics["schema_hash"], metrics["fingerprint"]) == ("s1", "f1")
    assert (metrics["agent"], metrics["backend"], metrics["why"]) == ("heuristic", "local", "best of 1")
    assert metrics["cell_seconds"] == [0.5, 0.7] and metrics["wall_seconds"] == 2.5


def test_a_transfer_and_an_empty_run():
    previous = PreviousScript(timestamp="2026-03-01T10:00:00.000000Z", code="", table="orders")
    result = investigations_result("events", RUN, previous, SESSION, backend="docker", agent="anthropic")
    assert result.based_on_table == "orders"

    empty = InvestigationRun(investigations=[])
    result = investigations_result("events", empty, None, SESSION, backend="local", agent="heuristic")
    assert result.explored and result.based_on is None and result.pass_rate is None
    metrics = script_metrics(result, empty, [], _profile(), SESSION, why="exploring", usage={}, tokens=0)
    assert metrics["pass_rate"] == 1.0 and metrics["coverage"] == 1.0
    assert verdict_counts([]) == {"confirmed": 0, "refuted": 0, "inconclusive": 0}


def test_refuted_issues_are_dismissed_and_the_rest_stand():
    from cataloger_dagster.core.investigate.outcome import dismissed, standing
    from cataloger_dagster.core.models import AnalysisResultModel

    issues = AnalysisResultModel(issues=[_issue("i1"), _issue("i2"), _issue("i3"), _issue("i4")],
                                 summary="", completedAt="")
    investigations = RUN.investigations + [
        # a check that crashed after saying "refuted" decided nothing: the issue stands
        CodeInvestigation(code="d", success=False, output=None, issue_id="i4", verdict="refuted", error="boom"),
    ]
    assert list(dismissed(investigations)) == ["i2"]
    assert [i.id for i in standing(issues, investigations).issues] == ["i1", "i3", "i4"]
    assert standing(issues, None) is issues and standing(issues, []).issues == issues.issues


def test_counts_from_a_sample_are_scaled_and_a_difference_is_said():
    from cataloger_dagster.core.investigate.outcome import SampleSeen, honest_counts

    issue = _issue("i1").model_copy(update={"affectedRows": 400})
    same = CodeInvestigation(code="", success=True, output=None, issue_id="i1", verdict="confirmed", affected=100)
    fewer = same.model_copy(update={"affected": 60})
    seen = SampleSeen(rows=250, table_rows=1000, seed=42)
    [scaled] = honest_counts([same], [issue], seen)
    assert scaled.sample == {"rows_seen": 250, "table_rows": 1000, "seed": 42}
    assert scaled.affected_in_table == 400 and scaled.count_note is None and scaled.evidence == same.evidence
    [off] = honest_counts([fewer], [issue], seen)
    assert off.affected_in_table == 240 and "400" in off.count_note and "240" in off.count_note
    assert "sample" in off.count_note
    # the whole table seen: no sample, and the raw count is compared
    [whole] = honest_counts([fewer], [issue], SampleSeen(rows=1000, table_rows=1000))
    assert whole.sample is None and whole.affected_in_table is None and "60" in whole.count_note
