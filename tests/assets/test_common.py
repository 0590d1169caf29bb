"""assets/common.py: the run folder every per-table asset of one Dagster run shares, the reads
and writes of `TableRun` (results read as their models), `latest_results` (which it reads earlier runs with) and `link`.

`TableRun.open` is exercised inside real Dagster runs of two small assets built for the test
(the catalog's own assets are tested in their own modules), against a real local store.
"""

import json
from pathlib import Path
from typing import ClassVar

import dagster as dg
import pytest

from cataloger_dagster.assets.common import TableRun, link, run_folder, table_prefix
from cataloger_dagster.core.results import latest_results
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.core.layout import INVESTIGATIONS, ISSUES
from cataloger_dagster.core.models import AnalysisResultModel
from cataloger_dagster.core.results import save_result
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import LocalStore, CatalogStore
from shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")


def issues(summary: str) -> AnalysisResultModel:
    return AnalysisResultModel(issues=[], summary=summary, completedAt="2026-11-27T10:00:00Z")


@dg.asset(partitions_def=tables_partitions)
def writer(context: dg.AssetExecutionContext, database: DatabaseResource, store: CatalogStore) -> dict:
    folder = TableRun.open(context, database, store, context.partition_key)
    uri = save_result(store, folder.prefix, folder.timestamp, ISSUES, issues(f"{folder.table} {context.run.run_id}"))
    return {"timestamp": folder.timestamp, "prefix": folder.prefix, "uri": uri,
            "previous": [(ts, found.summary) for ts, found in folder.previous(ISSUES)],
            # run_folder alone, as a second call within the same asset, must agree
            "again": run_folder(context, store, folder.prefix, context.partition_key)}


@dg.asset(partitions_def=tables_partitions)
def reader(context: dg.AssetExecutionContext, writer: dict, database: DatabaseResource,
           store: CatalogStore) -> dict:
    folder = TableRun.open(context, database, store, context.partition_key)
    with_metrics = folder.write_script("with.py", "print(1)\n", {"cells": 1})
    without = folder.write_script("without.py", "print(2)\n")
    return {"timestamp": folder.timestamp, "facts": folder.run().issues.summary,
            "script": folder.read_script("with.py"), "missing": folder.read_script("nope.py"),
            "with_uri": with_metrics, "without_uri": without, "uri": folder.uri("with.py")}


@pytest.fixture
def setup(tmp_path):
    db = make_shop(tmp_path / "shop.duckdb")
    res = {"database": DatabaseResource(url=f"duckdb://{db}"),
           "store": LocalStore(root=str(tmp_path / "store"))}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events", "customers"])
        yield instance, res, tmp_path / "store"


def run(instance, res, table="events"):
    result = dg.materialize([writer, reader], partition_key=table, instance=instance, resources=res)
    assert result.success
    return result, result.output_for_node("writer"), result.output_for_node("reader")


@pytest.mark.slow
def test_the_assets_of_one_run_share_one_folder_and_each_run_gets_its_own(setup):
    instance, res, store = setup
    result, w, r = run(instance, res)
    assert w["timestamp"] == r["timestamp"] == w["again"]
    assert w["prefix"] == "shop.duckdb/events"
    folder = store / "shop.duckdb" / "events" / w["timestamp"]
    info = json.loads((folder / "run.json").read_text())
    assert info["run_id"] == result.run_id and info["table"] == "events"
    # the second asset reads what the first wrote, in the same folder
    assert r["facts"] == f"events {result.run_id}"
    assert w["previous"] == []

    second, w2, r2 = run(instance, res)
    assert w2["timestamp"] == r2["timestamp"] > w["timestamp"]
    assert sorted(p.name for p in (store / "shop.duckdb" / "events").iterdir()) == [w["timestamp"], w2["timestamp"]]
    # the earlier run, never this run's own folder
    assert w2["previous"] == [(w["timestamp"], f"events {result.run_id}")]
    assert json.loads((folder / "issues.json").read_text())["summary"] == f"events {result.run_id}"  # left intact


@pytest.mark.slow
def test_partitions_are_kept_apart(setup):
    instance, res, store = setup
    _, events, _ = run(instance, res, "events")
    _, customers, _ = run(instance, res, "customers")
    assert customers["prefix"] == "shop.duckdb/customers" and customers["previous"] == []
    assert (store / "shop.duckdb" / "customers" / customers["timestamp"] / "issues.json").is_file()
    assert [p.name for p in (store / "shop.duckdb" / "events").iterdir()] == [events["timestamp"]]


