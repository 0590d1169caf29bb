"""core/reviews/memory.py: this run's issues against the table's reviews.  Dismissed within the
tolerance: set aside; beyond: back, "worse since dismissed" with both figures; expected: a
baseline set aside until it changes; accepted: kept and marked with how long it has been open;
the latest verdict wins; a rename is followed; the agent's answer is remembered again."""

from collections import Counter

import pytest

from cataloger_dagster.core.issues.analysis import heuristic_analysis
from cataloger_dagster.core.models import ColumnProfile, Fingerprint, IssueModel, TableProfile
from cataloger_dagster.core.reviews import Review, snapshot_of
from cataloger_dagster.core.reviews.memory import ReviewMemory, opened_by, remember, review_with_memory


def col(name, kind="string", semantic=None):
    return ColumnProfile(name=name, dtype=kind, kind=kind, count=90, nulls=10, null_fraction=0.1,
                         semantic_type=semantic)


PROFILE = TableProfile(database="shop", table="t", row_count=100, column_count=3,
                       columns=[col("a"), col("b"), col("c", "float")], sample_rows=[],
                       fingerprint=Fingerprint(schema_hash="h", row_count=100, value="v"))


def issue(type_="missing_values", column="a", rows=10, severity="low", columns=None):
    return IssueModel(id=f"t_{type_}_{column}", type=type_, severity=severity, description=f"{type_} in {column}",
                      affectedColumns=columns or [column], suggestedAction="look", category="quick_fixes",
                      affectedRows=rows)


def review(found: IssueModel, verdict: str, at: str = "2026-01-02T00:00:00+00:00", note: str = "fine", **kw):
    return Review(table="t", issue_id=found.id, verdict=verdict, note=note, reviewer="ana", at=at,
                  issue=snapshot_of(found, PROFILE), **kw)


def test_no_review_raises_everything_unmarked():
    found = [issue(), issue(column="b")]
    out = remember(found, PROFILE, ReviewMemory())
    assert out.raised == found and not out.reviewed and not out.quieted


@pytest.mark.parametrize("rows_now, state", [(10, "dismissed"), (15, "dismissed"), (16, "worse_since_dismissed"),
                                             (2, "dismissed")])
def test_a_dismissed_issue_stays_quiet_within_the_tolerance_and_comes_back_beyond(rows_now, state):
    memory = ReviewMemory(reviews=[review(issue(rows=10), "dismiss")], tolerance=0.5)
    out = remember([issue(rows=rows_now)], PROFILE, memory)
    everything = out.raised + out.reviewed
    assert [i.review.state for i in everything] == [state]
    mark = everything[0].review
    assert (mark.rows_then, mark.rows_now, mark.reviewer, mark.note) == (10, rows_now, "ana", "fine")
    assert (everything[0] in out.raised) == (state == "worse_since_dismissed")


def test_the_margin_is_configurable():
    memory = ReviewMemory(reviews=[review(issue(rows=10), "dismiss")], tolerance=0.1)
    assert remember([issue(rows=12)], PROFILE, memory).raised[0].review.state == "worse_since_dismissed"


def test_a_new_column_brings_a_dismissed_issue_back_whatever_the_rows():
    before = issue("duplicate_rows", column=None, columns=["a", "b"], rows=10)
    now = issue("duplicate_rows", column=None, columns=["a", "b", "c"], rows=10)
    out = remember([now], PROFILE, ReviewMemory(reviews=[review(before, "dismiss")]))
    assert out.raised[0].review.state == "worse_since_dismissed" and out.raised[0].review.new_columns == ["c"]


@pytest.mark.parametrize("rows_now, state", [(10, "expected"), (14, "expected"), (40, "changed_since_expected"),
                                             (3, "changed_since_expected")])
def test_expected_is_a_baseline_and_a_change_either_way_is_an_issue(rows_now, state):
    out = remember([issue(rows=rows_now)], PROFILE, ReviewMemory(reviews=[review(issue(rows=10), "expected")]))
    everything = out.raised + out.reviewed
    assert everything[0].review.state == state
    assert (everything[0] in out.reviewed) == (state == "expected")


def test_an_accepted_issue_is_raised_and_open_since_its_first_accept_or_what_the_last_run_said():
    first = review(issue(), "accept", at="2026-01-05T00:00:00+00:00", run="2026-01-04T10:00:00.000000Z")
    again = review(issue(), "accept", at="2026-02-01T00:00:00+00:00")
    out = remember([issue()], PROFILE, ReviewMemory(reviews=[first, again]))
    assert out.raised[0].review.state == "accepted"
    assert out.raised[0].review.open_since == "2026-01-04T10:00:00.000000Z"
    assert out.raised[0].review.at == again.at            # the latest verdict is the one shown
    # the previous run's issues.json remembers an earlier start (first seen before anyone accepted)
    opened = opened_by(heuristic_analysis(PROFILE, [out.raised[0].model_copy(update={
        "review": out.raised[0].review.model_copy(update={"open_since": "2025-12-01T00:00:00.000000Z"})})]))
    later = remember([issue()], PROFILE, ReviewMemory(reviews=[first, again], opened=opened))
    assert later.raised[0].review.open_since == "2025-12-01T00:00:00.000000Z"


