"""What the detectors share: shares written as a person would, names read as identifiers, cached values."""

from __future__ import annotations

import dataclasses

import pytest

from cataloger_dagster.core.issues import text_values
from cataloger_dagster.core.issues.detectors import context as context_module
from cataloger_dagster.core.issues.detectors.context import (
    _free_text_stats, count, free_text_counts, is_identifier, is_measure, issue, numeric_sentinels, one, pct,
)


@pytest.mark.parametrize("part, whole, shown", [
    (171, 172, "99.42%"),     # the evidence's own share, never rounded up to "100.00%"
    (172, 172, "100%"),
    (0, 172, "0%"),
    (999_999, 1_000_000, ">99.99%"),
    (1, 1_000_000, "<0.01%"),
    (1, 3, "33.33%"),
    (5, 0, "0%"),
])
def test_pct(part, whole, shown):
    assert pct(part, whole) == shown


@pytest.mark.parametrize("name", ["id", "county_id", "user_key", "iso code", "order_no", "customerId", "sku",
                                  "flight_number"])
def test_identifiers(name):
    assert is_identifier(name)


@pytest.mark.parametrize("name", ["hour", "amount", "valid", "paid", "humidity", "Idaho", "tailnum", "video"])
def test_not_identifiers(name):
    assert not is_identifier(name)


def test_is_measure(tables):
    tables.sql("CREATE TABLE m AS SELECT i AS county_id, i * 1.5 AS wind_speed, i % 2 = 0 AS flag "
               "FROM range(30) r(i)")
    profile = tables.profile("m")
    schema = tables.con.table("m").schema()
    by_name = {c.name: c for c in profile.columns}
    assert is_measure(by_name["wind_speed"], schema["wind_speed"])
    assert not is_measure(by_name["county_id"], schema["county_id"])
    assert not is_measure(by_name["flag"], schema["flag"])


def test_numeric_sentinels_only_at_the_ends(tables):
    tables.sql("CREATE TABLE s AS SELECT CASE WHEN i = 0 THEN -999 ELSE i END AS reading, "
               "i - 999 AS offset_value FROM range(2000) r(i)")
    cols = {c.name: c for c in tables.profile("s").columns}
    assert numeric_sentinels(cols["reading"]) == [-999]
    # -999 is the minimum of offset_value too, which is how a sentinel shows; 1000 is no sentinel
    assert numeric_sentinels(cols["offset_value"]) == [-999]


def test_issue_ids_and_columns(tables):
    tables.sql("CREATE TABLE films AS SELECT i AS id, 'x' AS title FROM range(3) r(i)")
    ctx = tables.context("films")
    one = issue(ctx, "missing_values", "title", severity="low", category="quick_fixes", affectedRows=1,
                description="d", suggestedAction="a", details={"k": 1})
    assert one.id == "films_missing_values_title" and one.affectedColumns == ["title"]
    assert one.source == "detector"
    table_wide = issue(ctx, "duplicate_rows", None, severity="low", category="quick_fixes", affectedRows=1,
                       description="d", suggestedAction="a", details={"k": 1})
    assert table_wide.id == "films_duplicate_rows" and table_wide.affectedColumns == ["id", "title"]
    joined = issue(ctx, "duplicate_keys", "id, title", columns=["id", "title"], severity="low",
                   category="quick_fixes", affectedRows=1, description="d", suggestedAction="a", details={"k": 1})
    assert joined.affectedColumns == ["id", "title"]


def test_values_and_reading_are_read_once(tables, monkeypatch):
    tables.sql("CREATE TABLE r AS SELECT CASE WHEN i % 10 = 0 THEN 'NA' ELSE CAST(i AS VARCHAR) END AS rating "
               "FROM range(50) r(i)")
    ctx = tables.context("r")
    cp = ctx.profile.columns[0]
    calls = []
    real = text_values.value_counts
    monkeypatch.setattr(text_values, "value_counts", lambda t, c: calls.append(c) or real(t, c))
    values = ctx.values(cp)
    assert values["NA"] == 5 and len(values) == 46
    assert ctx.reading(cp).placeholders == {"NA": 5}
    assert ctx.values(cp) is values and len(calls) == 1


def test_free_text_with_too_many_values_is_not_read(tables, monkeypatch):
    tables.sql("CREATE TABLE f AS SELECT 'note ' || i AS note FROM range(50) r(i)")
    monkeypatch.setattr(text_values, "MAX_DISTINCT", 10)
    ctx = tables.context("f")
    cp = ctx.profile.columns[0]
    assert ctx.values(cp) is None and ctx.reading(cp) is None


def test_the_free_text_columns_of_a_table_are_counted_in_one_scan(tables, monkeypatch):
    tables.sql("""CREATE TABLE w AS SELECT 'note ' || i AS note, '"q' || i || '"' AS quoted,
                  CASE WHEN i % 7 = 0 THEN 'n/a' ELSE 'x' || i END AS code, NULL::VARCHAR AS empty, i AS n
                  FROM range(60) r(i)""")
    monkeypatch.setattr(text_values, "MAX_DISTINCT", 10)
    ctx = tables.context("w")
    columns = {c.name: c for c in ctx.profile.columns}
    alone = {name: _free_text_stats(ctx.table, [name]) for name in ("note", "quoted", "code")}
    scans = []
    monkeypatch.setattr(context_module, "one", lambda table, **aggs: scans.append(aggs) or one(table, **aggs))
    # as detect_issues calls the checks: each on a table narrowed to its column, the whole beside it
    narrowed = dataclasses.replace(ctx, table=ctx.table.select("code"), whole=ctx.table)
    assert free_text_counts(narrowed, columns["code"]) == alone["code"]["code"]
    assert len(scans) == 1 and {k[:-1] for k in scans[0]} == {"values", "quoted", "padded", "maybe", "first", "last"}
    for name in ("note", "quoted"):
        assert free_text_counts(narrowed, columns[name]) == alone[name][name]
    assert len(scans) == 1
    assert alone["quoted"]["quoted"]["quoted"] == 60 and alone["code"]["code"]["maybe_placeholders"] == 9
    # the one value that could be a placeholder, read in the same scan
    assert alone["code"]["code"]["first_maybe"] == alone["code"]["code"]["last_maybe"] == "n/a"
    assert alone["note"]["note"]["first_maybe"] == alone["note"]["note"]["last_maybe"] == "note 0"
    # NULLs are no candidates
    assert _free_text_stats(ctx.table, ["empty"])["empty"] == {
        "values": 0, "quoted": 0, "padded": 0, "maybe_placeholders": 0, "first_maybe": None, "last_maybe": None}


@pytest.mark.parametrize(("n", "noun", "expected"), [
    (1, "row", "1 row"), (0, "row", "0 rows"), (2, "value", "2 values"),
    (3201, "movie", "3,201 movies"), (2, "category", "2 categories"),
])
def test_count_puts_the_noun_in_the_right_number(n, noun, expected):
    assert count(n, noun) == expected
