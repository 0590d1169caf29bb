"""The catalog page as a reader reads it: its sections in order, the column dictionary, the run's
engineering detail folded away, and the evidence on the page (each renderer: test_evidence.py).

The findings are the real detectors' on a small DuckDB table (and the history checks' on a real
store of earlier runs), so each renderer is shown the details its issue type really writes."""

from __future__ import annotations

import json

import pytest

from cataloger_dagster.core.models import AnalysisResultModel, CodeInvestigation
from cataloger_dagster.core.render.charts import fmt_value
from cataloger_dagster.core.render.pages import render_catalog_page
from tests.core.render.test_pages import parse

HOSTILE = '<img src=x onerror="alert(1)">'
READER_ORDER = ["summary", "overview", "issues", "columns", "investigations", "run-details"]


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """A small orders table with a broken sum, padded and re-cased statuses, dates in the future
    and a hostile value; profiled and checked by the real profiler and detectors."""
    import duckdb
    from page_inputs import page_inputs

    path = str(tmp_path_factory.mktemp("shop") / "shop.duckdb")
    with duckdb.connect(path) as con:
        con.execute(f"""
            create table orders as select i as order_id,
              case when i % 97 = 0 then ' {HOSTILE}' when i % 7 = 0 then ' Shipped' when i % 11 = 0 then 'SHIPPED'
                   when i % 3 = 0 then 'shipped' else 'pending' end as status,
              (i % 40) * 1.5 as subtotal, (i % 5) + 1.0 as shipping,
              case when i % 100 = 0 then (i % 40) * 1.5 + 99 else (i % 40) * 1.5 + (i % 5) + 1.0 end as total,
              case when i % 50 = 0 then date '2999-01-01' else date '2024-01-01' + (i % 300)::int end as ordered_on,
              case when i % 4 = 0 then null else 'note ' || (i % 3)::varchar end as note
            from range(1, 1001) t(i)""")
    return page_inputs(path, "orders")


def of_type(issues: AnalysisResultModel, type_: str):
    [issue] = [i for i in issues.issues if i.type == type_]
    return issue


def tables(blocks: list[dict]) -> list[dict]:
    return [b for b in blocks if b["kind"] == "table"]


def sentences(blocks: list[dict]) -> str:
    return " ".join(b["text"] for b in blocks if b["kind"] == "text")


def flat_rows(blocks: list[dict]) -> dict[str, str]:
    return {row[0]: row[1] for t in tables(blocks) if t["headers"] == ["", ""] for row in t["rows"]}


INVESTIGATIONS = [
    CodeInvestigation(code="result = {'future_rows': 20}", success=True, output={"future_rows": 20, "scan": "x"},
                      execution_time_ms=405.87, issue_id="ISS-x", verdict="confirmed",
                      evidence={"future_rows": 20, "by_rule": {"in the future": 20}}),
]


@pytest.fixture(scope="module")
def page(shop):
    profile, understanding, issues = shop
    investigations = [INVESTIGATIONS[0].model_copy(update={"issue_id": of_type(issues, "out_of_range").id})]
    html = render_catalog_page(
        profile=profile, understanding=understanding, issues=issues, investigations=investigations,
        history=[{"timestamp": "2026-01-01T00:00:00Z", "row_count": 1000, "current": True}],
        script="print('new')\n", previous_script="print('old')\n",
        run={"timestamp": "2026-01-01T00:00:00Z", "sandbox cells": 7, "tokens": 1234})
    return html, parse(html)


# ------------------------------------------------------------------ the page


def test_the_sections_come_in_a_readers_order(page):
    _, doc = page
    ids = [n.attrs["id"] for n in doc.root.iter() if n.tag == "section"]
    assert ids == READER_ORDER
    # the column dictionary belongs to the understanding, before any issue
    [overview] = doc.root.find_all("section", id="overview")
    assert overview.find_all("table", cls="column-dictionary")


