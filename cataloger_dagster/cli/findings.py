"""Each finding as `cataloger run --json` gives it: what was found, the numbers behind it, what
its investigation concluded and what people said of it.

The evidence is a summary, not the stored blobs: the numbers (counts, shares, thresholds) at
the top of the finding's details and of its investigation's evidence, one level of nesting
flattened (``psi.value``), at most `EVIDENCE_NUMBERS` of each.  Text is left out, and so is a
mapping of numbers alone (counts by value, whose keys may be the table's values), so no value of
the table (an example, a spelling, a sentinel) is in it; the description and the reason, the
sentences the catalog page shows, say what the values are where it matters.
"""

from __future__ import annotations

from typing import Any, Iterable, Literal, Optional

from pydantic import BaseModel, Field

from cataloger_dagster.core.models import CodeInvestigation, IssueModel, ReviewMark
from cataloger_dagster.core.values import finite_float

EVIDENCE_NUMBERS = 8  # numbers kept from each source of evidence
ERROR_CHARS = 200  # of a failed check's error line

# the person's verdict (core/reviews) as the state of the finding
ReviewState = Literal["none", "accepted", "dismissed", "expected"]
REVIEW_STATES: dict[str, ReviewState] = {"accept": "accepted", "dismiss": "dismissed", "expected": "expected"}
Verdict = Literal["confirmed", "refuted", "inconclusive", "error", "no_verdict"]


class Evidence(BaseModel):
    finding: dict[str, float | int | bool] = {}  # the detector's (or history's) numbers
    investigation: dict[str, float | int | bool] = {}  # the numbers its check's code printed


class ReviewSummary(BaseModel):
    """The latest review of the finding: `core.models.ReviewMark`, without its row bookkeeping."""

    # dismissed | worse_since_dismissed | expected | changed_since_expected | accepted
    mark: str
    reviewer: str
    at: str
    note: str = ""
    open_since: Optional[str] = None


class IssueSummary(BaseModel):
    id: str
    type: str
    severity: str  # "high" | "medium" | "low"
    category: str  # "quick_fixes" | "smart_fixes"
    affectedColumns: list[str]
    affectedRows: Optional[int] = None
    description: str = ""  # one sentence, as the catalog page says it
    source: str = "detector"  # "detector", "history" or the agent that raised it
    evidence: Evidence = Field(default_factory=Evidence)
    # the investigation's: None when the finding was not investigated
    verdict: Optional[Verdict] = None
    verdict_reason: Optional[str] = None
    review: ReviewState = "none"
    review_mark: Optional[ReviewSummary] = None


def _numbers(data: Any) -> dict[str, float | int | bool]:
    if not isinstance(data, dict):
        return {}
    out: dict[str, float | int | bool] = {}
    for key, value in data.items():
        if isinstance(value, dict) and all(finite_float(v) is not None for v in value.values()):
            continue  # counts by value ({'shipped ': 3}): its keys may be the table's values
        pairs = value.items() if isinstance(value, dict) else [(None, value)]
        for sub, leaf in pairs:
            if len(out) >= EVIDENCE_NUMBERS:
                return out
            name = f"{key}.{sub}" if sub is not None else str(key)
            if isinstance(leaf, bool):
                out[name] = leaf
            elif (number := finite_float(leaf)) is not None:
                out[name] = leaf if isinstance(leaf, int) else number
    return out


def _verdict(inv: CodeInvestigation) -> tuple[Verdict, Optional[str]]:
    if not inv.success:
        lines = [line.strip() for line in (inv.error or "").splitlines() if line.strip()]
        said = f": {lines[-1][:ERROR_CHARS]}" if lines else ""
        return "error", inv.reason or f"its check's code failed{said}"
    return inv.verdict or "no_verdict", inv.reason


def _review(mark: Optional[ReviewMark]) -> tuple[ReviewState, Optional[ReviewSummary]]:
    if mark is None:
        return "none", None
    return REVIEW_STATES.get(mark.verdict, "none"), ReviewSummary(
        mark=mark.state, reviewer=mark.reviewer, at=mark.at, note=mark.note, open_since=mark.open_since
    )


def summarize(issue: IssueModel, investigation: Optional[CodeInvestigation] = None) -> IssueSummary:
    """The finding as `--json` gives it, with its investigation (if it had one)."""
    verdict, reason = _verdict(investigation) if investigation is not None else (None, None)
    review, mark = _review(issue.review)
    return IssueSummary(
        id=issue.id,
        type=issue.type,
        severity=issue.severity,
        category=issue.category,
        affectedColumns=issue.affectedColumns,
        affectedRows=issue.affectedRows,
        description=issue.description,
        source=issue.source,
        evidence=Evidence(
            finding=_numbers({k: v for k, v in issue.details.items() if k != "chart"}),
            investigation=_numbers(investigation.evidence) if investigation is not None else {},
        ),
        verdict=verdict,
        verdict_reason=reason,
        review=review,
        review_mark=mark,
    )


def summarize_all(issues: Iterable[IssueModel], investigations: Iterable[CodeInvestigation]) -> list[IssueSummary]:
    by_issue = {inv.issue_id: inv for inv in investigations if inv.issue_id}  # the last one of each
    return [summarize(issue, by_issue.get(issue.id)) for issue in issues]
