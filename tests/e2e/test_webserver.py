"""End to end through the real webserver: `dagster dev -w workspace.yaml`, driven by GraphQL.

The `catalog_stack` fixture (tests/conftest.py, tests/support/e2e_support.py) starts `dagster dev`
on a free loopback port over a small demo DuckDB database, with the database-change
sensor ticking every 5 s; stopping it at the end of the session asserts that none of the
processes it started is left.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from e2e_support import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.bwrap]

TABLE_ASSETS = ["table_profile", "table_understanding", "quality_issues", "investigations",
                "recent_summary", "catalog_page"]
ALL_ASSETS = [*TABLE_ASSETS, "catalog_index"]
TABLE = "customers"  # has planted defects, so the investigations have something to check

ASSET_NODES = """{
  assetNodes {
    assetKey { path }
    groupName
    jobNames
    isPartitioned
    partitionDefinition { type dimensionTypes { dynamicPartitionsDefinitionName } }
    partitionKeysByDimension { partitionKeys }
  }
}"""
SENSOR = """query Sensor($selector: SensorSelector!) {
  sensorOrError(sensorSelector: $selector) {
    __typename
    ... on Sensor { minIntervalSeconds sensorState { status } }
  }
}"""
SENSOR_RUNS = """query Runs($filter: RunsFilter) {
  runsOrError(filter: $filter) {
    ... on Runs { results { runId status tags { key value } } }
  }
}"""
RUN_MATERIALIZATIONS = """query Run($id: ID!) {
  runOrError(runId: $id) {
    __typename
    ... on Run {
      status
      tags { key value }
      assetMaterializations {
        assetKey { path }
        partition
        metadataEntries {
          label
          __typename
          ... on IntMetadataEntry { intValue }
          ... on FloatMetadataEntry { floatValue }
          ... on PathMetadataEntry { path }
          ... on UrlMetadataEntry { url }
          ... on TextMetadataEntry { text }
        }
      }
    }
  }
}"""


def demo_tables(database: Path) -> dict[str, int]:
    """Each table of the demo database with its row count, read straight from DuckDB."""
    with duckdb.connect(str(database), read_only=True) as con:
        names = [r[0] for r in con.sql("SELECT table_name FROM information_schema.tables").fetchall()]
        return {n: con.sql(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}


def metadata(materialization: dict) -> dict:
    values = {}
    for entry in materialization["metadataEntries"]:
        value = next((entry[k] for k in ("intValue", "floatValue", "path", "url", "text") if k in entry),
                     entry["__typename"])
        values[entry["label"]] = value
    return values


def test_assets_and_sensor_partitions(catalog_stack):
    dev = catalog_stack.dev
    tables = demo_tables(catalog_stack.database)
    assert TABLE in tables and len(tables) >= 3

    def partitions_complete():
        nodes = {"/".join(n["assetKey"]["path"]): n for n in dev.graphql(ASSET_NODES)["assetNodes"]}
        per_table = [nodes[a] for a in TABLE_ASSETS if a in nodes]
        keys = [set(n["partitionKeysByDimension"][0]["partitionKeys"]) if n["partitionKeysByDimension"] else set()
                for n in per_table]
        return nodes if len(per_table) == len(TABLE_ASSETS) and all(k == set(tables) for k in keys) else None

    # the sensor, not the test, adds the partitions: its first tick is at most ~5 s away
    nodes = wait_for(f"the sensor to add a `tables` partition for each of {sorted(tables)}",
                     partitions_complete, timeout=120, every=2)

    assert set(ALL_ASSETS) <= set(nodes)
    for name in TABLE_ASSETS:
        node = nodes[name]
        assert node["isPartitioned"], name
        assert node["partitionDefinition"]["type"] == "DYNAMIC", name
        assert node["partitionDefinition"]["dimensionTypes"][0]["dynamicPartitionsDefinitionName"] == "tables"
        assert "catalog_table" in node["jobNames"], f"{name} is not in the catalog_table job"
    assert not nodes["catalog_index"]["isPartitioned"]
    assert all(nodes[a]["groupName"] for a in ALL_ASSETS)

    location, repository = catalog_stack.repository()
    sensor = dev.graphql(SENSOR, {"selector": {"repositoryLocationName": location, "repositoryName": repository,
                                               "sensorName": "database_change_sensor"}})["sensorOrError"]
    assert sensor["__typename"] == "Sensor", sensor
    assert sensor["sensorState"]["status"] == "RUNNING"  # on by default
    assert sensor["minIntervalSeconds"] == 5  # CATALOGER_SENSOR_INTERVAL_S reached the daemon

    # one request per new table, keyed by table and fingerprint (they stay queued: see e2e_support)
    def sensor_runs():
        runs = dev.graphql(SENSOR_RUNS, {"filter": {"tags": [
            {"key": "dagster/sensor_name", "value": "database_change_sensor"}]}})["runsOrError"]["results"]
        return runs if len(runs) >= len(tables) else None

    runs = wait_for("one run request per table from the sensor", sensor_runs, timeout=60, every=2)
    by_table = {}
    for run in runs:
        tags = {t["key"]: t["value"] for t in run["tags"]}
        by_table.setdefault(tags["dagster/partition"], []).append(tags)
    assert set(by_table) == set(tables)
    for table, requests in by_table.items():
        assert len(requests) == 1, f"{table} was requested {len(requests)} times for one fingerprint"
        tags = requests[0]
        assert tags["cataloger/reason"] == "new_table"
        assert tags["dagster/run_key"] == f"{table}:{tags['cataloger/fingerprint']}"


def test_launch_one_partition_and_read_its_metadata(catalog_stack):
    dev = catalog_stack.dev
    rows = demo_tables(catalog_stack.database)[TABLE]
    # launching needs the partition, which the sensor adds
    wait_for(f"partition {TABLE}", lambda: TABLE in str(dev.graphql(ASSET_NODES)), timeout=120, every=2)

    run_id = catalog_stack.catalog_partition(TABLE)

    run = dev.graphql(RUN_MATERIALIZATIONS, {"id": run_id})["runOrError"]
    assert run["__typename"] == "Run" and run["status"] == "SUCCESS"
    assert {t["key"]: t["value"] for t in run["tags"]}["dagster/partition"] == TABLE
    mats = {"/".join(m["assetKey"]["path"]): m for m in run["assetMaterializations"]}
    assert set(mats) == set(TABLE_ASSETS), f"materialized {sorted(mats)}"
    assert all(m["partition"] == TABLE for m in mats.values())
    meta = {name: metadata(m) for name, m in mats.items()}

    assert meta["table_profile"]["dagster/row_count"] == rows
    assert meta["catalog_page"]["dagster/row_count"] == rows
    assert meta["table_profile"]["dagster/column_schema"] == "TableSchemaMetadataEntry"

    issues = meta["quality_issues"]
    assert issues["issues"] >= 1, "customers has planted defects; none was found"
    by_severity = sum(issues[f"issues_{s}"] for s in ("high", "medium", "low"))
    assert by_severity == issues["issues"]
    # nobody reviewed anything yet: every raised issue is open
    assert issues["issues_open"] == issues["issues"] and issues["issues_dismissed"] == 0

    found = meta["investigations"]
    assert found["investigations"] >= 1
    assert 0.0 <= found["pass_rate"] <= 1.0
    assert meta["catalog_page"]["pass_rate"] == found["pass_rate"]
    assert found["sandbox_cells"] >= 1

    page = Path(meta["catalog_page"]["catalog_page"])
    assert page.is_file() and page.is_relative_to(catalog_stack.store), page
    assert TABLE in page.parts
    html = page.read_text()
    assert "<html" in html.lower() and TABLE in html
    assert Path(meta["catalog_page"]["script"]).is_file()
    assert Path(meta["catalog_page"]["recent_summary"]).is_file()
    assert Path(meta["investigations"]["script"]) == Path(meta["catalog_page"]["script"])