def test_the_column_dictionary_names_types_means_and_flags_each_column(shop, page):
    profile, understanding, issues = shop
    _, doc = page
    rows = doc.root.find_all("table", cls="column-dictionary")[0].find_all("tbody")[0].find_all("tr")
    assert [r.attrs["data-column"] for r in rows] == [c.name for c in profile.columns]
    meaning = {c.name: c.description for c in understanding.columns}
    for row, col in zip(rows, profile.columns):
        cell = {td.attrs["class"].split()[-1]: td for td in row.find_all("td")}
        assert cell["type"].find_all("code")[0].text() == col.dtype
        assert cell["meaning"].text() == (meaning[col.name] or "—")
        assert cell["completeness"].text() == f"{(1 - col.null_fraction) * 100:.1f}%"
        # flags: the types of the open findings on the column, each once, linking to its card
        flagged = {i.type for i in issues.issues if col.name in i.affectedColumns}
        shown = [a.attrs["data-type"] for a in cell["flags"].find_all("a")]
        assert sorted(shown) == sorted(flagged)
        for a in cell["flags"].find_all("a"):
            assert doc.root.find_all("article", id=a.attrs["href"][1:])
    note = {td.attrs["class"].split()[-1]: td for td in rows[-1].find_all("td")}
    assert note["completeness"].text() == "75.0%" and "250 missing values of 1,000" == note["completeness"].attrs["title"]
    examples = [c.text() for c in note["examples"].find_all("code")]
    assert examples and set(examples) <= {"note 0", "note 1", "note 2"}
    status = {td.attrs["class"].split()[-1]: td for td in rows[1].find_all("td")}
    assert {"whitespace_values", "inconsistent_categories"} <= {
        a.attrs["data-type"] for a in status["flags"].find_all("a")}


def test_run_details_are_one_closed_section_holding_the_engineering_detail(page):
    html, doc = page
    [section] = doc.root.find_all("section", id="run-details")
    [details] = section.find_all("details", cls="run-details")
    assert "open" not in details.attrs and details.find_all("summary")[0].text() == "Run details"
    text = details.text()
    assert details.find_all("pre", cls="diff")                               # the script's diff
    assert "Sandbox cells" in text and "Tokens" in text and "1,234" in text   # cells and tokens
    assert [t.text() for t in details.find_all("td", cls="timing")] == [f"{fmt_value(405.87)} ms"]
    assert details.find_all("details", cls="raw-output") and details.find_all("table", cls="run-history")
    assert "Profiled" in text and "quer" in text
    # nowhere else: the reader's part of the page holds none of it
    rest = "".join(s.text() for s in doc.root.find_all("section") if s.attrs["id"] != "run-details")
    assert fmt_value(405.87) not in rest and "1,234" not in rest and "Sandbox cells" not in rest
    assert len(doc.root.find_all("pre", cls="diff")) == 1 and len(doc.root.find_all("details", cls="run-details")) == 1


def test_evidence_on_the_page_is_tables_and_sentences_with_the_raw_json_one_click_away(shop, page):
    _, _, issues = shop
    html, doc = page
    for issue in issues.issues:
        [card] = doc.root.find_all("article", cls="issue", data_issue_id=issue.id)
        [numbers] = card.find_all("details", cls="numbers")
        [evidence] = numbers.find_all("div", cls="evidence")
        assert evidence.find_all("table", cls="evidence-table") or evidence.find_all("p", cls="evidence-text")
        # no JSON outside the raw fold
        shown = "".join(c.text() if not isinstance(c, str) else c for c in evidence.children
                        if isinstance(c, str) or c.tag != "details")
        assert "{" not in shown and '":' not in shown, (issue.type, shown)
        [raw] = evidence.find_all("details", cls="raw")
        assert raw.find_all("summary")[0].text() == "raw" and "open" not in raw.attrs
        assert json.loads(raw.find_all("pre")[0].text()) == json.loads(json.dumps(issue.details, default=str))


def test_hostile_values_in_evidence_stay_text(shop, page):
    html, doc = page
    assert "img" not in {tag for tag, _ in doc.start_tags}
    assert not [a for _, attrs in doc.start_tags for a in attrs if a.startswith("on")]
    padded = of_type(shop[2], "whitespace_values")
    [card] = doc.root.find_all("article", cls="issue", data_issue_id=padded.id)
    cells = [td.text() for t in card.find_all("table", cls="evidence-table") for td in t.find_all("td")]
    assert f" {HOSTILE}" in cells          # the padded hostile value, as text in its row
    # hostile keys and values in an unknown shape, through the generic renderer
    profile, understanding, issues = shop
    odd = of_type(issues, "out_of_range").model_copy(update={"details": {
        HOSTILE: HOSTILE, "nested": [{HOSTILE: 1, "b": "</td></tr></table><script>x()</script>"}]}})
    html = render_catalog_page(profile=profile, understanding=understanding,
                               issues=issues.model_copy(update={"issues": [odd]}))
    doc = parse(html)
    assert "img" not in {tag for tag, _ in doc.start_tags}
    assert [tag for tag, _ in doc.start_tags].count("script") == 1   # the review controls' own
    [card] = doc.root.find_all("article", cls="issue", data_issue_id=odd.id)
    cells = [td.text() for td in card.find_all("td")] + [th.text() for th in card.find_all("th")]
    assert HOSTILE in cells and "</td></tr></table><script>x()</script>" in cells
