"""One review: who said what about which finding, and what that finding was then.

The snapshot of the issue is kept in the entry itself, so that the next run can
tell "the same as what was dismissed" from "worse since dismissed" without
reading the run it came from (which may be gone, or on another store)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterable, Literal, Optional

from pydantic import BaseModel, Field, field_validator

from cataloger_dagster.core.models import IssueModel, TableProfile

ReviewVerdict = Literal["accept", "dismiss", "expected"]
REVIEW_VERDICTS: tuple[str, ...] = ("accept", "dismiss", "expected")
# a person's verdict on the classifier's class of a column (core/sensitive/teaching.py)
ClassVerdict = Literal["personal", "not_personal"]
CLASS_VERDICTS: tuple[str, ...] = ("personal", "not_personal")
CLASS_REVIEW_PREFIX = "data-class:"  # the issue id of a class review: data-class:<class>:<column>


class IssueSnapshot(BaseModel):
    """What the reviewed issue looked like when it was reviewed."""

    type: str
    severity: str
    affectedColumns: list[str] = Field(default_factory=list)
    affectedRows: Optional[int] = None
    source: str = "detector"
    description: str = ""
    # column name -> "kind/semantic type" (e.g. "numeric/amount"): what detector
    # precision is learned over (similar columns of other tables)
    column_kinds: dict[str, str] = Field(default_factory=dict)


class ClassSnapshot(BaseModel):
    """The column's class as the classifier saw it when a person reviewed it."""

    column: str
    data_class: str  # a key of core/sensitive/classes.py CLASSES
    kind: str = "?"  # the column's kind ("string", "integer", ...)
    named: bool = False  # the column's name points at the class (core/sensitive/signals.py)
    found: bool = False  # the classifier had found it (a "personal" verdict on a miss adds it)
    share: Optional[float] = None  # of the sampled values, the share that validated


def class_review_id(data_class: str, column: str) -> str:
    """One id per (class, column): the class key holds no ':', so the column after it may."""
    return f"{CLASS_REVIEW_PREFIX}{data_class}:{column}"


class Review(BaseModel):
    """One entry of a table's review log; entries are never changed, only added."""

    table: str
    issue_id: str
    verdict: ReviewVerdict | ClassVerdict
    note: str = ""
    reviewer: str
    at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="microseconds"))
    run: Optional[str] = None  # timestamp of the run whose finding was reviewed
    issue: Optional[IssueSnapshot] = None
    data_class: Optional[ClassSnapshot] = None  # set on a review of a column's class instead of a finding
    via: Optional[str] = None  # how it was recorded: "cli", "dagster run <id>", ...

    @field_validator("issue_id", "reviewer")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


def column_kind(profile: Optional[TableProfile], column: str) -> str:
    """ "kind/semantic type" of a column ("string/email", "float/-"): what makes two
    columns of different tables "similar" for a detector's learned precision."""
    for cp in profile.columns if profile else []:
        if cp.name == column:
            return f"{cp.kind}/{cp.semantic_type or '-'}"
    return "?/-"


def snapshot_of(issue: IssueModel, profile: Optional[TableProfile] = None) -> IssueSnapshot:
    """The issue as a review records it, with the kinds of its columns from ``profile``."""
    columns = list(issue.affectedColumns)
    return IssueSnapshot(
        type=issue.type,
        severity=issue.severity,
        affectedColumns=columns,
        affectedRows=issue.affectedRows,
        source=issue.source,
        description=issue.description,
        column_kinds={c: column_kind(profile, c) for c in columns[:50]},
    )


def latest_reviews(reviews: Iterable[Review]) -> dict[str, Review]:
    """Each reviewed issue's latest review (the log is oldest first: the later entry wins)."""
    latest: dict[str, Review] = {}
    for review in reviews:
        latest[review.issue_id] = review
    return latest
