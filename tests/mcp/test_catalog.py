"""What the MCP server reads from the store, on a real catalog run."""

from __future__ import annotations

import pytest
from mcp_support import TABLE

from cataloger_dagster.core.investigate.learning import ranking_context
from cataloger_dagster.core.layout import SCRIPT
from cataloger_dagster.mcp.catalog import Catalog, CatalogError
from cataloger_dagster.resources.store import LocalStore


@pytest.fixture
def catalog(small_catalog) -> Catalog:
    return Catalog(LocalStore(root=str(small_catalog[1])), "club.duckdb")


def test_summary_matches_the_stored_run(catalog):
    (entry,) = catalog.summary()
    results = catalog.results(TABLE)
    assert entry["table"] == TABLE and entry["rows"] == results.profile.row_count
    assert entry["open_issues"] == len(results.issues.issues) and 0 < entry["health"] <= 100


def test_a_table_has_its_understanding_issues_with_verdicts_and_links(catalog):
    table = catalog.table(TABLE)
    stored = {i.issue_id: i for i in catalog.results(TABLE).investigations.investigations}
    assert [i["id"] for i in table["issues"]] == [i.id for i in catalog.results(TABLE).issues.issues]
    for issue in table["issues"]:
        assert issue["verdict"] == stored[issue["id"]].verdict and issue["evidence"] == stored[issue["id"]].evidence
    assert table["understanding"]["summary"]["name"] == TABLE
    assert table["reviews"] == []
    assert table["links"]["page"].endswith("catalog.html") and table["links"]["best_script"].endswith(SCRIPT)


def test_scripts_best_latest_and_by_timestamp(catalog):
    best = catalog.script(TABLE, "best")
    prefix = catalog.prefix(TABLE)
    ids, schema = ranking_context(catalog.store, prefix)
    assert best["timestamp"] == catalog.store.best_script(prefix, SCRIPT, current_ids=ids, schema_hash=schema).timestamp
    assert catalog.script(TABLE, "latest")["code"] == best["code"]  # one run: one script
    assert catalog.script(TABLE, best["timestamp"])["code"] == best["code"]
    with pytest.raises(CatalogError, match="no script at"):
        catalog.script(TABLE, "2001-01-01T00:00:00Z")
    with pytest.raises(CatalogError, match="give best, latest or a run timestamp"):
        catalog.script(TABLE, "yesterday")


def test_an_unknown_table_names_the_known_ones(catalog):
    with pytest.raises(CatalogError, match=f"not in the catalog.*{TABLE}"):
        catalog.table("nope'; DROP TABLE x")
    assert "<html" in catalog.page(TABLE).lower() and TABLE in catalog.index()


def test_a_table_whose_only_script_came_through_mcp_has_no_best(small_catalog, tmp_path):
    """Its script is shown with its origin, never as the best; the table itself still reads."""
    import json
    import shutil

    from cataloger_dagster.core.layout import metrics_filename

    shutil.copytree(small_catalog[1], tmp_path / "store")
    catalog = Catalog(LocalStore(root=str(tmp_path / "store")), "club.duckdb")
    assert catalog.script(TABLE, "best")["origin"] == "catalog"
    latest = catalog.script(TABLE, "latest")
    # the store never overwrites a run: the file is replaced on disk, as if an MCP client had saved it
    (path,) = (tmp_path / "store").rglob(f"{latest['timestamp']}/{metrics_filename(SCRIPT)}")
    path.write_text(json.dumps({**latest["metrics"], "origin": "mcp", "session": "c" * 32}))
    assert catalog.script(TABLE, "latest")["origin"] == catalog.script(TABLE, latest["timestamp"])["origin"] == "mcp"
    with pytest.raises(CatalogError, match="no script of the catalog's own"):
        catalog.script(TABLE, "best")
    assert catalog.table(TABLE)["links"]["best_script"] is None
