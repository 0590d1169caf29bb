"""The user's tables in Dagster's asset catalog, through a real `dagster dev` and its GraphQL API.

Two tables of the shop database are cataloged first; `dagster dev` then lists each as an asset
of its own (`catalog/shop_duckdb/<table>`) with its column schema, row count, description, owner,
its findings' check, and the reference found between them as lineage (CATALOGER_TABLE_LINEAGE=1).  A third table
cataloged while it runs appears after a reload of the code location, with no change of code.
"""

from __future__ import annotations

import pytest

from cataloged_shop import ODD, duckdb_tables, make_cataloged_shop
from cataloger_dagster.assets.table_specs import key_part
from e2e_support import DagsterDev, wait_for
from tests.conftest import sandbox_problem, service_unavailable

pytestmark = [pytest.mark.slow, pytest.mark.bwrap]

ASSET_NODES = """{
  assetNodes {
    assetKey { path }
    description
    isPartitioned
    isMaterializable
    groupName
    kinds
    dependencyKeys { path }
    owners { __typename ... on TeamAssetOwner { team } ... on UserAssetOwner { email } }
    tags { key value }
    assetChecksOrError { ... on AssetChecks { checks { name } } }
    metadataEntries {
      label
      __typename
      ... on TableSchemaMetadataEntry { schema { columns { name type description } } }
      ... on IntMetadataEntry { intValue }
      ... on TextMetadataEntry { text }
      ... on PathMetadataEntry { path }
    }
  }
}"""
RELOAD = """mutation Reload($name: String!) {
  reloadRepositoryLocation(repositoryLocationName: $name) {
    __typename
    ... on WorkspaceLocationEntry { locationOrLoadError { __typename } }
  }
}"""
REPOSITORIES = "{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } } } } }"


def table_nodes(dev: DagsterDev) -> dict[str, dict]:
    """{table name (as its metadata keeps it): its asset node} of the assets under catalog/."""
    found = {}
    for node in dev.graphql(ASSET_NODES)["assetNodes"]:
        if node["assetKey"]["path"][0] == "catalog":
            entries = {e["label"]: e for e in node["metadataEntries"]}
            found[entries["table"]["text"]] = node | {"metadata": entries}
    return found


@pytest.fixture
def shop_dev(tmp_path):
    problem = sandbox_problem("local")
    if problem:
        service_unavailable(problem)
    database, store = make_cataloged_shop(tmp_path, tables=("customers", "events"))
    dev = DagsterDev(home=tmp_path / "dagster_home", env={
        "CATALOGER_DATABASE": f"duckdb:///{database}",
        "CATALOGER_STORE": str(store),
        "CATALOGER_TABLE_LINEAGE": "1",
        "CATALOGER_TABLE_OWNERS": '{"events": "sales"}',
        "CATALOGER_SENSOR_INTERVAL_S": "3600",
    })
    dev.start(timeout=600)
    try:
        yield dev, database, store
    finally:
        left = dev.stop()
        assert not left, f"processes left running after stopping dagster dev: {left}"


def test_the_asset_catalog_lists_the_users_tables_with_their_column_schema(shop_dev):
    from cataloger_dagster.cli.runner import catalog_database

    dev, database, store = shop_dev
    truth = duckdb_tables(database)
    nodes = table_nodes(dev)
    assert set(nodes) == {"customers", "events"}
    for table, node in nodes.items():
        rows, columns = truth[table]
        assert node["assetKey"]["path"] == ["catalog", "shop_duckdb", table]
        assert not node["isPartitioned"] and not node["isMaterializable"]
        schema = node["metadata"]["dagster/column_schema"]
        assert schema["__typename"] == "TableSchemaMetadataEntry"
        assert [c["name"] for c in schema["schema"]["columns"]] == columns
        assert all(c["description"] and c["type"] for c in schema["schema"]["columns"])
        assert node["metadata"]["dagster/row_count"]["intValue"] == rows
        assert node["description"] and node["groupName"] == "tables" and "table" in node["kinds"]
        assert {"key": "cataloger/database", "value": "shop.duckdb"} in node["tags"]
    assert nodes["events"]["owners"] == [{"__typename": "TeamAssetOwner", "team": "sales"}]
    assert nodes["events"]["dependencyKeys"] == [{"path": ["catalog", "shop_duckdb", "customers"]}]
    assert nodes["events"]["metadata"]["findings_high"]["intValue"] >= 1
    assert all(sorted(c["name"] for c in n["assetChecksOrError"]["checks"]) == ["guardrails", "open_findings"]
               for n in nodes.values())
    # the pipeline's own assets keep their partitions
    pipeline = {n["assetKey"]["path"][0]: n for n in dev.graphql(ASSET_NODES)["assetNodes"]}
    assert pipeline["table_profile"]["isPartitioned"] and pipeline["catalog_page"]["isPartitioned"]

    # a table cataloged since appears on the next reload of the code location
    report = catalog_database(database=f"duckdb://{database}", store=str(store), agent="heuristic",
                              sandbox="local", tables=[ODD])
    assert not report.failed, report.failed
    assert ODD not in table_nodes(dev)
    location = dev.graphql(REPOSITORIES)["repositoriesOrError"]["nodes"][0]["location"]["name"]
    reloaded = dev.graphql(RELOAD, {"name": location})["reloadRepositoryLocation"]
    assert reloaded["__typename"] == "WorkspaceLocationEntry", reloaded
    nodes = wait_for(f"{ODD!r} in the asset catalog after the reload",
                     lambda: (found := table_nodes(dev)) and ODD in found and found, timeout=120, every=2)
    odd = nodes[ODD]
    assert odd["assetKey"]["path"] == ["catalog", "shop_duckdb", key_part(ODD)]
    assert [c["name"] for c in odd["metadata"]["dagster/column_schema"]["schema"]["columns"]] == truth[ODD][1]