def test_the_latest_verdict_of_an_issue_wins():
    log = [review(issue(), "dismiss", at="2026-01-01T00:00:00+00:00"),
           review(issue(), "accept", at="2026-01-03T00:00:00+00:00")]
    assert remember([issue()], PROFILE, ReviewMemory(reviews=log)).raised[0].review.state == "accepted"
    log.append(review(issue(), "dismiss", at="2026-01-04T00:00:00+00:00"))
    assert remember([issue()], PROFILE, ReviewMemory(reviews=log)).reviewed[0].review.state == "dismissed"


def test_a_review_follows_its_issue_through_a_column_rename():
    old = issue(column="a")
    renamed = issue(column="a2")
    memory = ReviewMemory(reviews=[review(old, "dismiss")], renames={"a": "a2"})
    out = remember([renamed], PROFILE, memory)
    assert out.reviewed[0].id == "t_missing_values_a2"
    mark = out.reviewed[0].review
    assert (mark.reviewed_id, mark.renamed, mark.new_columns) == ("t_missing_values_a", {"a": "a2"}, [])
    # without the rename, the issue under its new name is a new finding
    assert remember([renamed], PROFILE, ReviewMemory(reviews=[review(old, "dismiss")])).raised[0].review is None


def test_learned_precision_lowers_a_finding_or_stops_raising_a_low_one():
    kinds = Counter({("missing_values", "string/-"): 4})
    memory = ReviewMemory(dismissals=kinds, precision_threshold=3)
    out = remember([issue(severity="high"), issue(column="b", severity="low"), issue(column="c", severity="high")],
                   PROFILE, memory)
    assert [(i.id, i.severity) for i in out.raised] == [("t_missing_values_a", "medium"),
                                                        ("t_missing_values_c", "high")]
    assert out.raised[0].precision.note == "raised less often: dismissed 4 times on similar columns (string/-)"
    assert out.raised[0].precision.severity_was == "high"
    assert [i.id for i in out.quieted] == ["t_missing_values_b"]
    assert remember([issue(severity="high")], PROFILE, ReviewMemory(dismissals=kinds, precision_threshold=5)
                    ).raised[0].precision is None


def test_a_persons_verdict_on_the_issue_outranks_learned_precision():
    memory = ReviewMemory(reviews=[review(issue(severity="high"), "accept")],
                          dismissals=Counter({("missing_values", "string/-"): 9}))
    kept = remember([issue(severity="high")], PROFILE, memory).raised[0]
    assert (kept.severity, kept.precision, kept.review.state) == ("high", None, "accepted")


def test_remembering_twice_is_remembering_once():
    memory = ReviewMemory(reviews=[review(issue(column="b", rows=10), "dismiss")],
                          dismissals=Counter({("missing_values", "string/-"): 3}))
    once = remember([issue(severity="high"), issue(column="b", rows=30)], PROFILE, memory)
    twice = remember(once.raised, PROFILE, memory)
    assert twice.raised == once.raised and twice.raised[0].severity == "medium"


def test_an_agents_answer_is_remembered_again_and_the_summary_says_what_reviews_did():
    dismissed = issue(column="b", rows=10)
    memory = ReviewMemory(reviews=[review(dismissed, "dismiss"), review(issue(), "accept")])
    seen = []

    def agent(raised):
        seen.append([i.id for i in raised])
        # a model that re-adds what a person dismissed
        return heuristic_analysis(PROFILE, [*raised, dismissed])

    result = review_with_memory(agent, [issue(), dismissed], PROFILE, memory)
    assert seen == [["t_missing_values_a"]]
    assert [i.id for i in result.issues] == ["t_missing_values_a"]
    assert [i.id for i in result.reviewed] == ["t_missing_values_b"]
    assert "1 dismissed finding(s) not raised again" in result.summary
    assert "1 accepted and still open" in result.summary


def test_the_prompt_sees_the_log_as_data():
    note = "ok'); import os; os.system('x') #"
    shown = ReviewMemory(reviews=[review(issue(), "dismiss", note=note)]).for_prompt()
    assert shown == [{"issue_id": "t_missing_values_a", "verdict": "dismiss", "note": note, "reviewer": "ana",
                      "at": "2026-01-02T00:00:00+00:00",
                      "issue": {"type": "missing_values", "severity": "low", "affectedColumns": ["a"],
                                "affectedRows": 10}}]
