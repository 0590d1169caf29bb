"""`heuristic_analysis`: detected issues ordered by severity, and a summary that counts them and
says what changed since the previous run."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from cataloger_dagster.core.issues.analysis import heuristic_analysis
from cataloger_dagster.core.models import Fingerprint, IssueModel, TableProfile

PROFILE = TableProfile(database="shop", table="orders", row_count=10, column_count=0, columns=[],
                       sample_rows=[], fingerprint=Fingerprint(schema_hash="s", row_count=10, value="v"))


def issue(ident: str, severity: str) -> IssueModel:
    return IssueModel(id=ident, type="missing_values", severity=severity, description=f"about {ident}",
                      affectedColumns=["c"], suggestedAction="a", category="quick_fixes", details={"n": ident})


def test_issues_are_ordered_by_severity_then_id():
    detected = [issue("b_low", "low"), issue("z_high", "high"), issue("m_medium", "medium"),
                issue("a_high", "high"), issue("a_low", "low")]
    result = heuristic_analysis(PROFILE, detected)
    assert [i.id for i in result.issues] == ["a_high", "z_high", "m_medium", "a_low", "b_low"]
    # the issues themselves pass through unchanged
    assert {i.id: i for i in result.issues} == {i.id: i for i in detected}
    assert [i.id for i in detected][0] == "b_low"        # the caller's list is not reordered


def test_the_summary_counts_each_severity():
    result = heuristic_analysis(PROFILE, [issue("a", "high"), issue("b", "low"), issue("c", "low")])
    assert result.summary == "3 data-quality issues in orders: 1 high, 0 medium, 2 low."
    assert heuristic_analysis(PROFILE, []).summary == "No data-quality issues found in orders."


def test_the_summary_says_what_is_new_and_resolved_since_the_previous_run():
    previous = heuristic_analysis(PROFILE, [issue("kept", "high"), issue("gone1", "low"), issue("gone2", "low")])
    now = heuristic_analysis(PROFILE, [issue("kept", "medium"), issue("fresh", "low")], previous=previous)
    assert now.summary.endswith(" Since the previous run: 1 new, 2 resolved.")
    # every issue resolved: the previous run is still compared with
    cleared = heuristic_analysis(PROFILE, [], previous=previous)
    assert cleared.summary == "No data-quality issues found in orders. Since the previous run: 0 new, 3 resolved."
    # without a previous run there is nothing to compare with, and no sentence about it
    assert "Since the previous run" not in heuristic_analysis(PROFILE, [issue("a", "low")]).summary


def test_completed_at_is_now_in_utc_seconds():
    before = datetime.now(timezone.utc).replace(microsecond=0)
    stamp = heuristic_analysis(PROFILE, []).completedAt
    assert stamp.endswith("Z") and "." not in stamp
    when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert before <= when <= datetime.now(timezone.utc) + timedelta(seconds=1)
