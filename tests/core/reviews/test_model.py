import pytest
from pydantic import ValidationError

from cataloger_dagster.core.reviews import REVIEW_VERDICTS, Review


def test_a_review_records_when_it_was_made_in_utc():
    review = Review(table="t", issue_id="t_missing_a", verdict="expected", reviewer="ana")
    assert review.at.endswith("+00:00")
    assert set(REVIEW_VERDICTS) == {"accept", "dismiss", "expected"}


@pytest.mark.parametrize("field, value", [("verdict", "ignore"), ("reviewer", "  "), ("issue_id", "")])
def test_a_review_refuses_an_unknown_verdict_or_a_blank_name(field, value):
    fields = {"table": "t", "issue_id": "t_missing_a", "verdict": "dismiss", "reviewer": "ana", field: value}
    with pytest.raises(ValidationError, match=field):
        Review(**fields)


def test_a_snapshot_keeps_the_issue_and_the_kind_of_each_column():
    from cataloger_dagster.core.models import ColumnProfile, Fingerprint, IssueModel, TableProfile
    from cataloger_dagster.core.reviews import snapshot_of

    profile = TableProfile.model_construct(columns=[
        ColumnProfile(name="amount", dtype="string", kind="string", count=9, nulls=1, null_fraction=0.1,
                      semantic_type="number")])
    issue = IssueModel(id="t_outliers_amount", type="outliers", severity="low", description="far values",
                       affectedColumns=["amount", "gone"], suggestedAction="look", category="quick_fixes",
                       affectedRows=3)
    snap = snapshot_of(issue, profile)
    assert (snap.type, snap.severity, snap.affectedRows) == ("outliers", "low", 3)
    assert snap.column_kinds == {"amount": "string/number", "gone": "?/-"}
