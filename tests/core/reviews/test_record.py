"""core/reviews/record.py: recording a review against the table's latest run, on a real store
holding real runs (the issue stages materialized by Dagster on the shop database)."""

import getpass

import pytest

from cataloger_dagster.core.layout import table_prefix
from cataloger_dagster.core.reviews.model import latest_reviews
from cataloger_dagster.core.reviews.record import (
    NOTE_LIMIT, ReviewError, default_reviewer, latest_issues, record_review,
)
from cataloger_dagster.resources.store import LocalStore
from reviewed import issues_run
from shop import make_shop

CATALOG = "shop.duckdb"   # the catalog of shop.duckdb: its file's name


@pytest.fixture(scope="module")
def shop_store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("record")
    db = make_shop(tmp / "shop.duckdb")
    ids = issues_run(db, str(tmp / "store"), "events")
    return LocalStore(root=str(tmp / "store")), ids


def test_a_review_lands_in_the_log_with_a_snapshot_of_the_issue(shop_store):
    store, ids = shop_store
    timestamp, issues, profile = latest_issues(store, CATALOG, "events")
    target = next(i for i in issues.issues if i.affectedRows)
    note = "planted by the test: $(id) `id` 'q' \"qq\"\n<script>alert(1)</script>"
    review, uri = record_review(store, CATALOG, "events", target.id, "dismiss", note, "ana", via="test")
    assert uri.startswith(str(store.root)) and "/shop.duckdb/events/reviews/" in uri
    logged = store.read_reviews(table_prefix(CATALOG, "events"))[-1]
    assert logged == review
    assert (logged.note, logged.reviewer, logged.run, logged.via) == (note, "ana", timestamp, "test")
    assert logged.issue.type == target.type and logged.issue.affectedRows == target.affectedRows
    assert set(logged.issue.column_kinds) == set(target.affectedColumns)
    assert all(not kind.startswith("?") for kind in logged.issue.column_kinds.values())  # kinds from the profile


def test_an_unknown_issue_names_the_table_and_lists_the_known_ids(shop_store):
    store, ids = shop_store
    with pytest.raises(ReviewError) as caught:
        record_review(store, CATALOG, "events", "events_no_such_issue", "accept")
    message = str(caught.value)
    assert "'events'" in message and "'events_no_such_issue'" in message
    assert all(repr(i) in message for i in ids)


def test_a_table_without_a_run_is_a_clear_error(shop_store):
    store, _ = shop_store
    with pytest.raises(ReviewError, match=r"table \"it's\" of database 'shop.duckdb' has no run .*cataloger run --table"):
        record_review(store, CATALOG, "it's", "x", "accept")


@pytest.mark.parametrize("verdict, note, reviewer, match", [
    ("ignore", "", None, "verdict 'ignore' is not one of accept, dismiss, expected"),
    ("accept", "n" * (NOTE_LIMIT + 1), None, f"keep it to {NOTE_LIMIT:,}"),
    ("accept", "", "r" * 201, "reviewer name"),
])
def test_bad_input_is_refused_before_anything_is_written(shop_store, verdict, note, reviewer, match):
    store, ids = shop_store
    before = len(store.read_reviews(table_prefix(CATALOG, "events")))
    with pytest.raises(ReviewError, match=match):
        record_review(store, CATALOG, "events", ids[0], verdict, note, reviewer)
    assert len(store.read_reviews(table_prefix(CATALOG, "events"))) == before


def test_the_reviewer_is_the_name_given_else_the_setting_else_the_os_user(shop_store):
    store, ids = shop_store
    review, _ = record_review(store, CATALOG, "events", ids[0], "expected", "", "  ")
    assert review.reviewer == getpass.getuser()
    assert default_reviewer("  lead ") == "lead" and default_reviewer(None) == getpass.getuser()


def test_the_current_verdict_is_each_issues_latest_review(shop_store):
    store, ids = shop_store
    record_review(store, CATALOG, "events", ids[1], "dismiss", "", "a")
    record_review(store, CATALOG, "events", ids[1], "accept", "on second thought", "b")
    current = latest_reviews(store.read_reviews(table_prefix(CATALOG, "events")))
    assert (current[ids[1]].verdict, current[ids[1]].reviewer) == ("accept", "b")


def test_findings_a_run_set_aside_can_be_reviewed_again():
    """Results that carry the findings set aside by earlier reviews offer them too, so a verdict can change."""
    from cataloger_dagster.core.models import AnalysisResultModel, IssueModel
    from cataloger_dagster.core.reviews.record import reviewable

    def issue(i):
        return IssueModel(id=i, type="t", severity="low", description="", affectedColumns=[], suggestedAction="",
                          category="quick_fixes")

    class WithSetAside(AnalysisResultModel):
        reviewed: list[IssueModel] = []
        quieted: list[IssueModel] = []

    result = WithSetAside(issues=[issue("a")], reviewed=[issue("b")], quieted=[issue("c")], summary="", completedAt="")
    assert [i.id for i in reviewable(result)] == ["a", "b", "c"]
    assert [i.id for i in reviewable(AnalysisResultModel(issues=[issue("a")], summary="", completedAt=""))] == ["a"]
