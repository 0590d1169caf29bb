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
