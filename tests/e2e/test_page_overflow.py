"""Hostile and extreme values on the pages, in a real browser at a phone's and a desktop's width:
nothing overflows its box, identifiers keep their digits, dates are shown whole.

The pages are rendered from models (no database): 100-character values without a space (as a
table name, a column name, values and an issue's words), 1e300, -0.0, NaN and infinities, the
dates 0001-01-01 and 9999-12-31, and a histogram one outlier would flatten.  In Debian's
headless chromium through Playwright (the fixtures of test_browser.py); skipped where it is
absent, failing under CATALOGER_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from cataloger_dagster.core.models import (
    AnalysisResultModel,
    CodeInvestigation,
    ColumnProfile,
    Fingerprint,
    Histogram,
    IssueModel,
    LengthStats,
    TableProfile,
    ValueCount,
)
from cataloger_dagster.core.render.pages import (
    IndexColumn,
    IndexEntry,
    IndexFinding,
    render_catalog_page,
    render_index,
)
from cataloger_dagster.core.understanding import heuristic_understanding
from tests.e2e.test_browser import browser, chromium  # noqa: F401  (fixtures: the browser, or a skip)

pytestmark = [pytest.mark.chromium]

LONG = "x" * 100                   # a value no line break can fall in
LONG_NAME = "c" + "y" * 99
NOW = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
WIDTHS = {"phone": 375, "desktop": 1280}
FAR_DATES = ["0001-01-01", "0001-01-01", "2023-06-15", "9999-12-31", "9999-12-31"]
FAR_TIMES = ["0001-01-01 00:00:00", "2023-01-15 13:45:12.123456", "2023-06-15 08:00:00",
             "9999-12-31 23:59:59.999999", "9999-12-31 23:59:59.999999"]


def _col(name: str, kind: str, **stats) -> ColumnProfile:
    stats.setdefault("count", 1000)
    return ColumnProfile(name=name, dtype=stats.pop("dtype", kind), kind=kind, nulls=0, null_fraction=0.0, **stats)


def hostile_profile() -> TableProfile:
    columns = [
        _col("order_id", "integer", min=1, max=2118, mean=1059.5, distinct=1000,
             quantiles={"p05": 106, "p25": 530, "p50": 1059, "p75": 1589, "p95": 2012},
             histogram=Histogram(edges=[1, 1000, 2118], counts=[999, 1])),
        _col("amount", "float", dtype="float64", min=-0.0, max=1e300, mean=1e297, std=float("inf"),
             nan_count=3, quantiles={"p05": -0.0, "p25": 1.5, "p50": 3.14159265, "p75": 1e12, "p95": 1e300},
             histogram=Histogram(edges=[i * 5e298 for i in range(21)], counts=[998] + [0] * 18 + [1])),
        _col("born_on", "date", min="0001-01-01", max="9999-12-31", quantiles=dict(zip(
            ["p05", "p25", "p50", "p75", "p95"], FAR_DATES)),
             histogram=Histogram(edges=["0001-01-01", "5000-01-01", "9999-12-31"], counts=[1, 999])),
        _col("seen_at", "timestamp", min=FAR_TIMES[0], max=FAR_TIMES[-1],
             quantiles=dict(zip(["p05", "p25", "p50", "p75", "p95"], FAR_TIMES))),
        _col(LONG_NAME, "string", dtype="string", min=LONG, max=LONG + "z", distinct=2,
             length=LengthStats(min=100, max=101, mean=100.5),
             top_values=[ValueCount(value=LONG, count=900), ValueCount(value=" " + LONG, count=100)]),
    ]
    row = {"order_id": 2118, "amount": 1e300, "born_on": "9999-12-31", "seen_at": FAR_TIMES[-1], LONG_NAME: LONG}
    return TableProfile(database="shop", table="t" + LONG, row_count=1000, column_count=len(columns),
                        columns=columns, sample_rows=[row, {**row, "amount": -0.0, "born_on": "0001-01-01"}],
                        fingerprint=Fingerprint(schema_hash="s", row_count=1000, value=LONG),
                        profiled_at="2026-05-01T10:00:00Z")


def hostile_issues() -> AnalysisResultModel:
    issue = IssueModel(id="i" + LONG, type="outliers", affectedColumns=["amount", LONG_NAME], severity="high",
                       category="smart_fixes", affectedRows=1,
                       description=f"{LONG} is far from the rest: 1e300 against a median of 3.14.",
                       suggestedAction=f"Check {LONG} against its source.", source="detector",
                       details={"value": LONG, "top": {LONG: 3}, "largest": 1e300, "smallest": -0.0})
    return AnalysisResultModel(issues=[issue], summary=LONG, completedAt="2026-05-01T11:00:00Z")


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("overflow")
    profile = hostile_profile()
    inv = CodeInvestigation(issue_id="i" + LONG, code=f"print('{LONG}')", output=LONG, success=True,
                            verdict="confirmed", hypothesis=LONG, reason=LONG, evidence={"value": LONG, "n": 1e300})
    catalog = render_catalog_page(profile=profile, understanding=heuristic_understanding(profile),
                                  issues=hostile_issues(), investigations=[inv], now=NOW,
                                  run={"timestamp": "2026-05-01T10:00:00.123456Z", "note": LONG})
    index = render_index(database="d" + LONG, now=NOW, tables=[
        IndexEntry(table="t" + LONG, row_count=10**15, column_count=5, health=12.5, href="x.html",
                   updated="2026-05-01T11:58:00.123456Z", issues_by_severity={"high": 10**6},
                   description=LONG, owner=LONG, references=["r" + LONG],
                   columns=[IndexColumn(name=LONG_NAME, type=LONG, description=LONG)],
                   findings=[IndexFinding(type=LONG, severity="high", description=LONG, columns=[LONG_NAME],
                                          since="2026-05-01T11:58:00.123456Z")]),
        IndexEntry(table="broken", status="failed", error=LONG + " " + LONG),
    ])
    paths = {}
    for name, html in (("catalog", catalog), ("index", index)):
        paths[name] = folder / f"{name}.html"
        paths[name].write_text(html, encoding="utf-8")
    return paths


# Every element outside a scrolling box (a wide table or a code block scrolls inside its own
# frame, which is its design) must end inside the viewport and inside its closest box: a card,
# a stat, a quantile cell, a definition.  Closed <details> are opened first so their content counts.
OVERFLOWS = """() => {
  document.querySelectorAll('details').forEach(d => d.open = true);
  const width = document.documentElement.clientWidth, found = [];
  if (document.documentElement.scrollWidth > width + 1)
    found.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
  const scrolls = el => {
    for (let a = el.parentElement; a; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o === 'auto' || o === 'scroll') return true;
    }
    return false;
  };
  const name = el => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().replace(/\\s+/g, '.') : '');
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('svg') && el.tagName.toLowerCase() !== 'svg') continue;
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height || scrolls(el)) continue;
    if (r.right > width + 1 || r.left < -1) found.push(`${name(el)} leaves the viewport (${Math.round(r.left)}..${Math.round(r.right)} of ${width}): ${el.textContent.slice(0, 40)}`);
    const box = el.parentElement && el.parentElement.closest('.card, .stat, .quantiles > div, dd, td, li, .meta > span');
    if (box) {
      const b = box.getBoundingClientRect();
      if (r.right > b.right + 1 || r.left < b.left - 1)
        found.push(`${name(el)} overflows ${name(box)} (${Math.round(r.right)} > ${Math.round(b.right)}): ${el.textContent.slice(0, 40)}`);
    }
    if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth && getComputedStyle(el).overflowX === 'hidden')
      found.push(`${name(el)} hides a cut value (${el.scrollWidth} > ${el.clientWidth}): ${el.textContent.slice(0, 40)}`);
  }
  return found;
}"""


@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
@pytest.mark.parametrize("which", ["catalog", "index"])
def test_hostile_values_stay_in_their_boxes(browser, pages, which, width):  # noqa: F811
    context = browser.new_context(viewport={"width": width, "height": 800})
    try:
        pg = context.new_page()
        pg.goto(pages[which].as_uri())
        found = pg.evaluate(OVERFLOWS)
        assert found == [], f"{which} at {width}px:\n" + "\n".join(found[:25])
    finally:
        context.close()


def test_identifiers_dates_and_times_read_whole(browser, pages):  # noqa: F811
    context = browser.new_context(viewport={"width": WIDTHS["phone"], "height": 800})
    try:
        pg = context.new_page()
        pg.goto(pages["catalog"].as_uri())
        card = pg.locator('article.column[data-column="order_id"]')
        stats = card.locator("dl.stats-list").inner_text()
        assert "2118" in stats and "2,118" not in stats
        assert "2118" in card.locator("svg.histogram").inner_html()
        assert "1059" in card.locator(".quantiles").inner_text()
        # the outlier's histogram says it is on a log scale
        assert pg.locator('article.column[data-column="amount"] svg text.scale').text_content().startswith("log scale")
        quantiles = pg.locator('article.column[data-column="seen_at"] .quantiles').inner_text()
        # each whole to the second, a midnight as its date, the exact value on hover
        shown = quantiles.replace("\n", " ")
        for value in ("0001-01-01", "2023-01-15 13:45:12", "2023-06-15 08:00:00", "9999-12-31 23:59:59"):
            assert value in shown, value
        assert "…" not in quantiles
        cell = pg.locator('article.column[data-column="seen_at"] .quantiles div').nth(3)
        assert cell.get_attribute("title") == "p75: 9999-12-31 23:59:59.999999"
        # times are said relative to the page's generation time, the exact value on hover
        run = pg.locator("header .run-time time")
        assert run.inner_text() == "2 hours ago"
        assert run.get_attribute("title") == "2026-05-01 10:00:00 UTC"
        assert run.get_attribute("datetime").startswith("2026-05-01T10:00:00")
        pg.goto(pages["index"].as_uri())
        assert pg.locator("td.updated time").first.inner_text() == "2 minutes ago"
    finally:
        context.close()
