"""search_catalog's index over a real catalog run: what it finds, how it ranks, when it rebuilds."""

from __future__ import annotations

import shutil

from mcp_support import TABLE

from cataloger_dagster.mcp.catalog import Catalog
from cataloger_dagster.mcp.search import SearchIndex
from cataloger_dagster.resources.store import LocalStore


def _index(store_path) -> SearchIndex:
    store = LocalStore(root=str(store_path))
    return SearchIndex(Catalog(store, "club.duckdb"))  # mcp_support's database file is club.duckdb


def test_it_finds_tables_columns_issues_and_evidence(small_catalog):
    index = _index(small_catalog[1])
    assert index.search("members")[0]["kind"] == "table"
    column = [r for r in index.search("email") if r["kind"] == "column"]
    assert column and column[0]["ref"] == f"{TABLE}.email"
    issue = index.search("sentinel age")
    assert issue[0]["kind"] == "issue" and issue[0]["ref"] == f"{TABLE}_sentinel_values_age"
    # the investigation's evidence is indexed too: its verdict
    assert any(r["kind"] == "issue" for r in index.search("confirmed"))
    assert index.search("zzzznothing") == []


def test_fts_syntax_in_a_query_is_only_words(small_catalog):
    index = _index(small_catalog[1])
    for hostile in ['email" OR tbl:*', "NEAR(email age)", "*", "email AND", '"', "body:email -age", ""]:
        index.search(hostile)  # never an FTS syntax error
    assert index.search('"email"') == index.search("email")


def test_the_index_is_rebuilt_when_the_store_changes(small_catalog, tmp_path):
    copy = tmp_path / "store"
    shutil.copytree(small_catalog[1], copy)
    index = _index(copy)
    assert index.search("members") and index.builds == 1
    index.search("email")
    assert index.builds == 1  # unchanged store: the same index
    shutil.rmtree(copy / "club.duckdb" / TABLE)
    assert index.search("members") == [] and index.builds == 2
