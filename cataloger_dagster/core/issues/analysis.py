"""The heuristic review of detected issues: ordered by severity, with a summary that says
what changed since the previous run.  Every agent's fallback for the issues stage."""

from __future__ import annotations

from datetime import datetime, timezone

from cataloger_dagster.core.models import SEVERITIES, AnalysisResultModel, IssueModel, TableProfile, severity_counts

_SEVERITY_ORDER = {s: n for n, s in enumerate(SEVERITIES)}


def heuristic_analysis(
    profile: TableProfile, detected: list[IssueModel], *, previous: AnalysisResultModel | None = None
) -> AnalysisResultModel:
    issues = sorted(detected, key=lambda i: (_SEVERITY_ORDER[i.severity], i.id))
    counts = severity_counts(i.severity for i in issues)
    if issues:
        summary = (
            f"{len(issues)} data-quality issues in {profile.table}: "
            f"{counts['high']} high, {counts['medium']} medium, {counts['low']} low."
        )
    else:
        summary = f"No data-quality issues found in {profile.table}."
    if previous is not None:
        before = {i.id for i in previous.issues}
        now = {i.id for i in issues}
        summary += f" Since the previous run: {len(now - before)} new, {len(before - now)} resolved."
    return AnalysisResultModel(
        issues=issues,
        summary=summary,
        completedAt=datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
    )
