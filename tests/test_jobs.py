"""jobs.py: the lists of assets and the `catalog_table` job that runs one table's assets.

The job is built and run for real (local sandbox) on the shop database; the lists are checked
against the asset graph, and the module against its promise to need no settings.
"""

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from cataloger_dagster.assets.catalog_index import catalog_index
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.definitions import defs
from cataloger_dagster.jobs import ALL_ASSETS, CATALOG_TABLE_JOB, TABLE_ASSETS, build_catalog_table_job
from cataloger_dagster.settings import resources
from shop import make_shop
from tests.conftest import sandbox_problem, service_unavailable

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

ROOT = Path(__file__).resolve().parents[1]
PER_TABLE = {"table_profile", "table_understanding", "quality_issues", "investigations", "recent_summary",
             "catalog_page"}


def keys(assets) -> set[str]:
    return {a.key.to_user_string() for a in assets}


def test_the_lists_hold_the_per_table_assets_and_the_index():
    assert keys(TABLE_ASSETS) == PER_TABLE and len(TABLE_ASSETS) == len(PER_TABLE)
    assert ALL_ASSETS[:-1] == TABLE_ASSETS and ALL_ASSETS[-1] is catalog_index
    for asset in TABLE_ASSETS:
        assert asset.partitions_def == tables_partitions, asset.key
    assert catalog_index.partitions_def is None  # one index over all tables


def test_every_per_table_asset_comes_after_what_it_reads():
    graph = defs.resolve_asset_graph()
    seen: set[dg.AssetKey] = set()
    for asset in TABLE_ASSETS:
        assert graph.get(asset.key).parent_keys <= seen, asset.key
        seen.add(asset.key)


def test_the_code_locations_job_selects_the_per_table_assets_by_name():
    job = defs.resolve_job_def(CATALOG_TABLE_JOB)
    assert job.name == "catalog_table"
    assert {k.to_user_string() for k in job.asset_layer.executable_asset_keys} == PER_TABLE
    assert job.partitions_def == tables_partitions


def test_a_job_over_some_assets_runs_only_those(tmp_path):
    db = make_shop(tmp_path / "shop.duckdb")
    res = resources(database=f"duckdb://{db}", store=str(tmp_path / "store"))
    job_defs = dg.Definitions(assets=[table_profile], jobs=[build_catalog_table_job([table_profile])],
                              resources=res)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events"])
        result = job_defs.resolve_job_def(CATALOG_TABLE_JOB).execute_in_process(
            partition_key="events", instance=instance)
    assert result.success
    assert {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()} == {"table_profile"}


def test_the_job_catalogs_one_table_and_leaves_the_index(tmp_path):
    problem = sandbox_problem("local")
    if problem:
        service_unavailable(problem)
    db = make_shop(tmp_path / "shop.duckdb")
    store = tmp_path / "store"
    res = resources(database=f"duckdb://{db}", store=str(store), sandbox="local")
    job_defs = dg.Definitions(assets=ALL_ASSETS, jobs=[build_catalog_table_job(TABLE_ASSETS)], resources=res)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events", "customers"])
        result = job_defs.resolve_job_def(CATALOG_TABLE_JOB).execute_in_process(
            partition_key="events", instance=instance)
        assert result.success
        events = result.get_asset_materialization_events()
        assert {e.asset_key.to_user_string() for e in events} == PER_TABLE
        assert {e.partition for e in events} == {"events"}
    runs = list((store / "shop" / "events").iterdir())
    assert len(runs) == 1 and (runs[0] / "catalog.html").is_file()
    assert not (store / "shop" / "customers").exists() and not (store / "shop" / "index.html").exists()


def test_the_lists_load_without_the_settings():
    # `cataloger run` imports them; a bad setting must be reported by the command, not by this import
    code = ("import sys, cataloger_dagster.jobs as j; "
            "print(len(j.TABLE_ASSETS), 'cataloger_dagster.definitions' in sys.modules)")
    env = {**os.environ, "CATALOGER_AGENT": "not-an-agent"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["6", "False"]
