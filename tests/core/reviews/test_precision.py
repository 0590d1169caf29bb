"""core/reviews/precision.py: dismissals counted per (issue type, column kind) over every table's
log of a database, once per issue by its latest verdict, single-column findings only."""

from cataloger_dagster.core.reviews import IssueSnapshot, Review
from cataloger_dagster.core.reviews.precision import dismissal_counts, lowered


def entry(table, issue_id, verdict, columns, kinds, type_="outliers", at="2026-01-01T00:00:00+00:00"):
    return Review(table=table, issue_id=issue_id, verdict=verdict, reviewer="ana", at=at,
                  issue=IssueSnapshot(type=type_, severity="low", affectedColumns=columns,
                                      column_kinds=dict(zip(columns, kinds))))


def test_dismissals_are_counted_per_type_and_kind_across_tables_by_latest_verdict():
    logs = {
        "orders": [entry("orders", "o1", "dismiss", ["total"], ["float/-"]),
                   entry("orders", "o2", "dismiss", ["qty"], ["integer/-"]),
                   # dismissed, then accepted: no dismissal
                   entry("orders", "o3", "dismiss", ["price"], ["float/-"]),
                   entry("orders", "o3", "accept", ["price"], ["float/-"], at="2026-01-02T00:00:00+00:00")],
        "refunds": [entry("refunds", "r1", "dismiss", ["amount"], ["float/-"]),
                    entry("refunds", "r2", "expected", ["fee"], ["float/-"]),
                    # many columns: no one kind
                    entry("refunds", "r3", "dismiss", ["a", "b"], ["float/-", "float/-"]),
                    entry("refunds", "r4", "dismiss", ["gone"], ["?/-"])],
    }
    assert dismissal_counts(logs) == {("outliers", "float/-"): 2, ("outliers", "integer/-"): 1}


def test_severity_goes_down_one_step_and_then_out():
    assert [lowered(s) for s in ("high", "medium", "low")] == ["medium", "low", None]
