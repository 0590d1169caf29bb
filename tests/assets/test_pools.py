"""assets/pools.py: a Dagster pool per database on every table asset, and its limit from the settings.

Real definitions (build_definitions), runs created in a real instance, and the real sensor and
schedule ticking against a real instance's pool storage.  The pool holding with a real run
queue, daemon and webserver is tests/e2e/test_pools.py.
"""

from __future__ import annotations

import datetime
import re
import sqlite3

import dagster as dg
import pytest

from cataloger_dagster.assets.pools import apply_pool_limit, database_pool, pool_config_problems, with_pool
from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.jobs import CATALOG_TABLE_JOB, TABLE_ASSETS
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.sensors.database_change import build_database_change_sensor
from cataloger_dagster.sensors.refresh_schedule import build_refresh_schedule
from cataloger_dagster.settings.model import default, load_settings

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

SHELL_SAFE_POOL = re.compile(r"^cataloger/[A-Za-z0-9_.-]+$")
HOSTILE = ['o"k', "o'k", "ünïcødé", "shop floor", "shop_floor", "; rm -rf / #", "$(id)", "a\nb", "", "x" * 300]
RUN_GRANULARITY = {"concurrency": {"pools": {"granularity": "run"}}}


def test_a_plain_name_is_kept_and_every_other_is_shell_safe_and_its_own():
    assert database_pool("shop") == "cataloger/shop"
    assert database_pool("sales-2024.v2") == "cataloger/sales-2024.v2"
    pools = [database_pool(name) for name in HOSTILE]
    for name, pool in zip(HOSTILE, pools):
        assert SHELL_SAFE_POOL.match(pool), (name, pool)
        assert len(pool) <= 100, pool
        assert database_pool(name) == pool  # the same database, the same pool, in every process
    assert len(set(pools)) == len(HOSTILE)  # "shop floor" and "shop_floor" are two databases


@pytest.fixture
def database_url(monkeypatch):
    """Building the definitions makes the URL this process's CATALOGER_DATABASE; undone after."""
    def use(url: str) -> str:
        monkeypatch.setenv("CATALOGER_DATABASE", url)
        return url
    return use


@pytest.mark.parametrize("url, name", [
    ("duckdb:///data/o'k \"ünï\".duckdb", "o'k \"ünï\".duckdb"),
    ("postgres://reader:pw-5ecret@db.internal:5432/sales?sslmode=require", "db.internal_5432/sales/public"),
])
def test_every_table_asset_and_run_is_in_its_databases_pool(database_url, url, name):
    pool = database_pool(name)
    defs = build_definitions(load_settings(database=database_url(url)))
    assert "5ecret" not in pool
    for asset in TABLE_ASSETS:
        assert defs.resolve_assets_def(asset.key).op.pool == pool, asset.key   # in any job, a UI backfill too
    assert defs.resolve_assets_def("catalog_index").op.pool is None   # it reads the store only
    job = defs.resolve_job_def(CATALOG_TABLE_JOB)
    with dg.instance_for_test(overrides=RUN_GRANULARITY) as instance:
        run = instance.create_run_for_job(job, tags={"dagster/partition": "orders"})
        # what the run queue reads to hold the run until the pool has a free slot
        assert run.run_op_concurrency.all_pools == {pool}
    assert all(a.op.pool is None for a in TABLE_ASSETS)   # the shared definitions are left as declared


def tiny_database(path) -> str:
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)")
        con.execute("INSERT INTO orders VALUES (1, 9.5)")
    return f"sqlite://{path}"


def limits(instance: dg.DagsterInstance) -> dict[str, int]:
    return {p.name: p.limit for p in instance.event_log_storage.get_pool_limits()}


def tick(instance, settings, url) -> None:
    database = DatabaseResource(url=url)
    sensor = build_database_change_sensor(settings)
    instance.add_dynamic_partitions("tables", ["orders"])   # what the sensor's first tick would have added
    with dg.build_sensor_context(instance=instance, instance_ref=instance.get_ref(),
                                 definitions=build_definitions(settings),
                                 resources={"database": database}) as context:
        sensor.evaluate_tick(context)