def test_writes_land_where_uri_says_and_metrics_only_when_given(setup):
    instance, res, store = setup
    _, w, r = run(instance, res)
    folder = store / "shop.duckdb" / "events" / r["timestamp"]
    assert Path(w["uri"]) == folder / "issues.json"
    assert Path(r["with_uri"]) == Path(r["uri"]) == folder / "with.py"
    assert r["script"] == "print(1)\n" and r["missing"] is None
    assert json.loads((folder / "with.metrics.json").read_text()) == {"cells": 1}
    assert (folder / "without.py").read_text() == "print(2)\n"
    assert not (folder / "without.metrics.json").exists()


def test_table_prefix_uses_the_database_name_and_escapes_the_table(tmp_path):
    db = DatabaseResource(url=f"duckdb://{tmp_path / 'sales.duckdb'}")
    assert table_prefix(db, "orders") == "sales.duckdb/orders"
    # a table name with a slash must not become a nested folder
    assert table_prefix(db, "a/b").count("/") == 1


def fill(store: LocalStore, prefix: str, runs: int) -> list[str]:
    return [store.open_run(prefix, f"run-{i}") for i in range(runs)]


def test_latest_results_are_newest_first_and_skip_runs_without_the_file(tmp_path):
    store = LocalStore(root=str(tmp_path))
    prefix = "shop.duckdb/events"
    ts = fill(store, prefix, 5)
    for i in (0, 1, 3):  # runs 2 and 4 hold no issues
        store.write_json(prefix, ts[i], "issues.json", issues(f"n{i}"))
    # each read back as its model
    assert latest_results(store, prefix, "issues.json") == [
        (ts[3], issues("n3")), (ts[1], issues("n1")), (ts[0], issues("n0"))]
    assert latest_results(store, prefix, "issues.json", limit=2) == [(ts[3], issues("n3")), (ts[1], issues("n1"))]
    # `before` excludes that run and every later one
    assert latest_results(store, prefix, "issues.json", before=ts[3]) == [(ts[1], issues("n1")),
                                                                                (ts[0], issues("n0"))]
    assert latest_results(store, prefix, "issues.json", before=ts[0]) == []
    assert latest_results(store, prefix, "investigations.json") == []
    assert latest_results(store, "shop.duckdb/never", "issues.json") == []


def test_latest_results_look_past_the_ten_latest_runs(tmp_path):
    # the limit counts runs holding the file, not runs looked at
    store = LocalStore(root=str(tmp_path))
    prefix = "shop.duckdb/events"
    ts = fill(store, prefix, 14)
    store.write_json(prefix, ts[0], "issues.json", issues("oldest"))
    assert latest_results(store, prefix, "issues.json", limit=1) == [(ts[0], issues("oldest"))]


def test_link_is_a_url_for_remote_stores_and_a_path_for_folders():
    remote = link("s3://bucket/shop/events/2026/catalog.html")
    assert isinstance(remote, dg.UrlMetadataValue) and remote.value == "s3://bucket/shop/events/2026/catalog.html"
    local = link("/srv/store/shop/events/2026/catalog.html")
    assert isinstance(local, dg.PathMetadataValue) and local.value == "/srv/store/shop/events/2026/catalog.html"


class ListingStore(LocalStore):
    """Counts the listings of a table's runs: each one is a request on S3."""

    listings: ClassVar[list] = []

    def list_runs(self, prefix):
        self.listings.append(prefix)
        return super().list_runs(prefix)


@dg.asset(partitions_def=tables_partitions)
def two_kinds(context: dg.AssetExecutionContext, database: DatabaseResource, store: CatalogStore) -> dict:
    folder = TableRun.open(context, database, store, context.partition_key)
    opened = len(ListingStore.listings)     # claiming the run's folder lists the runs on its own
    out = {"timestamp": folder.timestamp, "facts": folder.previous(INVESTIGATIONS),
           "profiles": folder.previous(ISSUES), "earlier": folder.earlier_runs}
    return {**out, "listings": len(ListingStore.listings) - opened}


def test_one_step_lists_the_table_s_runs_once_for_all_its_earlier_reads(setup):
    instance, res, root = setup
    store = ListingStore(root=str(root))
    res = {**res, "store": store}
    first = dg.materialize([two_kinds], partition_key="events", instance=instance, resources=res)
    store.write_json(table_prefix(res["database"], "events"), first.output_for_node("two_kinds")["timestamp"],
                     "issues.json", issues("n1"))
    ListingStore.listings.clear()
    second = dg.materialize([two_kinds], partition_key="events", instance=instance, resources=res)
    out = second.output_for_node("two_kinds")
    earlier = first.output_for_node("two_kinds")["timestamp"]
    assert out["earlier"] == [earlier] and out["profiles"] == [(earlier, issues("n1"))] and out["facts"] == []
    assert out["listings"] == 1
