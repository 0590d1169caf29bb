"""The catalog page and the index: rendered, parsed and checked as HTML."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import pytest

from cataloger_dagster.core.models import (
    AnalysisResultModel,
    CodeInvestigation,
    ColumnProfile,
    ColumnRule,
    ColumnSummaryModel,
    DatasetSummaryModel,
    DatasetUnderstandingModel,
    Fingerprint,
    Histogram,
    IssueModel,
    LengthStats,
    TableProfile,
    ValueCount,
    pass_rate,
)
from cataloger_dagster.core.health import health_band, health_score
from cataloger_dagster.core.render import pages
from cataloger_dagster.core.render.evidence import humanise
from cataloger_dagster.core.render.pages import (
    IndexEntry,
    render_catalog_page,
    render_index,
    script_diff,
    svg_bar,
    svg_histogram,
    template_environment,
)

REPO = Path(__file__).resolve().parents[3]
HOSTILE = "<script>alert(1)</script>"
HOSTILE_IMG = '<img src=x onerror="alert(2)">'

# --------------------------------------------------------------------------
# a small DOM from the stdlib parser
# --------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: "Node | None"):
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs) -> list["Node"]:
        return [n for n in self.iter()
                if (tag is None or n.tag == tag) and (cls is None or cls in n.classes)
                and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]


class TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root
        self.start_tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.cur)
        self.start_tags.append((tag, node.attrs))
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.cur)
        self.start_tags.append((tag, node.attrs))
        self.cur.children.append(node)

    def handle_endtag(self, tag):
        node = self.cur
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.cur = node.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(html: str) -> TreeBuilder:
    builder = TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder


# --------------------------------------------------------------------------
# a realistic table's results, built by hand
# --------------------------------------------------------------------------


def make_results(hostile: bool = True):
    status_values = [ValueCount(value="shipped", count=5120), ValueCount(value="Shipped", count=310),
                     ValueCount(value=" shipped ", count=44), ValueCount(value="", count=12),
                     ValueCount(value=None, count=9)]
    if hostile:
        status_values.append(ValueCount(value=HOSTILE, count=3))
    weird_name = HOSTILE if hostile else "weird_column"
    columns = [
        ColumnProfile(name="order_id", dtype="!int64", kind="integer", nullable=False, count=6000,
                      nulls=0, null_fraction=0.0, distinct=5990, min=1, max=6000, mean=3000.5,
                      std=1732.2, quantiles={"p05": 300, "p25": 1500, "p50": 3000, "p75": 4500, "p95": 5700},
                      histogram=Histogram(edges=[1, 1201, 2401, 3601, 4801, 6000],
                                          counts=[1200, 1200, 1200, 1200, 1200])),
        ColumnProfile(name="amount", dtype="decimal(10, 2)", kind="decimal", count=5800, nulls=200,
                      null_fraction=200 / 6000, distinct=4100, min=-25.0, max=98000.0, mean=81.27,
                      std=1290.4, quantiles={"p05": 4.99, "p25": 19.5, "p50": 42.0, "p75": 88.1, "p95": 240.0},
                      histogram=Histogram(edges=[-25 + i * 9802.5 for i in range(11)],
                                          counts=[5790, 4, 0, 0, 1, 0, 0, 0, 0, 5])),
        ColumnProfile(name="status", dtype="string", kind="string", count=5991, nulls=9,
                      null_fraction=9 / 6000, distinct=6, min="", max="shipped",
                      top_values=status_values, length=LengthStats(min=0, max=25, mean=7.1),
                      pattern_counts={"blank": 12, "padded": 44, "email": 0}),
        ColumnProfile(name="customer_email", dtype="string", kind="string", count=5400, nulls=600,
                      null_fraction=0.1, distinct=2900, distinct_approximate=True,
                      min="aaron@example.org", max="zoe@example.com", semantic_type="email",
                      top_values=[ValueCount(value="anna@example.com", count=14)],
                      length=LengthStats(min=9, max=41, mean=21.4),
                      pattern_counts={"email": 5380, "blank": 0}),
        ColumnProfile(name="ordered_at", dtype="timestamp('UTC')", kind="timestamp", count=6000, nulls=0,
                      null_fraction=0.0, distinct=5999, min="2023-01-01T00:00:00+00:00",
                      max="2031-07-04T12:00:00+00:00",
                      histogram=Histogram(edges=["2023-01-01T00:00:00", "2025-02-01T00:00:00",
                                                 "2027-03-01T00:00:00", "2029-04-01T00:00:00",
                                                 "2031-07-04T12:00:00"],
                                          counts=[3000, 2990, 0, 10])),
        ColumnProfile(name="payload", dtype="struct<a: int64>", kind="nested", count=6000, nulls=0,
                      null_fraction=0.0, notes=["min/max: not defined for struct", "histogram: not numeric"]),
        ColumnProfile(name=weird_name, dtype="string", kind="string", count=6000, nulls=0,
                      null_fraction=0.0, distinct=1, top_values=[ValueCount(value="x", count=6000)]),
    ]
    sample_rows = [
        {"order_id": i, "amount": 10.5 * i, "status": "shipped" if i % 2 else " Shipped",
         "customer_email": None if i == 3 else f"user{i}@example.com",
         "ordered_at": f"2024-0{i}-01T10:00:00+00:00", "payload": {"a": i},
         weird_name: HOSTILE_IMG if hostile and i == 2 else "x"}
        for i in range(1, 6)
    ]
    profile = TableProfile(
        database="shop", table="orders", row_count=6000, column_count=len(columns), columns=columns,
        sample_rows=sample_rows,
        fingerprint=Fingerprint(schema_hash="ab12cd34ef56ab78", row_count=6000, value="ab12cd34ef56ab78:6000"),
        queries=4, duration_s=0.84, profiled_at="2025-06-01T12:00:00Z",
    )
    understanding = DatasetUnderstandingModel(
        summary=DatasetSummaryModel(
            name="orders", description="One row per customer order, with its amount, status and time.",
            rowCount=6000, columnCount=len(columns),
            observations=["order_id looks like the primary key", "status has spelling variants",
                          f"a value {HOSTILE} appears in status" if hostile else "ordered_at runs into 2031"]),
        columns=[ColumnSummaryModel(name=c.name, dataType="numeric" if c.kind in ("integer", "decimal") else "string",
                                    description=f"The {c.name} of the order.", sampleValues=[]) for c in columns],
        suggested_context="Orders placed on the web shop; amounts in EUR.",
    )
    issue_list = [
        IssueModel(id="ISS-1", type="inconsistent_categories",
                   severity="medium", category="quick_fixes",
                   description=f"status has case and whitespace variants of one value, and {HOSTILE}",
                   affectedColumns=["status"], affectedRows=354,
                   suggestedAction="Trim and lower-case status before grouping.",
                   details={"variants": {"shipped": ["Shipped", " shipped "]}, "rows": 354}),
        IssueModel(id="ISS-2", type="out_of_range", severity="high", category="smart_fixes",
                   description="ordered_at has 10 dates in the future (after 2025-06-01).",
                   affectedColumns=["ordered_at"], affectedRows=10,
                   suggestedAction="Check the clock of the source system and correct these rows."),
        IssueModel(id="ISS-3", type="missing_values", severity="low", category="quick_fixes",
                   description="customer_email is missing in 10.0% of rows.",
                   affectedColumns=["customer_email"], affectedRows=600,
                   suggestedAction="Backfill from the customers table."),
        IssueModel(id="ISS-4", type="constant_column", severity="low", category="quick_fixes",
                   description="A column holds one value only.", affectedColumns=[weird_name],
                   affectedRows=None, suggestedAction="Drop the column."),
        IssueModel(id="ISS-5", type="outliers", severity="high", category="smart_fixes",
                   description="amount has 10 values above 9,000.", affectedColumns=["amount"],
                   affectedRows=10, suggestedAction="Review the orders with the largest amounts.",
                   temporalPattern="all in March 2024"),
    ]
    issues = AnalysisResultModel(issues=issue_list, summary="5 issues found.", completedAt="2025-06-01T12:00:01Z")
    investigations = [
        CodeInvestigation(code="t = con.table('orders')\nn = t.filter(t.ordered_at > now).count().execute()\n"
                               "result = {'future_rows': int(n)}", success=True,
                          output={"future_rows": 10}, execution_time_ms=41.5, issue_id="ISS-2",
                          verdict="confirmed", evidence={"future_rows": 10, "examples": [17, 42, 99]}),
        CodeInvestigation(code=f"print('{HOSTILE}')\nresult = {{'variants': 3}}", success=True,
                          output="3 variants", execution_time_ms=12.0, issue_id="ISS-1",
                          verdict="refuted" if not hostile else "confirmed",
                          evidence={"variants": 3, "share": 0.059, "note": HOSTILE}),
        CodeInvestigation(code="t.missing_column.count()", success=False, output=None,
                          error="AttributeError: 'Table' object has no attribute 'missing_column'",
                          execution_time_ms=3.1, issue_id="ISS-3", verdict=None),
        CodeInvestigation(code="result = {'max': 98000}", success=True, output={"max": 98000},
                          issue_id="ISS-5", verdict="inconclusive", evidence={"max": 98000}),
    ]
    return profile, understanding, issues, investigations


def render_full(**overrides) -> str:
    profile, understanding, issues, investigations = make_results()
    kwargs = dict(
        profile=profile, understanding=understanding, issues=issues, investigations=investigations,
        history=[{"timestamp": "2025-05-31T12:00:00Z", "row_count": 5990, "pass_rate": 0.75,
                  "sandbox_cells": 9, "issues": {"high": 1, "medium": 1}, "href": "../2025-05-31T12:00:00Z/catalog.html"},
                 {"timestamp": "2025-06-01T12:00:00Z", "row_count": 6000, "pass_rate": 0.75,
                  "sandbox_cells": 3, "issues": {"high": 2, "medium": 1, "low": 2}, "current": True}],
        script="import ibis\ncon = ibis.connect(DB)\nt = con.table('orders')\nprint('<b>new</b>')\n",
        previous_script="import ibis\ncon = ibis.connect(DB)\nt = con.table('orders_old')\n",
        links={"recent_summary": "recent_summary.html", "script": "catalog_script.py",
               "index": "../../index.html", "evil": "javascript:alert(3)"},
        run={"timestamp": "2025-06-01T12:00:00Z", "sandbox_cells": 3, "tokens": 0},
    )
    kwargs.update(overrides)
    return render_catalog_page(**kwargs)


@pytest.fixture(scope="module")
def page() -> tuple[str, TreeBuilder]:
    html = render_full()
    return html, parse(html)


# --------------------------------------------------------------------------
# the catalog page
# --------------------------------------------------------------------------


def test_every_column_has_a_card_with_its_statistics(page):
    html, doc = page
    profile, understanding, _, _ = make_results()
    cards = doc.root.find_all("article", cls="column")
    assert [c.attrs["data-column"] for c in cards] == [c.name for c in profile.columns]
    for card, col in zip(cards, profile.columns):
        text = card.text()
        assert col.name in card.find_all("h3")[0].text()
        assert col.dtype in text
        assert f"The {col.name} of the order." in text  # the understanding's description
        for note in col.notes:
            assert note in text
        if col.semantic_type:
            assert col.semantic_type in text
        if col.quantiles:
            cells = [n for n in card.find_all("div", cls="quantiles")[0].children if isinstance(n, Node)]
            assert [n.find_all("span")[0].text() for n in cells] == list(col.quantiles)
    amount = cards[1].text()
    assert "-25" in amount and "98,000" in amount and "81.27" in amount and "1,290" in amount
    # the column dictionary lists the columns too, each linking to its card
    summary_links = [a.attrs["href"] for a in doc.root.find_all("table", cls="column-dictionary")[0].find_all("a")
                     if a.attrs.get("href", "").startswith("#col-")]
    assert summary_links == [f"#{c.attrs['id']}" for c in cards]


def test_every_issue_is_shown_by_severity_with_its_action(page):
    _, doc = page
    _, _, issues, _ = make_results()
    groups = doc.root.find_all("div", cls="sev-group")
    assert [g.attrs["data-severity"] for g in groups] == ["high", "medium", "low"]
    shown = {}
    for group in groups:
        for art in group.find_all("article", cls="issue"):
            shown[art.attrs["data-issue-id"]] = (group.attrs["data-severity"], art)
    assert set(shown) == {i.id for i in issues.issues}
    for issue in issues.issues:
        severity, art = shown[issue.id]
        assert severity == issue.severity
        text = art.text()
        assert issue.description in text
        assert issue.suggestedAction in text
        assert issue.category.replace("_", " ") in text
        assert issue.type.replace("_", " ").capitalize() in text
        for name in issue.affectedColumns:
            assert name in art.find_all("dd", cls="affected-columns")[0].text()
        rows = art.find_all("dd", cls="affected-rows")[0].text()
        assert (f"{issue.affectedRows:,}" in rows) if issue.affectedRows is not None else "not counted" in rows
    # within a severity the issue touching more rows comes first
    high = [a.attrs["data-issue-id"] for a in groups[0].find_all("article", cls="issue")]
    assert set(high) == {"ISS-2", "ISS-5"}
    assert "all in March 2024" in shown["ISS-5"][1].text()


def test_histograms_have_one_bar_per_bin(page):
    _, doc = page
    profile, _, _, _ = make_results()
    for card, col in zip(doc.root.find_all("article", cls="column"), profile.columns):
        svgs = card.find_all("svg", cls="histogram")
        if col.histogram is None:
            assert svgs == []
            continue
        assert len(svgs) == 1
        bars = svgs[0].find_all("rect", cls="bar")
        assert len(bars) == len(col.histogram.counts)
        heights = [float(b.attrs["height"]) for b in bars]
        # the tallest bar is the fullest bin; an empty bin draws nothing; a tiny one still shows
        assert heights.index(max(heights)) == col.histogram.counts.index(max(col.histogram.counts))
        for h, n in zip(heights, col.histogram.counts):
            assert (h == 0) == (n == 0)
    amount = doc.root.find_all("article", cls="column", data_column="amount")[0]
    labels = [t.text() for t in amount.find_all("text", cls="label")]
    assert "-25" in labels and "98k" in labels and "max 5,790" in labels


def test_hostile_values_are_escaped_everywhere(page):
    html, doc = page
    tags = {tag for tag, _ in doc.start_tags}
    assert "img" not in tags and "<script>alert" not in html
    # one script only: the review controls' own, from the template (no data in it)
    assert [tag for tag, _ in doc.start_tags].count("script") == 1 and "review-form" in html
    assert not [a for _, attrs in doc.start_tags for a in attrs if a.startswith("on")]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    cards = doc.root.find_all("article", cls="column")
    weird = [c for c in cards if c.attrs["data-column"] == HOSTILE]
    assert len(weird) == 1 and HOSTILE in weird[0].find_all("h3")[0].text()
    status = [c for c in cards if c.attrs["data-column"] == "status"][0]
    assert any(HOSTILE in t.text() for t in status.find_all("title"))
    issue = doc.root.find_all("article", cls="issue", data_issue_id="ISS-1")[0]
    assert HOSTILE in issue.find_all("p", cls="desc")[0].text()
    inv = doc.root.find_all("article", cls="investigation", data_issue_id="ISS-1")[0]
    assert any(HOSTILE in c.text() for c in inv.find_all("code"))
    assert HOSTILE in inv.find_all("div", cls="evidence")[0].text()
    sample = doc.root.find_all("table", cls="sample-rows")[0]
    assert HOSTILE_IMG in sample.text()
    # a javascript: link from the caller is neutralised
    assert "javascript:" not in html


def test_page_needs_nothing_from_the_network(page):
    html, doc = page
    assert "http://" not in html and "https://" not in html
    for tag, attrs in doc.start_tags:
        for name in ("src", "href", "xlink:href", "action", "srcset"):
            value = attrs.get(name)
            if value is not None:
                assert not value.startswith("//"), (tag, name, value)
        assert tag not in ("link", "iframe", "object", "embed")
    style = "".join(n.text() for n in doc.root.find_all("style"))
    assert "@import" not in style and "url(" not in style and "@font-face" not in style


def test_investigations_history_diff_and_links(page):
    html, doc = page
    _, _, _, investigations = make_results()
    arts = doc.root.find_all("article", cls="investigation")
    assert [a.attrs["data-issue-id"] for a in arts] == [i.issue_id for i in investigations]
    for art, inv in zip(arts, investigations):
        text = art.text()
        assert inv.code in "".join(c.text() for c in art.find_all("code"))
        assert (inv.verdict or "error") in art.find_all("span", cls="badge")[0].text()
        # each piece of evidence is a row of its table, named in words
        named = [tr.find_all("td")[0].text() for t in art.find_all("table", cls="evidence-table")
                 for tr in t.find_all("tr")] + [c.text() for c in art.find_all("caption")]
        for key in inv.evidence or {}:
            assert humanise(key) in named
        if inv.error:
            assert inv.error in art.find_all("pre", cls="error")[0].text()
    # 2 of 4 decided: one failed, one is inconclusive
    assert "50%" in doc.root.find_all("section", id="investigations")[0].text()
    history = doc.root.find_all("table", cls="run-history")[0]
    rows = history.find_all("tbody")[0].find_all("tr")
    assert len(rows) == 2 and "current" in rows[1].classes
    assert rows[0].find_all("a")[0].attrs["href"] == "../2025-05-31T12:00:00Z/catalog.html"
    diff = doc.root.find_all("pre", cls="diff")[0]
    added = [s.text() for s in diff.find_all("span", cls="add")]
    removed = [s.text() for s in diff.find_all("span", cls="del")]
    assert "+t = con.table('orders')" in added and "+print('<b>new</b>')" in added
    assert removed == ["-t = con.table('orders_old')"]
    assert not diff.find_all("b")  # the <b> in the script stayed text
    hrefs = {a.attrs.get("class"): a.attrs["href"] for a in doc.root.find_all("a") if "link-" in (a.attrs.get("class") or "")}
    assert hrefs["link-recent_summary"] == "recent_summary.html"
    assert hrefs["link-script"] == "catalog_script.py"
    assert "link-evil" not in hrefs  # a javascript: link is dropped


def test_minimal_page_without_optional_parts():
    profile, understanding, _, _ = make_results(hostile=False)
    empty = profile.model_copy(update={"row_count": 0, "sample_rows": [],
                                       "columns": [c.model_copy(update={"histogram": None, "top_values": None})
                                                   for c in profile.columns]})
    html = render_catalog_page(profile=empty, understanding=understanding,
                               issues=AnalysisResultModel(issues=[], summary="", completedAt=""))
    doc = parse(html)
    assert "No data-quality issues" in html and "The table has no rows." in html
    assert not doc.root.find_all("section", id="investigations")
    assert not doc.root.find_all("section", id="history") and not doc.root.find_all("section", id="script")
    assert not doc.root.find_all("svg")
    assert doc.root.find_all("div", cls="health")[0].attrs["data-health"] == "100.0"


# --------------------------------------------------------------------------
# the index and the health score
# --------------------------------------------------------------------------


def test_index_lists_every_table_with_its_health():
    profile, _, issues, investigations = make_results()
    clean = AnalysisResultModel(issues=[], summary="", completedAt="")
    entries = [
        IndexEntry(table="orders", row_count=6000, column_count=7,
                   issues_by_severity={"high": 2, "medium": 1, "low": 2}, pass_rate=0.75,
                   health=health_score(profile, issues, 0.75), href="orders/2025-06-01T12:00:00Z/catalog.html",
                   updated="2025-06-01T12:00:00Z", status="ok", error=None),
        IndexEntry(table="countries", row_count=250, column_count=3, issues_by_severity={}, pass_rate=None,
                   health=health_score(profile, clean), href="countries/x/catalog.html",
                   updated="2025-06-01T12:00:00Z", status="ok", error=None),
        IndexEntry(table=HOSTILE, row_count=0, column_count=0, issues_by_severity={}, pass_rate=None,
                   health=0.0, href="", updated="", status="failed",
                   error=f"table {HOSTILE!r}: permission denied; grant SELECT and rerun"),
    ]
    html = render_index(database="shop", tables=entries)
    doc = parse(html)
    # two scripts, both inline: the search's data and the search itself (test_index.py)
    scripts = [a for t, a in doc.start_tags if t == "script"]
    assert [a.get("type") for a in scripts] == ["application/json", None] and not any("src" in a for a in scripts)
    assert "http://" not in html and "https://" not in html
    rows = [r for r in doc.root.find_all("tr") if "data-table" in r.attrs]
    assert [r.attrs["data-table"] for r in rows] == [e.table for e in entries]
    for row, entry in zip(rows, entries):
        assert row.attrs["data-health"] == f"{entry.health:.1f}"
        text = row.text()
        assert f"{entry.row_count:,}" in text
        for sev, n in entry.issues_by_severity.items():
            assert f"{n} {sev}" in text
        if entry.status == "ok":
            assert f"{entry.health:.1f}" in row.find_all("span", cls="score")[0].text()
            assert row.find_all("a")[0].attrs["href"] == entry.href
            band = health_band(entry.health)
            assert row.find_all("div", cls=f"band-{band}")
        else:
            assert "failed" in row.classes and entry.error in text
    assert "100.0" in rows[1].text() and "75%" in rows[0].text()


# --------------------------------------------------------------------------
# the building blocks
# --------------------------------------------------------------------------


def test_svg_helpers_escape_and_count():
    hist = svg_histogram(Histogram(edges=[0, 1, 2, 3], counts=[5, 0, 2]), width=200, height=80, title=HOSTILE)
    doc = parse(str(hist))
    assert len(doc.root.find_all("rect", cls="bar")) == 3
    assert "script" not in {t for t, _ in doc.start_tags}
    assert svg_histogram(None, width=10, height=10, title="") == ""
    bars = svg_bar([ValueCount(value=HOSTILE, count=3), ValueCount(value="a", count=9)])
    doc = parse(str(bars))
    rects = doc.root.find_all("rect", cls="bar")
    assert len(rects) == 2 and float(rects[1].attrs["width"]) > float(rects[0].attrs["width"])
    assert "script" not in {t for t, _ in doc.start_tags}
    assert any(HOSTILE in t.text() for t in doc.root.find_all("title"))
    assert len(parse(str(svg_bar({"high": 2, "low": 1}))).root.find_all("rect")) == 2


def test_script_diff():
    first = script_diff(None, "x = 1\n")
    assert "First script" in first
    assert "Unchanged" in script_diff("x = 1\n", "x = 1\n")
    doc = parse(script_diff("a = 1\nb = '<i>'\n", "a = 1\nb = '<script>'\nc = 3\n"))
    assert [s.text() for s in doc.root.find_all("span", cls="add")] == ["+b = '<script>'", "+c = 3"]
    assert [s.text() for s in doc.root.find_all("span", cls="del")] == ["-b = '<i>'"]
    assert "script" not in {t for t, _ in doc.start_tags} and "i" not in {t for t, _ in doc.start_tags}


# --------------------------------------------------------------------------
# the templates ship in the wheel
# --------------------------------------------------------------------------

RENDER_FROM_INSTALL = """
import json, sys
import cataloger_dagster, cataloger_dagster.core.render.pages as pages
from cataloger_dagster.core.models import *
args = json.load(open(sys.argv[1]))
html = pages.render_catalog_page(
    profile=TableProfile.model_validate(args["profile"]),
    understanding=DatasetUnderstandingModel.model_validate(args["understanding"]),
    issues=AnalysisResultModel.model_validate(args["issues"]))
