"""The recent_summary page: what changed in a table since its previous run, and the trend over the last runs."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from cataloger_dagster.core.history.recent_changes import RecentSummary
from cataloger_dagster.core.history.timelapse import RunSummary
from cataloger_dagster.core.render.charts import svg_trend
from cataloger_dagster.core.render.pages import template_environment

__all__ = ["render_recent_summary", "trend_charts"]


def render_recent_summary(summary: RecentSummary, *, database: str = "", links: dict[str, str] | None = None) -> str:
    """`recent_summary.html`: a complete page with no external resources."""
    links = {"Catalog page": "catalog.html", **(links or {})}
    return (
        template_environment()
        .get_template("pages/recent_summary.html.j2")
        .render(
            s=summary,
            database=database,
            links=links,
            charts=trend_charts(summary.trend),
            generated_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
    )


def trend_charts(trend: list[RunSummary]) -> list[tuple[str, Any]]:
    """(title, SVG) per number of the last runs, as the timelapse draws them; none for one run."""
    if len(trend) < 2:
        return []
    labels = [r.timestamp[:19].replace("T", " ") for r in trend]
    series: list[tuple[str, dict[str, list[float | None]], bool, str]] = [
        ("Rows", {"rows": [r.rows for r in trend]}, False, "rows"),
        (
            "Issues",
            {"standing": [len(r.issue_ids) for r in trend], "high": [r.severities.get("high", 0) for r in trend]},
            False,
            "issues",
        ),
        ("Health", {"health": [r.health for r in trend]}, False, "of 100"),
        ("Pass rate", {"pass rate": [r.pass_rate for r in trend]}, True, ""),
    ]
    return [
        (title, svg_trend(points, labels, title=title, percent=percent, unit=unit))
        for title, points, percent, unit in series
    ]
