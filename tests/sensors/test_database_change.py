"""database_change_sensor against real DuckDB files, ticked the way the daemon ticks it.

`Ticker` plays the daemon's part between ticks: it applies the tick's partition
requests to a real (temporary) Dagster instance and keeps the cursor only when the
tick succeeded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.definitions import TABLE_ASSETS, defs
from cataloger_dagster.jobs import CATALOG_TABLE_JOB
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.sensors.database_change import (
    DEFAULT_INTERVAL_S,
    FINGERPRINT_CHANGED,
    FINGERPRINT_TAG,
    INTERVAL_ENV,
    NEW_TABLE,
    PREVIOUS_FINGERPRINT_TAG,
    REASON_TAG,
    BadCursor,
    DatabaseUnreachable,
    read_cursor,
)
from cataloger_dagster.settings.model import load_settings

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

SENSOR = defs.resolve_sensor_def("database_change_sensor")
ROOT = Path(__file__).resolve().parents[2]


def sql(path: Path, *statements: str) -> None:
    with duckdb.connect(str(path)) as con:
        for statement in statements:
            con.execute(statement)


class Ticker:
    def __init__(self, instance: dg.DagsterInstance, url: str):
        self.instance = instance
        self.url = url
        self.cursor: str | None = None

    def tick(self):
        # a context manager: the database resource is torn down (its connection closed) after the tick
        with dg.build_sensor_context(
            instance=self.instance,
            instance_ref=self.instance.get_ref(),  # as the daemon: partition keys are validated
            definitions=defs,
            cursor=self.cursor,
            resources={"database": DatabaseResource(url=self.url)},
        ) as context:
            data = SENSOR.evaluate_tick(context)
        for request in data.dynamic_partitions_requests:
            if isinstance(request, dg.AddDynamicPartitionsRequest):
                self.instance.add_dynamic_partitions(request.partitions_def_name, request.partition_keys)
            else:
                for key in request.partition_keys:
                    self.instance.delete_dynamic_partition(request.partitions_def_name, key)
        self.cursor = data.cursor
        return data

    @property
    def partitions(self) -> set[str]:
        return set(self.instance.get_dynamic_partitions("tables"))

    @property
    def fingerprints(self) -> dict[str, str]:
        return read_cursor(self.cursor)


def by_table(data) -> dict[str, dg.RunRequest]:
    return {r.partition_key: r for r in data.run_requests}


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "shop.duckdb"
    sql(
        path,
        "CREATE TABLE customers AS SELECT range AS id, 'c' || range AS name FROM range(50)",
        "CREATE TABLE orders AS SELECT range AS id, range % 50 AS customer_id, range * 1.5 AS amount FROM range(200)",
    )
    return path


@pytest.fixture
def ticker(db):
    with dg.instance_for_test() as instance:
        yield Ticker(instance, f"duckdb://{db}")


def test_first_tick_adds_every_table_and_runs_it(ticker, db):
    data = ticker.tick()
    assert ticker.partitions == {"customers", "orders"}
    requests = by_table(data)
    assert set(requests) == {"customers", "orders"}
    expected = {t: DatabaseResource(url=f"duckdb://{db}").fingerprint(t).value for t in requests}
    assert ticker.fingerprints == expected
    for table, request in requests.items():
        assert request.run_key == f"{table}:{expected[table]}"
        assert request.tags[REASON_TAG] == NEW_TABLE
        assert request.tags[FINGERPRINT_TAG] == expected[table]
        assert PREVIOUS_FINGERPRINT_TAG not in request.tags
        # resolved against the catalog_table job's `tables` partitions, as the daemon does
        assert request.tags["dagster/partition"] == table


def test_unchanged_database_requests_nothing(ticker):
    ticker.tick()
    cursor = ticker.cursor
    data = ticker.tick()
    assert data.run_requests == []
    assert data.dynamic_partitions_requests == []
    assert "no table changed" in data.skip_message
    assert ticker.cursor == cursor


def test_added_table_gets_a_partition_and_one_run(ticker, db):
    ticker.tick()
    sql(db, "CREATE TABLE products AS SELECT range AS sku FROM range(7)")
    data = ticker.tick()
    assert set(by_table(data)) == {"products"}
    assert by_table(data)["products"].tags[REASON_TAG] == NEW_TABLE
    assert ticker.partitions == {"customers", "orders", "products"}
    assert set(ticker.fingerprints) == {"customers", "orders", "products"}


def test_changed_table_runs_once_per_change(ticker, db):
    ticker.tick()
    before = ticker.fingerprints["orders"]

    sql(db, "INSERT INTO orders VALUES (999, 1, 2.0)")
    data = ticker.tick()
    assert set(by_table(data)) == {"orders"}
    request = by_table(data)["orders"]
    after = ticker.fingerprints["orders"]
    assert after != before
    assert request.run_key == f"orders:{after}"
    assert request.tags[REASON_TAG] == FINGERPRINT_CHANGED
    assert request.tags[PREVIOUS_FINGERPRINT_TAG] == before
    assert ticker.tick().run_requests == []  # the same change is not requested again

    # a schema change with the same row count is a change too
    sql(db, "ALTER TABLE customers ADD COLUMN email VARCHAR")
    data = ticker.tick()
    assert set(by_table(data)) == {"customers"}
    assert data.dynamic_partitions_requests == []


def test_dropped_table_loses_its_partition_and_gets_no_run(ticker, db):
    ticker.tick()
    sql(db, "DROP TABLE customers")
    data = ticker.tick()
    assert data.run_requests == []
    deletes = [r for r in data.dynamic_partitions_requests if isinstance(r, dg.DeleteDynamicPartitionsRequest)]
    assert [list(r.partition_keys) for r in deletes] == [["customers"]]
    assert ticker.partitions == {"orders"}
    assert set(ticker.fingerprints) == {"orders"}
    # the sensor never touches the store, so a dropped table's history stays there
    assert SENSOR.required_resource_keys == {"database"}


def test_unreachable_database_fails_the_tick_and_keeps_the_cursor(ticker, db):
    ticker.tick()
    cursor, partitions = ticker.cursor, ticker.partitions
    moved = db.with_suffix(".away")
    db.rename(moved)
    with pytest.raises(DatabaseUnreachable, match="cannot reach the database.*cursor is kept") as err:
        ticker.tick()
    assert str(db) in str(err.value)
    assert ticker.cursor == cursor and ticker.partitions == partitions

    moved.rename(db)  # back again: nothing was lost, so nothing is rerun
    data = ticker.tick()
    assert data.run_requests == [] and data.dynamic_partitions_requests == []


def test_unreachable_server_error_hides_the_password(tmp_path):
    # port 9 (discard) on loopback: nothing listens, the connection is refused at once
    url = "postgres://cataloger:s3cret-pw@127.0.0.1:9/shop"
    with dg.instance_for_test() as instance:
        ticker = Ticker(instance, url)
        with pytest.raises(DatabaseUnreachable) as err:
            ticker.tick()
    assert "s3cret-pw" not in str(err.value)
    assert "cataloger:***@127.0.0.1:9" in str(err.value)
    assert ticker.cursor is None


def test_broken_view_is_skipped_and_keeps_its_cursor_entry(ticker, db, capfd):
    sql(db, "CREATE TABLE base AS SELECT range AS id, range * 2 AS y FROM range(10)",
        "CREATE VIEW doubled AS SELECT id, y FROM base")
    ticker.tick()
    old_view = ticker.fingerprints["doubled"]

    sql(db, "ALTER TABLE base DROP COLUMN y")  # the view now fails on every query
    capfd.readouterr()
    data = ticker.tick()
    assert set(by_table(data)) == {"base"}  # the others carry on
    assert ticker.fingerprints["doubled"] == old_view
    assert "doubled" in ticker.partitions
    assert "WARNING - table 'doubled' skipped this tick" in capfd.readouterr().err

    # fixed, with more rows than when the view was last fingerprinted
    sql(db, "ALTER TABLE base ADD COLUMN y BIGINT", "INSERT INTO base VALUES (10, 30)")
    data = ticker.tick()
    assert set(by_table(data)) == {"base", "doubled"}
    assert ticker.fingerprints["doubled"] != old_view
    assert by_table(data)["doubled"].tags[PREVIOUS_FINGERPRINT_TAG] == old_view


def test_table_name_dagster_cannot_use_is_skipped(ticker, db, capfd):
    sql(db, 'CREATE TABLE "odd...name" AS SELECT 1 AS x')
    data = ticker.tick()
    assert set(by_table(data)) == {"customers", "orders"}
    assert "odd...name" not in ticker.partitions
    assert "WARNING - table 'odd...name' is not catalogued" in capfd.readouterr().err


def test_corrupt_cursor_is_a_clear_error(ticker):
    ticker.cursor = "not json"
    with pytest.raises(BadCursor, match="reset the sensor's cursor"):
        ticker.tick()
    assert ticker.partitions == set()
    ticker.cursor = json.dumps({"fingerprints": {}})
    assert len(ticker.tick().run_requests) == 2


def test_interval_setting(monkeypatch):
    monkeypatch.delenv(INTERVAL_ENV, raising=False)
    assert load_settings().sensor_interval_s == DEFAULT_INTERVAL_S
    monkeypatch.setenv(INTERVAL_ENV, " 45 ")
    assert load_settings().sensor_interval_s == 45
    for bad in ("5m", "0"):
        monkeypatch.setenv(INTERVAL_ENV, bad)
        with pytest.raises(ValueError, match=INTERVAL_ENV):
            load_settings()


def test_sensor_reads_its_interval_from_the_environment():
    code = (
        "from cataloger_dagster.definitions import defs; "
        "s = defs.resolve_sensor_def('database_change_sensor'); "
        "print(s.minimum_interval_seconds, s.default_status.value)"
    )
    env = {**os.environ, INTERVAL_ENV: "42"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["42", "RUNNING"]


def test_job_and_automation_are_wired_into_defs():
    job = defs.resolve_job_def(CATALOG_TABLE_JOB)
    assert job.partitions_def is not None and job.partitions_def.name == "tables"
    assert set(job.asset_layer.executable_asset_keys) == {a.key for a in TABLE_ASSETS}
    assert SENSOR.job_name == CATALOG_TABLE_JOB
    assert defs.resolve_schedule_def("refresh_schedule").job_name == CATALOG_TABLE_JOB
