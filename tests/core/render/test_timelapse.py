"""core/render/timelapse.py: the page of every run of a table.  Names and notes are text, the
links are relative to the table's folder, and the charts are drawn."""

from __future__ import annotations

from cataloger_dagster.core.history.timelapse import RunSummary, timelapse_rows
from cataloger_dagster.core.render.timelapse import render_timelapse
from cataloger_dagster.core.reviews.model import Review

HOSTILE = "<script>alert(1)</script>\"' $(id) `id`"


def page(runs, reviews):
    return render_timelapse(database=HOSTILE, table=HOSTILE, rows=timelapse_rows(runs, reviews), reviews=reviews)


def test_every_run_is_listed_newest_first_with_its_links():
    runs = [RunSummary(timestamp=f"2026-01-{d:02d}T00:00:00.000000Z", rows=d, issue_ids=["x"], health=90.0,
                       pass_rate=1.0, cells=3, tokens=10) for d in range(1, 26)]
    runs.append(RunSummary(timestamp="2026-02-01T00:00:00.000000Z", status="incomplete"))
    html = page(runs, [])
    assert html.count('<tr class="run"') == 26        # every run, not only the last 10
    listed = html[html.index('id="runs"'):]
    assert listed.index("2026-02-01T00") < listed.index("2026-01-25T00") < listed.index("2026-01-01T00")
    assert 'href="2026-01-01T00%3A00%3A00.000000Z/catalog.html"' in html
    assert 'href="2026-01-01T00%3A00%3A00.000000Z/recent_summary.html"' in html
    assert 'href="2026-01-01T00%3A00%3A00.000000Z/catalog_script.py"' in html
    assert 'href="2026-02-01T00%3A00%3A00.000000Z/"' in html   # an incomplete run links its folder
    assert 'href="../index.html"' in html
    assert html.count('<svg class="chart trend"') == 6


def test_names_and_notes_are_text_never_markup():
    reviews = [Review(table=HOSTILE, issue_id=HOSTILE, verdict="dismiss", reviewer=HOSTILE, note=HOSTILE + "\nline 2",
                      at="2026-01-01T12:00:00+00:00", via="cli")]
    html = page([RunSummary(timestamp="2026-01-02T00:00:00.000000Z", issue_ids=[HOSTILE])], reviews)
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count('data-verdict="dismiss"') == 1 and ">yes<" in html


def test_a_superseded_review_is_marked_so():
    reviews = [Review(table="t", issue_id="i", verdict=v, reviewer="a", at=f"2026-01-01T0{h}:00:00+00:00")
               for h, v in ((1, "dismiss"), (2, "accept"))]
    html = page([RunSummary(timestamp="2026-01-02T00:00:00.000000Z", issue_ids=["i"])], reviews)
    assert html.count("superseded") == 1 and html.index("accept") < html.index("superseded")


def test_reader_trends_are_shown_and_what_the_pipeline_spent_is_folded_in_run_details():
    from tests.core.render.test_pages import parse

    runs = [RunSummary(timestamp=f"2026-01-{d:02d}T00:00:00.000000Z", rows=1000 + d, issue_ids=["x"],
                       health=52.9 + d, pass_rate=0.9, cells=7 + d, tokens=12345 + d) for d in range(1, 5)]
    doc = parse(page(runs, []))
    [details] = doc.root.find_all("details", cls="run-details")
    assert "open" not in details.attrs
    folded = [c.attrs["data-chart"] for c in details.find_all("div", cls="trend-card")]
    assert folded == ["Sandbox cells", "Tokens"]
    shown = [c.attrs["data-chart"] for c in doc.root.find_all("div", cls="trend-card")]
    assert [c for c in shown if c not in folded] == ["Rows", "Issues", "Health", "Pass rate"]
    # the runs table a reader sees has no engineering columns; the folded one has them
    [runs_table] = doc.root.find_all("table", cls="runs")
    headers = [th.text() for th in runs_table.find_all("th")]
    assert "Tokens" not in headers and "Cells" not in headers
    [costs] = details.find_all("table", cls="run-costs")
    assert "12,349" in costs.text()
    # each chart has y-axis ticks and its unit
    for card in doc.root.find_all("div", cls="trend-card"):
        [svg] = card.find_all("svg", cls="trend")
        assert len(svg.find_all("g", cls="tick")) >= 2
    units = [t.text() for t in doc.root.find_all("text", cls="unit")]
    assert units == ["rows", "issues", "of 100", "%", "cells", "tokens"]
