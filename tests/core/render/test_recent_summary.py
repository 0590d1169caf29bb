"""The recent_summary page, rendered from two runs' comparison."""

from __future__ import annotations

from cataloger_dagster.core.render.recent_summary import render_recent_summary
from tests.core.history.test_recent_changes import BASE_COLUMNS, _col, _run
from tests.core.history.test_recent_changes import compare as compare_runs


def test_page_escapes_values():
    cols = [_col("<script>alert(1)</script>", "string", "string")]
    s = compare_runs(_run("T1", 1, []), _run("T2", 1, cols))
    html = render_recent_summary(s)
    assert "<script>alert" not in html and "&lt;script&gt;" in html


def test_the_page_shows_the_links_it_is_given_and_drops_unsafe_ones():
    s = compare_runs(_run("T1", 100, BASE_COLUMNS), _run("T2", 125, BASE_COLUMNS))
    html = render_recent_summary(s, database="shop & co", links={"Previous run": "../T1/catalog.html",
                                                                 "Evil": "javascript:alert(1)"})
    assert 'href="catalog.html"' in html and 'href="../T1/catalog.html"' in html
    assert "javascript:" not in html and "shop &amp; co" in html
    assert 'id="previous-run">T1<' in html and 'data-delta="25"' in html
