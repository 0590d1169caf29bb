"""A table's health: one score from 0 to 100 from its standing issues, and the band it is shown in."""

from __future__ import annotations

from cataloger_dagster.core.models import AnalysisResultModel, TableProfile

__all__ = ["SEVERITY_PENALTY", "health_band", "health_score"]

# Penalty (in health points, out of 100) of one issue touching every row.
SEVERITY_PENALTY = {"high": 30.0, "medium": 12.0, "low": 4.0}


def health_score(profile: TableProfile, issues: AnalysisResultModel, pass_rate: float | None = None) -> float:
    """A table's health from 0 (unusable) to 100 (no known issue).

    Each issue costs a penalty by severity (high 30, medium 12, low 4 points)
    scaled by the share of rows it touches: ``penalty × (0.25 + 0.75 × f)``
    with ``f = affectedRows / row_count`` capped at 1 (``f = 1`` when the
    issue gives no row count or the table is empty, so an unmeasured issue
    is never cheaper than a measured one).  Penalties compound rather than
    add, ``score = 100 × Π(1 − penalty_i / 100)``, so many small issues wear
    the score down without one table of trivia hitting zero.  When the
    investigations' pass rate is known, the score is multiplied by
    ``0.85 + 0.15 × pass_rate``: issues whose code never reached a verdict
    leave the table's state less certain.  Rounded to one decimal.
    """
    score = 1.0
    rows = profile.row_count
    for issue in issues.issues:
        if issue.affectedRows is not None and rows > 0:
            share = min(max(issue.affectedRows / rows, 0.0), 1.0)
        else:
            share = 1.0
        penalty = SEVERITY_PENALTY.get(issue.severity, SEVERITY_PENALTY["medium"])
        score *= 1.0 - penalty * (0.25 + 0.75 * share) / 100.0
    if pass_rate is not None:
        score *= 0.85 + 0.15 * min(max(pass_rate, 0.0), 1.0)
    return round(min(max(score * 100.0, 0.0), 100.0), 1)


def health_band(score: float | None) -> str:
    """'good' (≥ 85), 'fair' (≥ 60) or 'poor': the colour of a health score."""
    if score is None:
        return "unknown"
    if score >= 85:
        return "good"
    if score >= 60:
        return "fair"
    return "poor"
