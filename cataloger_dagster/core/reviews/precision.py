"""Detectors learn their precision per database from what people dismissed.

A dismissal says the detector was wrong there.  Counted per (issue type, column
kind) over every table's review log of the database, with "kind" the column's
kind and semantic type when it was reviewed (`column_kind`), so that a detector
dismissed again and again on, say, text columns holding codes is raised less
often on such columns of every table.  Only single-column findings learn:
a finding over many columns (duplicate rows) has no one kind of column.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping, Optional

from cataloger_dagster.core.models import SEVERITIES, IssueModel, PrecisionMark, TableProfile
from cataloger_dagster.core.reviews.model import Review, column_kind, latest_reviews

DEFAULT_DISMISSALS = 3


def dismissal_counts(logs: Mapping[str, Iterable[Review]]) -> Counter:
    """{(issue type, column kind): issues dismissed} over every table's log (table -> its reviews);
    an issue counts once, by its latest verdict (one later accepted is no dismissal)."""
    counts: Counter = Counter()
    for reviews in logs.values():
        for review in latest_reviews(reviews).values():
            snap = review.issue
            if review.verdict != "dismiss" or snap is None or len(snap.affectedColumns) != 1:
                continue
            kind = snap.column_kinds.get(snap.affectedColumns[0])
            if kind and not kind.startswith("?"):
                counts[(snap.type, kind)] += 1
    return counts


def lowered(severity: str) -> Optional[str]:
    """One step down (high -> medium -> low); None below low: not raised."""
    order = list(SEVERITIES)
    at = order.index(severity) if severity in order else order.index("medium")
    return order[at + 1] if at + 1 < len(order) else None


def precision_mark(
    issue: IssueModel, profile: Optional[TableProfile], counts: Counter, threshold: int = DEFAULT_DISMISSALS
) -> Optional[PrecisionMark]:
    """The mark lowering ``issue`` when its detector was dismissed ``threshold`` times or more on
    columns like its own; None when it stands as found."""
    if threshold <= 0 or len(issue.affectedColumns) != 1:
        return None
    kind = column_kind(profile, issue.affectedColumns[0])
    times = counts.get((issue.type, kind), 0)
    if times < threshold:
        return None
    return PrecisionMark(
        dismissals=times,
        column_kind=kind,
        severity_was=issue.severity,
        note=f"raised less often: dismissed {times} times on similar columns ({kind})",
    )
