"""A table's own documentation: a dbt manifest's descriptions and tests, the database's comments,
and what the catalog does with them (the understanding keeps them; a dbt test's check is not
pinned twice)."""

from __future__ import annotations

import pytest

from commented_tables import understanding
from dbt_manifest import MANIFEST, write_manifest
from guarded_shop import make_shop, results_of
from cataloger_dagster.core.guardrails.build import build_suite
from cataloger_dagster.core.writeback.documented import (
    DocumentationError, from_manifest, read_manifest, with_comments, with_documentation,
)


def test_a_model_is_found_by_its_alias_with_its_descriptions_and_tests(tmp_path):
    documented = from_manifest(read_manifest(write_manifest(tmp_path)), "orders")
    assert documented.description == "Orders as the shop records them, one row per order."
    assert documented.columns == {"order_id": "The order's key."}  # an empty description is none
    assert [(t.test, t.column) for t in documented.dbt_tests] == [("unique", "order_id"), ("accepted_values", "status")]


def test_a_source_is_found_by_its_identifier_whatever_the_case():
    documented = from_manifest(MANIFEST, "customers")
    assert documented.description == "Everyone who ever ordered."
    assert [(t.name, t.column) for t in documented.dbt_tests] == [("source_not_null_raw_customers_name", "name")]
    assert not from_manifest(MANIFEST, "payments")


def test_database_comments_fill_in_where_dbt_says_nothing():
    documented = with_comments(from_manifest(MANIFEST, "orders"), "Comment of the table.",
                               {"order_id": "Comment of the key.", "status": "Comment of the status.", "x": None})
    assert documented.description == "Orders as the shop records them, one row per order."  # dbt's first
    assert documented.columns == {"order_id": "The order's key.", "status": "Comment of the status."}


def test_an_unreadable_manifest_is_one_error_naming_it(tmp_path):
    (tmp_path / "manifest.json").write_text("[1, 2")
    with pytest.raises(DocumentationError, match=r"cannot read the dbt manifest .*manifest.json: .*CATALOGER_DBT_MANIFEST"):
        read_manifest(tmp_path / "manifest.json")
    (tmp_path / "manifest.json").write_text('{"nodes": []}')
    with pytest.raises(DocumentationError, match="is not a dbt manifest.json"):
        read_manifest(tmp_path / "manifest.json")


def test_the_owners_descriptions_replace_the_guessed_ones():
    documented = with_comments(from_manifest(MANIFEST, "orders"), None, {"id": "Set by the owners."})
    kept = with_documentation(understanding(), documented)
    assert kept.summary.description == "Orders as the shop records them, one row per order."
    assert [c.description for c in kept.columns][0] == "Set by the owners."
    assert kept.columns[2].description == understanding().columns[2].description  # none given: the guess stays


def test_a_check_a_dbt_test_makes_is_not_pinned_twice(tmp_path):
    con, results = results_of(_shop(tmp_path))
    plain = build_suite(con.table("orders"), results)
    results.dbt_tests = from_manifest(MANIFEST, "orders").dbt_tests
    suite = build_suite(con.table("orders"), results)
    assert {"unique:order_id", "accepted_values:status"} <= {g.name for g in plain.guardrails}
    assert {c.name: c.dbt_test for c in suite.covered} == {
        "unique:order_id": "unique_stg_orders_order_id", "accepted_values:status": "accepted_values_stg_orders_status"}
    assert {g.name for g in suite.guardrails} == {g.name for g in plain.guardrails} - {"unique:order_id", "accepted_values:status"}


def _shop(tmp_path):
    path = tmp_path / "shop.duckdb"
    make_shop(path)
    return path
