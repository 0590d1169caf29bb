"""Merging into a dbt schema file a person keeps: what they wrote stays byte for byte, the
catalog's part is replaced on each export and never duplicated, and their descriptions stay
unless told otherwise."""

from __future__ import annotations

import difflib

from guarded_shop import results_of
from ruamel.yaml import YAML

from cataloger_dagster.core.guardrails.build import build_suite
from cataloger_dagster.core.guardrails.dbt_schema import Descriptions, TableExport, dump, load, merge

PERSONS = """\
# The shop's sources: kept by the data team.
version: 2

models:
  - name: daily_sales   # a model of ours
    description: Sales per day.

sources:
  - name: shop
    schema: main
    tables:
      - name: orders
        description: "One row per order, as the shop writes it."
        columns:
          # the key
          - name: order_id
            data_tests:
              - not_null   # ours, checked every night
          - name: status
            description: Where the order is.
      - name: returns   # not cataloged yet
"""

UNDERSTOOD = Descriptions("Orders of the shop {{ shop }}.",
                          [("order_id", "The order's number."), ("status", "The order's state."),
                           ("total", "What the customer paid.")])


def _suite(path):
    con, results = results_of(path)
    return build_suite(con.table("orders"), results, tables={"customers": con.table("customers")})


def _merged(text, suite, descriptions=UNDERSTOOD, **options):
    data, yaml = load(text)
    merge(data, "shop", "main", TableExport("orders", suite, descriptions), **options)
    return dump(data, yaml)


def _orders(text):
    data = YAML(typ="safe").load(text)
    source = next(s for s in data["sources"] if s["name"] == "shop")
    return next(t for t in source["tables"] if t["name"] == "orders")


def _column(orders, name):
    return next(c for c in orders["columns"] if c["name"] == name)


def test_a_person_s_file_survives_byte_for_byte_outside_the_catalog_s_part(shop):
    suite = _suite(shop)
    merged = _merged(PERSONS, suite)
    removed = [line for line in difflib.ndiff(PERSONS.splitlines(), merged.splitlines()) if line.startswith("- ")]
    assert removed == []  # every line they wrote is there, in its place: the catalog only added
    orders = _orders(merged)
    assert orders["description"] == "One row per order, as the shop writes it."  # theirs, kept
    assert _column(orders, "status")["description"] == "Where the order is."
    assert _column(orders, "order_id")["description"] == "The order's number."  # none there: the catalog's
    assert _column(orders, "total")["description"] == "What the customer paid."
    order_id = _column(orders, "order_id")["data_tests"]
    assert order_id[0] == "not_null" and [next(iter(t)) for t in order_id[1:]] == ["unique"]  # theirs not repeated
    assert _merged(merged, suite) == merged  # a second export changes nothing


def test_a_new_suite_replaces_the_catalog_s_tests_and_only_them(shop):
    suite = _suite(shop)
    first = _merged(PERSONS, suite)
    smaller = suite.model_copy(update={"guardrails": [g for g in suite.guardrails if g.kind != "range"]})
    second = _merged(first, smaller)
    orders = _orders(second)
    marks = [next(iter(t.values()))["config"]["meta"]["cataloger"]["guardrail"]
             for t in [*orders["data_tests"], *(t for c in orders["columns"] for t in c.get("data_tests", []))]
             if isinstance(t, dict)]
    assert sorted(marks) == sorted(g.name for g in smaller.guardrails if g.name != "null_rate:order_id")
    assert _column(orders, "order_id")["data_tests"][0] == "not_null"
    assert _merged(second, suite) == first  # the same suite again: the same file


def test_descriptions_the_catalog_wrote_follow_the_understanding_and_a_person_s_need_overwrite(shop):
    first = _merged(PERSONS, None)
    newer = Descriptions("Orders, newer.", [("order_id", "The order's id."), ("status", "Its state now.")])
    second = _orders(_merged(first, None, newer))
    assert _column(second, "order_id")["description"] == "The order's id."  # the catalog's own: updated
    assert _column(second, "status")["description"] == "Where the order is."  # a person's: kept
    assert second["description"] == "One row per order, as the shop writes it."
    forced = _orders(_merged(first, None, newer, overwrite_descriptions=True))
    assert _column(forced, "status")["description"] == "Its state now." and forced["description"] == "Orders, newer."


def test_a_fresh_file_declares_the_source_quoted_with_hostile_names_as_data():
    odd = 'a"b {{ x }}\n%s'
    data, yaml = load("")
    merge(data, "shop.duckdb", "main", TableExport(odd, None, Descriptions(f"d {odd}", [(odd, f"c {odd}")])))
    text = dump(data, yaml)
    loaded = YAML(typ="safe").load(text)
    source = loaded["sources"][0]
    assert source["name"] == "shop_duckdb" and source["quoting"] == {"identifier": True, "schema": True}
    table = source["tables"][0]
    assert table["name"] == "a\"b {{ '{' }}{{ '{' }} x {{ '}' }}{{ '}' }}\n%s"
    assert table["config"]["meta"]["cataloger"]["description"] == f"d {odd}"  # meta: dbt reads it unrendered
    assert table["columns"][0]["quote"] is True
