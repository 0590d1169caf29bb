"""sensors/refresh_schedule.py: the daily refresh, ticked against a real DuckDB file and a real
(temporary) Dagster instance, plus `refresh_requests` on its own."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.definitions import defs
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.sensors.database_change import REASON_TAG, DatabaseUnreachable
from cataloger_dagster.sensors.refresh_schedule import (
    CRON_ENV,
    DEFAULT_CRON,
    SCHEDULED_REFRESH,
    build_refresh_schedule,
    refresh_requests,
)
from cataloger_dagster.settings.model import load_settings

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

SCHEDULE = defs.resolve_schedule_def("refresh_schedule")
ROOT = Path(__file__).resolve().parents[2]
WHEN = dt.datetime(2026, 3, 14, 3, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE customers AS SELECT range AS id FROM range(5)")
        con.execute("CREATE TABLE orders AS SELECT range AS id FROM range(9)")
    return path


def tick(instance, url, when=WHEN):
    with dg.build_schedule_context(
        instance=instance,
        scheduled_execution_time=when,
        repository_def=defs.get_repository_def(),  # partition keys are checked against the job
        resources={"database": DatabaseResource(url=url)},
    ) as context:
        return SCHEDULE.evaluate_tick(context)


def test_one_run_per_table_keyed_by_day(db):
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["customers", "orders"])
        data = tick(instance, f"duckdb://{db}")
        assert {r.partition_key: r.run_key for r in data.run_requests} == {
            "customers": "customers:2026-03-14",
            "orders": "orders:2026-03-14",
        }
        assert {r.tags[REASON_TAG] for r in data.run_requests} == {SCHEDULED_REFRESH}
        assert {r.tags["dagster/partition"] for r in data.run_requests} == {"customers", "orders"}
        # the next day's tick is a new run for each table
        next_day = tick(instance, f"duckdb://{db}", WHEN + dt.timedelta(days=1))
        assert {r.run_key for r in next_day.run_requests} == {"customers:2026-03-15", "orders:2026-03-15"}


def test_dropped_table_is_not_refreshed(db):
    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE orders")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["customers", "orders"])  # the sensor has not run since
        data = tick(instance, f"duckdb://{db}")
        assert [r.partition_key for r in data.run_requests] == ["customers"]


def test_no_partitions_skips(db):
    with dg.instance_for_test() as instance:
        data = tick(instance, f"duckdb://{db}")
        assert data.run_requests == []
        assert "database_change_sensor adds them" in data.skip_message


def test_unreachable_database_fails_the_tick(tmp_path):
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["customers"])
        # the daemon sees the tick fail with the reason (evaluate_tick wraps user-code errors)
        with pytest.raises(dg.DagsterUserCodeExecutionError) as err:
            tick(instance, f"duckdb://{tmp_path / 'missing.duckdb'}")
        assert isinstance(err.value.__cause__, DatabaseUnreachable)
        assert "cannot reach the database" in str(err.value.__cause__)
        assert "No table is refreshed this tick" in str(err.value.__cause__)


def test_cron_setting_and_default_status(monkeypatch):
    monkeypatch.delenv(CRON_ENV, raising=False)
    assert load_settings().refresh_cron == DEFAULT_CRON == "0 3 * * *"
    monkeypatch.setenv(CRON_ENV, "15 1 * * 1")
    assert build_refresh_schedule(load_settings()).cron_schedule == "15 1 * * 1"
    assert SCHEDULE.default_status == dg.DefaultScheduleStatus.STOPPED
    code = (
        "from cataloger_dagster.definitions import defs; "
        "print(defs.resolve_schedule_def('refresh_schedule').cron_schedule)"
    )
    env = {**os.environ, CRON_ENV: "30 2 * * 0"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "30 2 * * 0"


def test_refresh_requests_are_sorted_and_only_for_present_tables():
    day = dt.date(2026, 1, 2)
    requests = refresh_requests(["orders", "gone", "customers"], ["customers", "orders", "not_a_partition"], day)
    assert [(r.partition_key, r.run_key) for r in requests] == [
        ("customers", "customers:2026-01-02"), ("orders", "orders:2026-01-02")]
    # a table that is no partition yet is the change sensor's to add, not the schedule's
    assert all(r.tags == {REASON_TAG: SCHEDULED_REFRESH} for r in requests)
    assert refresh_requests([], ["customers"], day) == []


def test_no_partition_left_in_the_database_skips_with_a_reason(db):
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["dropped_a", "dropped_b"])
        data = tick(instance, f"duckdb://{db}")
        assert data.run_requests == []
        assert "none of the 2 partitions is still a table" in data.skip_message


def test_the_run_key_follows_the_scheduled_day_not_the_clock(db):
    # a late tick (the daemon was down) still refreshes under its own day's key, once
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["orders"])
        late = tick(instance, f"duckdb://{db}", dt.datetime(2025, 12, 31, 23, 59, tzinfo=dt.timezone.utc))
        assert [r.run_key for r in late.run_requests] == ["orders:2025-12-31"]
