"""The index's search and filters in a real browser, from a file:// URL: no server, no network.

The index is rendered from models (core/render/pages.render_index, the entries of
tests/core/render/test_index_search.py, a table named ``</script><script>alert(1)</script>`` among
them), opened from disk in Debian's headless chromium through Playwright (the fixtures of
test_browser.py), typed into and filtered; the rows shown are checked, and the hostile name
must stay text: no dialog opens, no console error, no request leaves the file.
"""

from __future__ import annotations

import pytest

from cataloger_dagster.core.render.pages import render_index
from tests.core.render.test_index_search import BREAKOUT, NOW, shop
from tests.e2e.test_browser import assert_clean, browser, chromium, page  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.chromium]


@pytest.fixture
def index(tmp_path, page):  # noqa: F811
    path = tmp_path / "index.html"
    path.write_text(render_index(database="shop", tables=shop(), now=NOW), encoding="utf-8")
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri(), wait_until="load")
    page.dialogs = dialogs
    return page


def shown(pg) -> list[str]:
    return pg.eval_on_selector_all("tr[data-i]", "rows => rows.filter(r => !r.hidden && r.offsetParent)"
                                   ".map(r => r.dataset.table)")


def test_search_and_filters_narrow_the_rows_from_a_file_url(index):
    pg = index
    assert pg.url.startswith("file://")
    assert shown(pg) == ["orders", "customers", "countries", BREAKOUT, "broken"]
    assert pg.inner_text("#shown-count") == "5 tables"

    # a column's name, a column's meaning, a finding's words: each finds its table
    pg.fill("#search", "email")
    assert shown(pg) == ["orders", "customers"]
    assert pg.inner_text("#shown-count") == "2 of 5 tables"
    hint = pg.inner_text("tr[data-table='orders'] .match")
    assert "column customer_email" in hint and "high finding: missing values" in hint
    pg.fill("#search", "write to")                     # only in customer_email's meaning
    assert shown(pg) == ["orders"]
    pg.fill("#search", "ISO")                          # a table's description, any case
    assert shown(pg) == ["countries"]
    pg.fill("#search", "ORDERS email")                 # every word must be found
    assert shown(pg) == ["orders"]

    # filters: by severity, by finding type, by owner, and with the search
    pg.fill("#search", "")
    pg.select_option("#filter-severity", "high")
    assert shown(pg) == ["orders"]
    pg.select_option("#filter-severity", "low")
    assert shown(pg) == ["customers", BREAKOUT]
    pg.fill("#search", "blanks")
    assert shown(pg) == ["customers"]
    pg.fill("#search", "")
    pg.select_option("#filter-severity", "none")
    assert shown(pg) == ["countries"]
    pg.select_option("#filter-severity", "")
    pg.select_option("#filter-type", "outliers")
    assert shown(pg) == ["orders"]
    pg.select_option("#filter-type", "")
    pg.select_option("#filter-owner", "team:crm")
    assert shown(pg) == ["customers"]
    assert pg.is_hidden("#no-match")
    pg.fill("#search", "nothing-is-called-this")
    assert shown(pg) == [] and pg.is_visible("#no-match")
    assert pg.inner_text("#shown-count") == "0 of 5 tables"
    assert_clean(pg)


def test_a_hostile_name_is_found_as_text_and_runs_nothing(index):
    pg = index
    pg.fill("#search", "alert(1)")
    assert shown(pg) == [BREAKOUT]
    row = "tr[data-i='3']"
    assert pg.inner_text(f"{row} td.name code") == BREAKOUT
    assert BREAKOUT in pg.inner_text(f"{row} .match")   # the column's name, written as text
    pg.select_option("#filter-owner", BREAKOUT)
    assert shown(pg) == [BREAKOUT]
    # our two scripts and no other; nothing ran: no dialog, no console error
    assert pg.eval_on_selector_all("script", "s => s.length") == 2
    assert pg.dialogs == []
    assert_clean(pg)


def test_the_personal_data_filter_keeps_the_tables_holding_it_in_a_browser(tmp_path, page):  # noqa: F811
    from tests.core.render.test_index_search import personal_shop

    path = tmp_path / "index.html"
    path.write_text(render_index(database="shop", tables=personal_shop(), now=NOW), encoding="utf-8")
    page.goto(path.as_uri(), wait_until="load")
    assert shown(page) == ["customers", BREAKOUT, "countries"]
    page.select_option("#filter-personal", "*")
    assert shown(page) == ["customers", BREAKOUT]
    page.select_option("#filter-personal", "phone")
    assert shown(page) == [BREAKOUT]
    page.fill("#search", "iso")
    assert shown(page) == [] and page.is_visible("#no-match")
    page.fill("#search", "")
    page.select_option("#filter-personal", "-")
    assert shown(page) == ["countries"]
    # the section lists the hostile name as text, and nothing ran
    assert BREAKOUT in page.inner_text("#personal-data")
    assert page.eval_on_selector_all("script", "s => s.length") == 2
    assert_clean(page)
