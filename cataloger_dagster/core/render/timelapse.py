"""`timelapse.html`: every run of one table, with trend charts, the review history and links
to each run's pages and script.  It sits in the table's folder, beside the run folders, so
its links are relative (``<timestamp>/catalog.html``) and work on a disk or an object store."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import quote

from cataloger_dagster.core.history.timelapse import TimelapseRow
from cataloger_dagster.core.layout import CATALOG_PAGE, INDEX_FILE, RECENT_SUMMARY, SCRIPT
from cataloger_dagster.core.render.charts import svg_trend
from cataloger_dagster.core.render.formats import generation_time
from cataloger_dagster.core.render.pages import template_environment
from cataloger_dagster.core.reviews.model import Review
from cataloger_dagster.core.reviews.model import latest_reviews


# (title, series, percent, unit): what a reader of the data follows, then (in the run details)
# what the pipeline spent on each run
READER_TRENDS = ("Rows", "Issues", "Health", "Pass rate")


def _charts(rows: list[TimelapseRow]) -> list[tuple[str, object]]:
    labels = [r.run.timestamp[:19].replace("T", " ") for r in rows]
    runs = [r.run for r in rows]
    trends: list[tuple[str, dict[str, list[float | None]], bool, str]] = [
        ("Rows", {"rows": [r.rows for r in runs]}, False, "rows"),
        (
            "Issues",
            {
                "open": [r.open for r in rows],
                "dismissed": [r.dismissed for r in rows],
                "refuted": [r.run.refuted for r in rows],
            },
            False,
            "issues",
        ),
        ("Health", {"health": [r.health for r in runs]}, False, "of 100"),
        ("Pass rate", {"pass rate": [r.pass_rate for r in runs]}, True, ""),
        ("Sandbox cells", {"cells": [r.cells for r in runs]}, False, "cells"),
        ("Tokens", {"tokens": [r.tokens for r in runs]}, False, "tokens"),
    ]
    return [
        (title, svg_trend(series, labels, title=title, percent=percent, unit=unit))
        for title, series, percent, unit in trends
    ]


def render_timelapse(
    *, database: str, table: str, rows: list[TimelapseRow], reviews: list[Review], now: datetime | None = None
) -> str:
    """The page; ``rows`` oldest first (shown newest first), ``reviews`` the table's log; ``now``
    the page's generation time, which its times are said relative to."""
    now = generation_time(now)
    links = []
    for row in reversed(rows):
        folder = quote(row.run.timestamp, safe="")
        links.append(
            {
                "catalog": f"{folder}/{CATALOG_PAGE}",
                "summary": f"{folder}/{RECENT_SUMMARY}",
                "script": f"{folder}/{SCRIPT}",
                "folder": f"{folder}/",
            }
        )
    charts = _charts(rows)
    context = {
        "database": database,
        "table": table,
        "rows": list(reversed(rows)),
        "links": links,
        "charts": [c for c in charts if c[0] in READER_TRENDS],
        "engineering_charts": [c for c in charts if c[0] not in READER_TRENDS],
        "reviews": list(reversed(reviews)),
        "current": latest_reviews(reviews),
        "index_href": f"../{INDEX_FILE}",
        "generated_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "now": now,
    }
    return template_environment().get_template("pages/timelapse.html.j2").render(context)
