"""The next run remembers what people said about a table's findings.

- dismissed: not raised again while it stays within the tolerance of what was dismissed (no new
  column, affected rows at most ``1 + tolerance`` times as many); beyond it, raised again and
  marked "worse since dismissed" with both figures;
- expected: a baseline, shown as known and counted nowhere; a change from it beyond the tolerance
  (either way: fewer rows also changes a baseline) or a new column is raised again;
- accepted: raised, marked with how long it has been open, until the detectors stop finding it.

Then the detectors' learned precision (`precision`) lowers, or stops raising, the findings no
one reviewed on this table that people dismissed on similar columns of the database.  A review
follows its issue through column renames (`renames`).  All of it is a function of this run's
issues and what the store holds, applied again after an agent's review (a model may re-add or
re-rate an issue), so both agents, issues.json, the page and the checks see one result.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from cataloger_dagster.core.layout import normalize_timestamp
from cataloger_dagster.core.models import AnalysisResultModel, IssueModel, ReviewMark, ReviewState, TableProfile
from cataloger_dagster.core.reviews.model import Review, latest_reviews
from cataloger_dagster.core.reviews.precision import DEFAULT_DISMISSALS, lowered, precision_mark

DEFAULT_TOLERANCE = 0.5
PROMPT_REVIEWS = 50  # the latest entries of the log an agent reads


@dataclass(frozen=True)
class ReviewMemory:
    """What the store says about a table before its issues are decided."""

    reviews: list[Review] = field(default_factory=list)  # this table's log, oldest first
    dismissals: Counter = field(default_factory=Counter)  # the database's, (type, kind) -> count
    renames: dict[str, str] = field(default_factory=dict)  # column when reviewed -> its name now
    opened: dict[str, str] = field(default_factory=dict)  # issue id -> open since, as last run said
    tolerance: float = DEFAULT_TOLERANCE
    precision_threshold: int = DEFAULT_DISMISSALS

    def for_prompt(self) -> list[dict]:
        """The log as an agent reads it: data (verdicts, notes, the issue as it was), never code."""
        shown = []
        for r in self.reviews[-PROMPT_REVIEWS:]:
            entry: dict[str, Any] = {
                "issue_id": r.issue_id,
                "verdict": r.verdict,
                "note": r.note,
                "reviewer": r.reviewer,
                "at": r.at,
            }
            if r.issue is not None:
                entry["issue"] = r.issue.model_dump(include={"type", "severity", "affectedColumns", "affectedRows"})
            shown.append(entry)
        return shown


@dataclass
class Remembered:
    raised: list[IssueModel] = field(default_factory=list)
    reviewed: list[IssueModel] = field(default_factory=list)  # dismissed or expected: not raised
    quieted: list[IssueModel] = field(default_factory=list)  # learned precision: not raised


def _fresh(issue: IssueModel) -> IssueModel:
    """The issue as its detector found it: marks of an earlier pass (or an earlier run) undone."""
    if issue.review is None and issue.precision is None:
        return issue
    severity = issue.precision.severity_was if issue.precision else issue.severity
    return issue.model_copy(update={"review": None, "precision": None, "severity": severity})


def _review_of(
    issue: IssueModel, latest: dict[str, Review], renames: dict[str, str]
) -> tuple[Optional[Review], dict[str, str]]:
    """The latest review of ``issue``: under its id, or under the id it had before a column rename."""
    if issue.id in latest:
        return latest[issue.id], {}
    found: Optional[Review] = None
    for review in latest.values():
        snap = review.issue
        if snap is None or snap.type != issue.type or not snap.affectedColumns:
            continue
        now = [renames.get(c, c) for c in snap.affectedColumns]
        if now != snap.affectedColumns and now == list(issue.affectedColumns):
            if found is None or review.at > found.at:
                found = review
    if found is None:
        return None, {}
    assert found.issue is not None
    return found, {c: renames[c] for c in found.issue.affectedColumns if c in renames}


def _changed(
    issue: IssueModel, review: Review, renamed: dict[str, str], tolerance: float, both_ways: bool
) -> tuple[bool, list[str]]:
    """(beyond the tolerance, columns affected now that were not then)."""
    snap = review.issue
    if snap is None:
        return False, []
    then_columns = {renamed.get(c, c) for c in snap.affectedColumns}
    new_columns = [c for c in issue.affectedColumns if c not in then_columns]
    then, now = snap.affectedRows, issue.affectedRows
    more = then is not None and now is not None and now > then * (1.0 + tolerance)
    fewer = both_ways and then is not None and now is not None and now * (1.0 + tolerance) < then
    return bool(new_columns) or more or fewer, new_columns


def _open_since(issue_id: str, review: Review, reviews: list[Review], opened: dict[str, str]) -> str:
    """When an accepted issue was first known: the earliest of what the last run recorded, the run
    its first accept was made on, and that accept."""
    moments = [opened[issue_id]] if issue_id in opened else []
    for r in reviews:
        if r.issue_id == review.issue_id and r.verdict == "accept":
            moments += [m for m in (r.run, r.at) if m]
    stamps = []
    for moment in moments:
        try:
            stamps.append(normalize_timestamp(moment))
        except ValueError:
            continue  # a hand-edited entry: the others still say when
    return min(stamps) if stamps else normalize_timestamp(review.at)


def _marked(issue: IssueModel, review: Review, renamed: dict[str, str], memory: ReviewMemory) -> ReviewMark:
    dismissed = review.verdict == "dismiss"
    beyond, new_columns = _changed(issue, review, renamed, memory.tolerance, both_ways=not dismissed)
    state: ReviewState
    if review.verdict == "accept":
        state = "accepted"
    elif dismissed:
        state = "worse_since_dismissed" if beyond else "dismissed"
    else:
        state = "changed_since_expected" if beyond else "expected"
    return ReviewMark(
        state=state,
        verdict=review.verdict,
        reviewer=review.reviewer,
        at=review.at,
        note=review.note,
        reviewed_id=review.issue_id,
        rows_then=review.issue.affectedRows if review.issue else None,
        rows_now=issue.affectedRows,
        new_columns=new_columns,
        renamed=renamed,
        open_since=_open_since(issue.id, review, memory.reviews, memory.opened) if state == "accepted" else None,
    )


def remember(issues: list[IssueModel], profile: Optional[TableProfile], memory: Optional[ReviewMemory]) -> Remembered:
    """This run's ``issues`` sorted into raised, reviewed (set aside) and quieted, each marked."""
    memory = memory or ReviewMemory()
    latest = latest_reviews(memory.reviews)
    out = Remembered()
    for issue in map(_fresh, issues):
        review, renamed = _review_of(issue, latest, memory.renames)
        if review is not None:
            mark = _marked(issue, review, renamed, memory)
            kept = issue.model_copy(update={"review": mark})
            (out.reviewed if mark.state in ("dismissed", "expected") else out.raised).append(kept)
            continue
        # a person's verdict on this very issue outranks what similar columns taught the detector
        learned = precision_mark(issue, profile, memory.dismissals, memory.precision_threshold)
        if learned is None:
            out.raised.append(issue)
            continue
        severity = lowered(issue.severity)
        if severity is None:
            out.quieted.append(issue.model_copy(update={"precision": learned}))
        else:
            out.raised.append(issue.model_copy(update={"precision": learned, "severity": severity}))
    return out


