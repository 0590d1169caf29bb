"""The index that finds things (core/render/pages.render_index, index_search.py,
reference_graph.py): the data its in-page search reads, kept inert whatever the names; the
database at a glance (worst tables, newest findings, the reference graph); nothing fetched.
The search itself, typed into in a browser from a file:// URL, is tests/e2e/test_index_search.py."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

import pytest

from cataloger_dagster.core.render.index_search import inert_json, newest_findings, search_data, worst_tables
from cataloger_dagster.core.render.pages import IndexColumn, IndexEntry, IndexFinding, render_index
from tests.core.render.test_pages import parse

BREAKOUT = "</script><script>alert(1)</script>"
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)
SVG = "{http://www.w3.org/2000/svg}"


def finding(severity: str, type_: str, description: str, since: str = "", columns=()) -> IndexFinding:
    return IndexFinding(id=f"{type_}-{severity}", type=type_, severity=severity, description=description,
                        columns=list(columns), since=since)


def shop() -> list[IndexEntry]:
    return [
        IndexEntry(table="orders", row_count=6000, column_count=3, health=48.0, href="orders/r1/catalog.html",
                   updated="2026-11-27T10:00:00.000000Z", description="One row per customer order.",
                   owner="team:sales", issues_by_severity={"high": 1, "medium": 1, "low": 0},
                   columns=[IndexColumn(name="order_id", type="int64", description="identifies the order"),
                            IndexColumn(name="customer_email", type="string", description="who to write to")],
                   findings=[finding("high", "missing_values", "customer_email is missing in 10% of rows",
                                     "2026-11-27T10:00:00.000000Z", ["customer_email"]),
                             finding("medium", "outliers", "amount has 10 values above 9,000",
                                     "2026-11-20T10:00:00.000000Z", ["amount"])],
                   references=["customers"]),
        IndexEntry(table="customers", row_count=250, column_count=2, health=91.0, href="customers/r1/catalog.html",
                   updated="2026-11-26T10:00:00.000000Z", description="The shop's customers.", owner="team:crm",
                   issues_by_severity={"high": 0, "medium": 0, "low": 1},
                   columns=[IndexColumn(name="email", type="string", description="")],
                   findings=[finding("low", "whitespace_values", "name has trailing blanks",
                                     "2026-11-26T10:00:00.000000Z")]),
        IndexEntry(table="countries", row_count=20, column_count=2, health=100.0, href="countries/r1/catalog.html",
                   updated="2026-11-01T10:00:00.000000Z", description="ISO countries."),
        IndexEntry(table=BREAKOUT, href="odd/r1/catalog.html", health=70.0, description=BREAKOUT, owner=BREAKOUT,
                   updated="2026-11-27T11:00:00.000000Z", issues_by_severity={"high": 0, "medium": 0, "low": 1},
                   columns=[IndexColumn(name=BREAKOUT, type=BREAKOUT, description=BREAKOUT)],
                   findings=[finding("low", BREAKOUT, BREAKOUT, "2026-11-27T11:00:00.000000Z", [BREAKOUT])],
                   references=["orders", BREAKOUT]),
        IndexEntry(table="broken", status="failed", error="permission denied"),
    ]


def embedded(html: str) -> dict:
    """The JSON of the search, as the browser's parser hands it to the page's script."""
    doc = parse(html)
    [node] = [n for n in doc.root.find_all("script") if n.attrs.get("type") == "application/json"]
    return json.loads(node.text())


def test_a_name_that_would_close_the_script_stays_data():
    html = render_index(database=BREAKOUT, tables=shop(), now=NOW)
    doc = parse(html)
    # exactly our two scripts: the data and the search; the name opened none
    scripts = [a for t, a in doc.start_tags if t == "script"]
    assert [a.get("type") for a in scripts] == ["application/json", None]
    assert "<script>alert(1)" not in html
    # and the data reads back whole: the name, its column, its finding, its owner
    data = embedded(html)
    odd = data["tables"][3]
    assert odd["table"] == odd["description"] == odd["owner"] == BREAKOUT
    assert odd["columns"] == [{"name": BREAKOUT, "type": BREAKOUT, "description": BREAKOUT, "personal": []}]
    assert odd["findings"][0]["type"] == BREAKOUT and odd["findings"][0]["columns"] == [BREAKOUT]
    # the script writes text only, never markup
    [script] = [n for n in doc.root.find_all("script") if not n.attrs.get("type")]
    code = script.text()
    assert "innerHTML" not in code and "outerHTML" not in code and "insertAdjacentHTML" not in code
    assert "textContent" in code


@pytest.mark.parametrize("text", [BREAKOUT, "<!--", "a & b", "\u2028", "<\\/script>", "]]>"])
def test_inert_json_never_holds_markup_and_parses_back(text):
    out = str(inert_json({"k": text}))
    assert "<" not in out and ">" not in out and "&" not in out and "\u2028" not in out
    assert json.loads(out) == {"k": text}


def test_the_search_data_holds_every_row_in_its_order_with_its_words():
    entries = shop()
    html = render_index(database="shop", tables=entries, now=NOW)
    data = embedded(html)
    assert data == search_data(entries)
    assert [t["table"] for t in data["tables"]] == [e.table for e in entries]
    rows = [r for r in parse(html).root.find_all("tr") if "data-i" in r.attrs]
    assert [int(r.attrs["data-i"]) for r in rows] == list(range(len(entries)))
    orders = data["tables"][0]
    assert orders["description"] == "One row per customer order." and orders["owner"] == "team:sales"
    assert {"name": "customer_email", "type": "string", "description": "who to write to",
            "personal": []} in orders["columns"]
    assert orders["findings"][0] == {"type": "missing_values", "severity": "high",
                                     "description": "customer_email is missing in 10% of rows",
                                     "columns": ["customer_email"]}


def test_the_filters_offer_what_is_present():
    doc = parse(render_index(database="shop", tables=shop(), now=NOW))

    def options(select_id: str) -> list[str]:
        [select] = doc.root.find_all("select", id=select_id)
        return [o.attrs["value"] for o in select.find_all("option")]

    assert options("filter-severity") == ["", "high", "medium", "low", "none"]
    assert options("filter-type") == ["", BREAKOUT, "missing_values", "outliers", "whitespace_values"]
    assert options("filter-owner") == ["", BREAKOUT, "team:crm", "team:sales"]


def test_each_row_shows_its_description_owner_and_last_change_with_the_exact_time_on_hover():
    doc = parse(render_index(database="shop", tables=shop(), now=NOW))
    [row] = [r for r in doc.root.find_all("tr") if r.attrs.get("data-table") == "orders"]
    assert row.find_all("div", cls="description")[0].text() == "One row per customer order."
    assert row.find_all("div", cls="owner")[0].text() == "owner: team:sales"
    [moment] = row.find_all("td", cls="updated")[0].find_all("time")
    assert moment.text() == "2 hours ago" and moment.attrs["title"] == "2026-11-27 10:00:00 UTC"


def test_the_database_at_a_glance():
    entries = shop()
    doc = parse(render_index(database="shop", tables=entries, now=NOW))
    # the worst tables: lowest health first; a table with no finding, or failed, is none of them
    assert [e.table for e in worst_tables(entries)] == ["orders", BREAKOUT, "customers"]
    [worst] = doc.root.find_all("div", id="worst-tables")
    assert [a.text() for a in worst.find_all("a")] == ["orders", BREAKOUT, "customers"]
    assert worst.find_all("a")[0].attrs["href"] == "orders/r1/catalog.html"
    # the newest findings: latest first, each with its table and when it was found
    newest = newest_findings(entries)
    assert [(n["table"], n["finding"].type) for n in newest] == [
        (BREAKOUT, BREAKOUT), ("orders", "missing_values"), ("customers", "whitespace_values"), ("orders", "outliers")]
    [listed] = doc.root.find_all("div", id="newest-findings")
    items = listed.find_all("li")
    assert "customer_email is missing in 10% of rows" in items[1].text() and "2 hours ago" in items[1].text()
    assert "1 week ago" in items[3].text()
    # the reference graph: a box per table in a reference, an arrow per reference
    [graph] = doc.root.find_all("svg", cls="reference-graph")
    boxes = {g.attrs["data-table"] for g in graph.find_all("g", cls="node")}
    assert boxes == {"orders", "customers", BREAKOUT}
    arrows = [p.find_all("title")[0].text() for p in graph.find_all("path", cls="edge")]
    assert sorted(arrows) == sorted([f"{BREAKOUT} references orders", "orders references customers"])


def test_an_empty_catalog_says_so_everywhere():
    doc = parse(render_index(database="shop", tables=[], now=NOW))
    assert "No table has an open finding." in doc.root.text() and "No open finding." in doc.root.text()
    assert "No reference between tables was found." in doc.root.text()
    assert doc.root.find_all("input", id="search") == []


def test_the_page_asks_for_nothing_over_the_network():
    html = render_index(database="shop", tables=shop(), now=NOW)
    doc = parse(html)
    for tag, attrs in doc.start_tags:
        for name in ("src", "href", "action"):
            value = attrs.get(name) or ""
            assert not re.match(r"(?i)\s*(https?:|//|javascript:)", value), (tag, name, value)
    for needle in ("fetch(", "XMLHttpRequest", "import(", "@import", "url(http", "<link", "WebSocket"):
        assert needle not in html


def personal_shop() -> list[IndexEntry]:
    """Tables whose columns hold personal data, one of them named to break out of the page."""
    return [
        IndexEntry(table="customers", href="customers/r1/catalog.html", health=90.0,
                   columns=[IndexColumn(name="id", type="int64"),
                            IndexColumn(name="email", type="string", personal=["email"], personal_share=0.98,
                                        personal_reviewed=True),
                            IndexColumn(name="contact", type="string", personal=["person_name"])]),
        IndexEntry(table=BREAKOUT, href="odd/r1/catalog.html", health=80.0,
                   columns=[IndexColumn(name=BREAKOUT, type="string", personal=["phone"], personal_share=0.7)]),
        IndexEntry(table="countries", href="countries/r1/catalog.html", health=100.0,
                   columns=[IndexColumn(name="iso", type="string")]),
    ]


def test_where_personal_data_lives_lists_each_column_by_table_with_its_share_and_review():
    html = render_index(database="shop", tables=personal_shop(), now=NOW)
    doc = parse(html)
    [section] = doc.root.find_all("section", id="personal-data")
    rows = [r for r in section.find_all("tr") if "data-personal-table" in r.attrs]
    listed = [(r.attrs["data-personal-table"], r.attrs["data-personal-column"]) for r in rows]
    assert listed == [(BREAKOUT, BREAKOUT), ("customers", "contact"), ("customers", "email")]
    cells = [[c.text().strip() for c in r.find_all("td")] for r in rows]
    assert cells[2] == ["customers", "email", "e-mail", "98%", "yes"]
    assert cells[1][2:] == ["person name", "—", "no"]  # said by a review alone: no share
    assert cells[0][:3] == [BREAKOUT, BREAKOUT, "phone number"]  # the hostile name is text, never markup
    assert "<script>alert(1)" not in html
    assert [a for t, a in doc.start_tags if t == "script"] == [{"type": "application/json", "id": "index-data"}, {}]


def test_the_personal_data_filter_offers_the_classes_held_and_the_search_data_carries_them():
    entries = personal_shop()
    doc = parse(render_index(database="shop", tables=entries, now=NOW))
    [select] = doc.root.find_all("select", id="filter-personal")
    assert [o.attrs["value"] for o in select.find_all("option")] == ["", "*", "email", "phone", "person_name", "-"]
    data = embedded(render_index(database="shop", tables=entries, now=NOW))
    assert data["tables"][1]["columns"] == [{"name": BREAKOUT, "type": "string", "description": "",
                                             "personal": ["phone"]}]
    assert [c["personal"] for c in data["tables"][0]["columns"]] == [[], ["email"], ["person_name"]]


def test_no_personal_data_means_no_filter_and_a_section_that_says_so():
    doc = parse(render_index(database="shop", tables=shop(), now=NOW))
    assert doc.root.find_all("select", id="filter-personal") == []
    [section] = doc.root.find_all("section", id="personal-data")
    assert "No column was found to hold personal data." in section.text()