index = pages.render_index(database="shop", tables=[pages.IndexEntry(table="orders", health=50.0)])
template = pages.template_environment().get_template("pages/catalog.html.j2")
print(json.dumps({"package": cataloger_dagster.__file__, "html": html, "index": index,
                  "template": template.filename}))
"""

PACKAGE_TEMPLATES = Path(pages.__file__).resolve().parents[2] / "templates"


def test_every_template_is_package_data_read_through_the_package_loader():
    env = template_environment()
    assert isinstance(env.loader, jinja2.PackageLoader)
    shipped = sorted(p.relative_to(PACKAGE_TEMPLATES).as_posix() for p in PACKAGE_TEMPLATES.rglob("*.j2"))
    assert {"pages/catalog.html.j2", "pages/index.html.j2", "prompts/issues.system.j2"} <= set(shipped)
    assert env.list_templates() == shipped
    for name in shipped:
        source, filename, _ = env.loader.get_source(env, name)
        assert source == (PACKAGE_TEMPLATES / name).read_text(encoding="utf-8")
        assert Path(filename).resolve() == (PACKAGE_TEMPLATES / name).resolve()
        env.parse(source)   # each one is valid Jinja


@pytest.mark.slow
def test_templates_are_found_from_an_installed_wheel(tmp_path):
    dist = tmp_path / "dist"
    # without isolation when hatchling is here already: no download, same backend
    isolation = ["--no-isolation"] if importlib.util.find_spec("hatchling") else []
    subprocess.run([sys.executable, "-m", "build", "--wheel", *isolation, "--outdir", str(dist), str(REPO)],
                   check=True, capture_output=True, timeout=300)
    wheel = next(dist.glob("cataloger_dagster-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in sorted(PACKAGE_TEMPLATES.rglob("*.j2")):
        assert f"cataloger_dagster/templates/{template.relative_to(PACKAGE_TEMPLATES).as_posix()}" in names
    for recipe in ("Dockerfile", "requirements.txt", "build-requirements.txt"):
        assert f"cataloger_dagster/sandbox_recipe/{recipe}" in names
    assert "cataloger_dagster/core/render/pages.py" in names

    target = tmp_path / "site"
    uv = Path(sys.executable).with_name("uv")
    installer = [str(uv), "pip", "install", "--python", sys.executable, "--no-deps", "--target", str(target), str(wheel)] \
        if uv.exists() else [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)]
    subprocess.run(installer, check=True, capture_output=True, timeout=300)

    profile, understanding, issues, _ = make_results()
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"profile": profile.model_dump(mode="json"),
                                              "understanding": understanding.model_dump(mode="json"),
                                              "issues": issues.model_dump(mode="json")}))
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run([sys.executable, "-c", RENDER_FROM_INSTALL, str(args)], cwd=tmp_path, env=env,
                         check=True, capture_output=True, text=True, timeout=120)
    result = json.loads(out.stdout)
    # rendered by the installed copy, from the templates it carries
    assert Path(result["package"]).is_relative_to(target)
    assert Path(result["template"]).is_relative_to(target / "cataloger_dagster" / "templates")
    doc = parse(result["html"])
    assert [c.attrs["data-column"] for c in doc.root.find_all("article", cls="column")] == [c.name for c in profile.columns]
    assert [r.attrs["data-table"] for r in parse(result["index"]).root.find_all("tr") if "data-table" in r.attrs] == ["orders"]


# --------------------------------------------------------------------------
# end to end on a real DuckDB table, through the real profiler and detectors
# --------------------------------------------------------------------------


@pytest.mark.slow
def test_page_from_a_real_profile(tmp_path):
    import duckdb
    from page_inputs import page_inputs

    path = str(tmp_path / "shop.duckdb")
    with duckdb.connect(path) as con:
        con.execute(f"""
            create table orders as select i as order_id,
              case when i % 50 = 0 then '{HOSTILE}' when i % 7 = 0 then ' Shipped'
                   when i % 3 = 0 then 'shipped' else 'pending' end as status,
              case when i % 97 = 0 then 100000.0 else (i % 40) * 1.5 end as amount,
              date '2024-01-01' + (i % 300)::int as ordered_on,
              'x' as "{HOSTILE}"
            from range(1, 501) t(i)""")
    profile, understanding, issues = page_inputs(path, "orders")
    found = issues.issues
    html = render_catalog_page(profile=profile, understanding=understanding, issues=issues)
    doc = parse(html)
    assert [t for t, _ in doc.start_tags].count("script") == 1   # the review controls' own
    # each issue's review command names its issue exactly, however hostile the column in its id
    import shlex
    forms = {f.attrs["data-tail"]: f for f in doc.root.find_all("div", cls="review-form")}
    assert sorted(shlex.split(tail)[-1] for tail in forms) == sorted(i.id for i in found)
    assert any(HOSTILE in shlex.split(tail)[-1] for tail in forms)
    assert "http://" not in html and "https://" not in html
    cards = doc.root.find_all("article", cls="column")
    assert [c.attrs["data-column"] for c in cards] == [c.name for c in profile.columns]
    shown = {a.attrs["data-issue-id"] for a in doc.root.find_all("article", cls="issue")}
    assert found and shown == {i.id for i in found}
    drawn = 0
    for card, col in zip(cards, profile.columns):
        if col.histogram is not None:
            assert len(card.find_all("svg", cls="histogram")[0].find_all("rect", cls="bar")) == len(col.histogram.counts)
            drawn += 1
    assert drawn >= 3  # order_id, amount, ordered_on
    status = doc.root.find_all("article", cls="column", data_column="status")[0]
    assert any(HOSTILE in t.text() for t in status.find_all("title"))
    assert "␣Shipped" in status.text()  # the padded variant is visibly padded


def test_a_refuted_issue_is_checked_and_dismissed_with_its_evidence_and_costs_no_health():
    profile, understanding, issues, investigations = make_results()
    refuted = CodeInvestigation(
        code="record(...)", success=True, output=None, issue_id="ISS-5", verdict="refuted",
        hypothesis=f"the values of amount beyond [0, 9000] are errors {HOSTILE}",
        reason="they continue the tail of the distribution", evidence={"isolated_rows": 0, "note": HOSTILE})
    investigations = [i for i in investigations if i.issue_id != "ISS-5"] + [refuted]
    html = render_catalog_page(profile=profile, understanding=understanding, issues=issues,
                               investigations=investigations)
    doc = parse(html)
    standing_ids = {a.attrs["data-issue-id"] for g in doc.root.find_all("div", cls="sev-group")
                    for a in g.find_all("article", cls="issue")}
    assert "ISS-5" not in standing_ids and "ISS-2" in standing_ids
    box = doc.root.find_all("div", cls="dismissed")[0]
    card = box.find_all("article", cls="issue")[0]
    assert card.attrs["data-issue-id"] == "ISS-5" and "Checked and dismissed" in box.text()
    assert "they continue the tail" in card.text() and "isolated_rows" in card.text()
    assert HOSTILE not in html
    # the health counts what stands: the same score as a table without the refuted issue
    without = AnalysisResultModel(issues=[i for i in issues.issues if i.id != "ISS-5"], summary="", completedAt="")
    rate = pass_rate(investigations)
    shown = doc.root.find_all("div", cls="health")[0].attrs["data-health"]
    assert shown == f"{health_score(profile, without, rate):.1f}" != f"{health_score(profile, issues, rate):.1f}"


def test_a_smart_fix_shows_its_question_its_options_and_each_fix_script():
    from cataloger_dagster.core.fixes.followups import with_followups
    from cataloger_dagster.core.fixes.sql import FixTarget

    profile, understanding, issues, investigations = make_results()
    spelled = f"Shipped\n{HOSTILE}"   # a value with a line break and markup: data on the page too
    smart = [
        IssueModel(id="ISS-6", type="outliers", severity="medium", category="smart_fixes",
                   description="amount has 2 values far above the others.", affectedColumns=["amount"],
                   affectedRows=2, suggestedAction="Check them.",
                   details={"rows": 2, "fence_low": 0.5, "fence_high": 900.0, "min_outlier": 9000.0,
                            "max_outlier": 98000.0, "examples": [98000.0, 9000.0], "parsed_from_text": False}),
        IssueModel(id="ISS-7", type="inconsistent_categories", severity="medium", category="smart_fixes",
                   description="status is written several ways.", affectedColumns=["status"], affectedRows=9,
                   suggestedAction="Map them.", details={"groups": {"shipped": {"shipped": 900, spelled: 9}},
                                                         "part": "value"}),
    ]
    analysis = with_followups(issues.model_copy(update={"issues": issues.issues + smart}), profile,
                              FixTarget(profile.table, "postgres"))
    html = render_catalog_page(profile=profile, understanding=understanding, issues=analysis,
                               investigations=investigations)
    doc = parse(html)
    assert [tag for tag, _ in doc.start_tags].count("script") == 1   # the review controls' own
    outliers = doc.root.find_all("article", cls="issue", data_issue_id="ISS-6")[0].find_all("div", cls="followup")[0]
    assert "Are they entry errors, or real extremes?" in outliers.find_all("p", cls="question")[0].text()
    options = outliers.find_all("li", cls="option")
    assert [o.attrs["data-option"] for o in options] == ["set_null", "cap", "keep"]
    scripts = outliers.find_all("code", cls="language-sql")
    assert len(scripts) == 2 and 'UPDATE "orders" SET "amount" = NULL WHERE' in scripts[0].text()
    assert [a.attrs["href"] for a in outliers.find_all("a")] == ["fixes/ISS-6.set_null.sql", "fixes/ISS-6.cap.sql"]
    assert "no script" in options[2].text()
    variants = doc.root.find_all("article", cls="issue", data_issue_id="ISS-7")[0]
    assert "Consolidate status to the most frequent spelling 'shipped'?" in variants.text()
    shown = variants.find_all("code", cls="language-sql")[0].text()
    # the value's line break shows as \n inside its quotes; its markup is text
    assert f"'Shipped\\n{HOSTILE}'" in shown
    # an issue without a follow-up (a quick fix, or results stored before follow-ups) shows none
    assert not doc.root.find_all("article", cls="issue", data_issue_id="ISS-1")[0].find_all("div", cls="followup")


def test_reviews_show_on_the_page_and_what_they_set_aside_costs_no_health():
    from collections import Counter

    from cataloger_dagster.core.reviews import Review, column_kind, snapshot_of
    from cataloger_dagster.core.reviews.memory import ReviewMemory, review_with_memory

    profile, understanding, issues, _ = make_results()
    by_id = {i.id: i for i in issues.issues}

    def said(issue_id, verdict, rows=None, note=f"known {HOSTILE}"):
        snap = snapshot_of(by_id[issue_id], profile)
        if rows is not None:
            snap = snap.model_copy(update={"affectedRows": rows})
        return Review(table="orders", issue_id=issue_id, verdict=verdict, note=note, reviewer="ana",
                      at="2026-01-02T10:00:00+00:00", issue=snap)

    log = [said("ISS-1", "dismiss"), said("ISS-3", "expected"), said("ISS-2", "accept", note="real"),
           said("ISS-5", "dismiss", rows=4, note="only a few")]
    memory = ReviewMemory(reviews=log, dismissals=Counter({("constant_column", column_kind(profile, by_id["ISS-4"]
                                                                                             .affectedColumns[0])): 3}))
    result = review_with_memory(lambda raised: issues.model_copy(update={"issues": raised}),
                                issues.issues, profile, memory)
    html = render_catalog_page(profile=profile, understanding=understanding, issues=result)
    doc = parse(html)
    standing = {a.attrs["data-issue-id"]: a for g in doc.root.find_all("div", cls="sev-group")
                for a in g.find_all("article", cls="issue")}
    assert set(standing) == {"ISS-2", "ISS-5"}
    box = doc.root.find_all("div", id="reviewed")[0]
    aside = {a.attrs["data-issue-id"]: a for a in box.find_all("article", cls="reviewed-issue")}
    assert set(aside) == {"ISS-1", "ISS-3"}
    assert "Dismissed by ana on 2026-01-02" in aside["ISS-1"].text() and "known" in aside["ISS-1"].text()
    assert "Expected" in aside["ISS-3"].text()
    worse = standing["ISS-5"].find_all("div", cls="review-mark")[0]
    assert worse.attrs["data-review-state"] == "worse_since_dismissed" and "Worse since dismissed" in worse.text()
    assert [n.text() for n in worse.find_all("span", cls="rows-then") + worse.find_all("span", cls="rows-now")] == [
        "4", "10"]
    accepted = standing["ISS-2"].find_all("div", cls="review-mark")[0]
    assert "Accepted by ana" in accepted.text() and "days" in accepted.find_all("span", cls="open-for")[0].text()
    quiet = box.find_all("article", cls="quieted-issue")[0]
    assert quiet.attrs["data-issue-id"] == "ISS-4"
    assert "Raised less often: dismissed 3 times on similar columns" in quiet.text()
    assert HOSTILE not in html
    # the health counts only what is raised
    shown = doc.root.find_all("div", cls="health")[0].attrs["data-health"]
    assert shown == f"{health_score(profile, result):.1f}" != f"{health_score(profile, issues):.1f}"


def test_a_history_finding_shows_its_chart_on_the_card_and_its_numbers_without_it():
    from cataloger_dagster.core.history.anomalies import volume_anomaly
    from cataloger_dagster.core.history.digest import RunPoint

    profile, understanding, issues, investigations = make_results()
    runs = [RunPoint(timestamp=f"2025-05-{d:02d}T12:00:00.000000Z", rows=1000 + 100 * d, fingerprint=str(d))
            for d in range(1, 11)]
    hostile_table = profile.table + HOSTILE
    found = volume_anomaly(hostile_table, runs[:-1], runs[-1].model_copy(update={"rows": 10}), set())
    found.details["chart"]["labels"][-1] = HOSTILE
    issues = issues.model_copy(update={"issues": [*issues.issues, found]})
    html = render_catalog_page(profile=profile, understanding=understanding, issues=issues,
                               investigations=investigations)
    doc = parse(html)
    [card] = [a for a in doc.root.find_all("article", cls="issue") if a.attrs["data-issue-id"] == found.id]
    [chart] = card.find_all("svg", cls="chart")
    # a point per run; the band expected of the last run shaded, not drawn as points of its own
    assert len(chart.find_all("circle", cls="point")) == len(found.details["chart"]["labels"])
    assert len(chart.find_all("rect", cls="band")) == 1
    named = [tr.find_all("td")[0].text() for t in card.find_all("table", cls="evidence-table")
             for tr in t.find_all("tr") if tr.find_all("td")]
    captions = [c.text() for c in card.find_all("caption")]
    assert "history" in card.text() and "History changes" in named + captions and "Band" in named + captions
    assert "Chart" not in named + captions
    assert HOSTILE not in html


def test_the_rules_between_columns_are_shown_in_the_overview():
    profile, understanding, issues, _ = make_results(hostile=False)
    rule = ColumnRule(kind="sum", formula="total = subtotal + shipping <b>", result="total",
                      operands=["subtotal", "shipping <b>"], holds=5998, applies=6000)
    html = render_catalog_page(profile=profile, understanding=understanding,
                               issues=issues.model_copy(update={"rules": [rule]}))
    (listed,) = parse(html).root.find_all("ul", id="rules")
    assert "total = subtotal + shipping &lt;b&gt;" in html and "5,998 of 6,000 rows" in html
    assert listed.find_all("li")[0].attrs["data-rule-kind"] == "sum"
    without = render_catalog_page(profile=profile, understanding=understanding, issues=issues)
    assert not parse(without).root.find_all("ul", id="rules")


def test_a_column_family_is_one_group_on_the_page(tmp_path):
    import ibis

    from cataloger_dagster.core.issues.detectors import detect_issues
    from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
    from cataloger_dagster.core.profile.profiling import compute_profile
    from cataloger_dagster.resources.agent import heuristic_understanding
    from tests.support import null_shapes

    backend = ibis.duckdb.connect()
    backend.raw_sql(null_shapes.chart_sql(weeks=20, entries=120))
    table = backend.table("chart")
    profile = compute_profile(table, database="d", table_name="chart", fingerprint=compute_fingerprint(table))
    found = detect_issues(table, profile)
    backend.disconnect()
    html = render_catalog_page(profile=profile, understanding=heuristic_understanding(profile),
                               issues=AnalysisResultModel(issues=found, summary="", completedAt=""))
    doc = parse(html)
    # the summary table: artist, track, and the twenty weeks as one row
    rows = doc.root.find_all("table", cls="column-dictionary")[0].find_all("tr")[1:]
    assert len(rows) == 3 and rows[2].attrs["data-family"] == "wk1…wk20" and "(20 columns)" in rows[2].text()
    [group] = doc.root.find_all("details", cls="family")
    assert group.attrs["id"] == "family-wkN" and "20 columns of" in group.text()
    assert [c.attrs["data-column"] for c in group.find_all("article", cls="column")] == [f"wk{w}" for w in range(1, 21)]
    # every column keeps its card, in the table's order
    assert [c.attrs["data-column"] for c in doc.root.find_all("article", cls="column")] == [c.name for c in profile.columns]
    # the understanding says once why the weeks are NULL
    assert html.count("each is NULL wherever the one before it is") == 1