def _sentence(reviewed: list[IssueModel], quieted: list[IssueModel], raised: list[IssueModel]) -> str:
    states = Counter(i.review.state for i in reviewed + raised if i.review is not None)
    parts = []
    if states["dismissed"]:
        parts.append(f"{states['dismissed']} dismissed finding(s) not raised again")
    if states["expected"]:
        parts.append(f"{states['expected']} expected finding(s) shown as known")
    if states["worse_since_dismissed"]:
        parts.append(f"{states['worse_since_dismissed']} worse since dismissed")
    if states["changed_since_expected"]:
        parts.append(f"{states['changed_since_expected']} changed since marked expected")
    if states["accepted"]:
        parts.append(f"{states['accepted']} accepted and still open")
    lowered_count = sum(1 for i in raised if i.precision is not None)
    if lowered_count or quieted:
        parts.append(f"{lowered_count + len(quieted)} raised less often (dismissed on similar columns)")
    return f" Reviews: {'; '.join(parts)}." if parts else ""


def review_with_memory(
    review: Callable[[list[IssueModel]], AnalysisResultModel],
    detected: list[IssueModel],
    profile: Optional[TableProfile],
    memory: Optional[ReviewMemory],
) -> AnalysisResultModel:
    """``review`` (an agent's) over the issues the memory still raises, and the memory applied again
    to its answer, which a model may have re-rated or added to."""
    first = remember(detected, profile, memory)
    result = review(first.raised)
    again = remember(result.issues, profile, memory)
    seen = {i.id for i in again.raised}
    reviewed = _unique([*first.reviewed, *again.reviewed], seen)
    quieted = _unique([*first.quieted, *again.quieted], seen | {i.id for i in reviewed})
    return result.model_copy(
        update={
            "issues": again.raised,
            "reviewed": reviewed,
            "quieted": quieted,
            "summary": result.summary + _sentence(reviewed, quieted, again.raised),
        }
    )


def _unique(issues: list[IssueModel], taken: set[str]) -> list[IssueModel]:
    out, seen = [], set(taken)
    for issue in issues:
        if issue.id not in seen:
            seen.add(issue.id)
            out.append(issue)
    return out


def opened_by(previous: Optional[AnalysisResultModel]) -> dict[str, str]:
    """{issue id: open since} of the accepted issues of the previous run."""
    if previous is None:
        return {}
    return {i.id: i.review.open_since for i in previous.issues if i.review is not None and i.review.open_since}
