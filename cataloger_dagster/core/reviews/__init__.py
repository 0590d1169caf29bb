"""Reviews: a person's verdict on a finding (accept, dismiss, expected), kept
append-only beside the table's runs and remembered by the next run."""

from cataloger_dagster.core.reviews.model import (
    REVIEW_VERDICTS,
    IssueSnapshot,
    Review,
    ReviewVerdict,
    column_kind,
    snapshot_of,
)

__all__ = ["REVIEW_VERDICTS", "IssueSnapshot", "Review", "ReviewVerdict", "column_kind", "snapshot_of"]