def test_the_sensor_gives_the_pool_the_setting_and_a_persons_limit_stays_while_it_is_unset(
        tmp_path, database_url, monkeypatch):
    monkeypatch.delenv("CATALOGER_DATABASE_CONCURRENCY", raising=False)
    url = database_url(tiny_database(tmp_path / "shop.sqlite"))
    pool = database_pool("shop.sqlite")
    with dg.instance_for_test(overrides=RUN_GRANULARITY) as instance:
        tick(instance, load_settings(database=url), url)
        assert limits(instance)[pool] == default("database_concurrency")   # a new pool: the default

        instance.event_log_storage.set_concurrency_slots(pool, 7)   # `dagster instance concurrency set`
        tick(instance, load_settings(database=url), url)
        assert limits(instance)[pool] == 7

        tick(instance, load_settings(database=url, database_concurrency=3), url)   # set: it decides
        assert limits(instance)[pool] == 3

        monkeypatch.setenv("CATALOGER_DATABASE_CONCURRENCY", "2")   # the environment, as a deployment sets it
        tick(instance, load_settings(database=url), url)
        assert limits(instance)[pool] == 2


def test_the_schedule_applies_the_setting_too(tmp_path, database_url):
    url = database_url(tiny_database(tmp_path / "shop.sqlite"))
    settings = load_settings(database=url, database_concurrency=5)
    with dg.instance_for_test(overrides=RUN_GRANULARITY) as instance:
        schedule = build_refresh_schedule(settings)
        with dg.build_schedule_context(instance=instance, resources={"database": DatabaseResource(url=url)},
                                       scheduled_execution_time=datetime.datetime.now(datetime.timezone.utc)) as ctx:
            schedule.evaluate_tick(ctx)
        assert limits(instance)[database_pool("shop.sqlite")] == 5


def test_an_unset_setting_leaves_a_new_pool_to_dagster_yamls_default_limit():
    warned = []
    overrides = {"concurrency": {"pools": {"granularity": "run", "default_limit": 6}}}
    with dg.instance_for_test(overrides=overrides) as instance:
        assert apply_pool_limit(instance, "cataloger/shop", 4, explicit=False, warn=warned.append) is None
        assert "cataloger/shop" not in limits(instance)   # the run queue gives it 6 when a run needs it
        assert apply_pool_limit(instance, "cataloger/shop", 4, explicit=True, warn=warned.append) == 4
        assert limits(instance)["cataloger/shop"] == 4
    assert warned == []


@pytest.mark.parametrize("overrides, expected", [
    ({}, "granularity: run"),   # Dagster's default granularity, `op`: runs would start, then wait
    ({"run_coordinator": {"module": "dagster._core.run_coordinator", "class": "DefaultRunCoordinator"}},
     "QueuedRunCoordinator"),
])
def test_an_instance_that_would_not_queue_the_runs_is_named_with_the_fix(overrides, expected):
    warned = []
    with dg.instance_for_test(overrides=overrides) as instance:
        assert apply_pool_limit(instance, "cataloger/shop", 2, explicit=True, warn=warned.append) == 2
        assert [expected in problem for problem in pool_config_problems(instance)] == [True]
    assert len(warned) == 1 and "cataloger/shop" in warned[0] and expected in warned[0]
    assert "deploy/dagster.yaml" in warned[0]


def test_an_asset_put_in_a_pool_keeps_everything_else_it_declares():
    pooled = with_pool(TABLE_ASSETS, "cataloger/shop")
    for declared, in_pool in zip(TABLE_ASSETS, pooled):
        assert in_pool.op.pool == "cataloger/shop"
        assert list(in_pool.specs) == list(declared.specs), declared.key   # key, partitions, code version, metadata
        assert in_pool.keys_by_input_name == declared.keys_by_input_name
        assert in_pool.op.required_resource_keys == declared.op.required_resource_keys
        assert in_pool.op.config_schema is declared.op.config_schema
        assert [(o.name, o.code_version) for o in in_pool.op.output_defs] == \
            [(o.name, o.code_version) for o in declared.op.output_defs]
    assert with_pool(pooled, "cataloger/shop") == pooled   # already in it: left as it is
