"""guardrail_failure_sensor and the change sensor's guardrails run, over a real catalog run of the
shop database (tests/support/cataloged_shop.py) and a real Dagster instance: a planted regression
fails one table's guardrails; the run status sensor then requests that table's catalog run once,
alerts through the notifier (a local webhook), and asks nothing more while the failure lasts."""

from __future__ import annotations

import shutil

import dagster as dg
import duckdb
import pytest

from cataloged_shop import ODD, TABLES
from guardrail_runs import guardrails_then_sensor
from cataloger_dagster.assets.guardrails import CHECK, JOB
from cataloger_dagster.assets.table_specs import table_key
from cataloger_dagster.core.guardrails.checks_log import read_checks
from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.jobs import CATALOG_TABLE_JOB
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.sensors.database_change import REASON_TAG
from cataloger_dagster.sensors.guardrail_failures import GUARDRAIL_FAILED, GUARDRAILS_RUN_TAG
from cataloger_dagster.settings.factories import resources
from cataloger_dagster.settings.model import load_settings
from tests.support.receivers import http_receiver

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

DATABASE = "shop.duckdb"
SENSOR = "guardrail_failure_sensor"


@pytest.fixture
def shop(cataloged_shop, tmp_path, monkeypatch):
    database, store = cataloged_shop
    shutil.copy(database, tmp_path / DATABASE)
    shutil.copytree(store, tmp_path / "store")
    for name in ("CATALOGER_TABLE_OWNERS", "CATALOGER_ALERT_NOTIFIER", "CATALOGER_ALERT_WEBHOOK_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CATALOGER_DATABASE", f"duckdb://{tmp_path / DATABASE}")
    monkeypatch.setenv("CATALOGER_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("CATALOGER_ALERT_BACKOFF_S", "0")
    return tmp_path / DATABASE, tmp_path / "store"


def _regress(database):
    with duckdb.connect(str(database)) as con:
        con.execute(f'INSERT INTO "{ODD}" SELECT * FROM "{ODD}"')  # every line twice: its key repeats


def _follow(instance, monkeypatch, receiver):
    """One guardrails run, then the sensor's evaluation of it: (its result, the run's id)."""
    monkeypatch.setenv("CATALOGER_ALERT_NOTIFIER", "webhook")
    monkeypatch.setenv("CATALOGER_ALERT_WEBHOOK_URL", receiver.url)
    run, result = guardrails_then_sensor(instance)
    return result, run.run_id


def test_a_failing_table_is_cataloged_once_and_its_owner_alerted_once(shop, monkeypatch):
    database, store = shop
    _regress(database)
    with http_receiver() as receiver, dg.instance_for_test() as instance:
        result, run_id = _follow(instance, monkeypatch, receiver)
        assert isinstance(result, dg.SensorResult)
        (request,) = result.run_requests
        assert request.partition_key == ODD and request.run_key == f"guardrails:{run_id}:{ODD}"
        assert request.tags[REASON_TAG] == GUARDRAIL_FAILED and request.tags[GUARDRAILS_RUN_TAG] == run_id
        (message,) = receiver.received
        (owner,) = message["owners"]
        (table,) = owner["tables"]
        assert table["table"] == ODD
        alerts = {a["issue_id"]: a for a in table["alerts"]}
        assert alerts["unique:line_id"]["kind"] == "guardrail" and "measured 30" in alerts["unique:line_id"]["description"]
        assert alerts["row_count"]["severity"] == "medium"

        # the values stayed in the store: every table's check is logged, with this run's id
        logged = {t: read_checks(LocalStore(root=str(store)), DATABASE, t) for t in TABLES}
        assert all(len(c) == 1 and c[0].dagster_run_id == run_id for c in logged.values())
        assert {r.name for r in logged[ODD][0].failing} >= {"unique:line_id", "row_count"}

        again, _ = _follow(instance, monkeypatch, receiver)  # the same failure, checked again
        assert isinstance(again, dg.SkipReason) and len(receiver.received) == 1


def test_a_table_already_being_cataloged_is_left_to_that_run(shop, monkeypatch):
    database, _ = shop
    _regress(database)
    with http_receiver() as receiver, dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", [ODD])
        queued = instance.create_run_for_job(
            build_definitions(load_settings()).resolve_job_def(CATALOG_TABLE_JOB),
            tags={"dagster/partition": ODD},
            status=dg.DagsterRunStatus.NOT_STARTED,  # created, not yet launched
        )
        assert queued.status == dg.DagsterRunStatus.NOT_STARTED
        result, _ = _follow(instance, monkeypatch, receiver)
        assert isinstance(result, dg.SkipReason)
        assert len(receiver.received) == 1  # the owner still hears of it


def test_the_change_sensor_runs_the_changed_tables_guardrails(shop):
    database, _ = shop
    defs = build_definitions(load_settings())
    sensor = defs.resolve_sensor_def("database_change_sensor")
    used = {k: v for k, v in resources(load_settings()).items() if k == "database"}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", list(TABLES))  # as the daemon adds them from the tick
        with dg.build_sensor_context(instance=instance, instance_ref=instance.get_ref(), resources=used, definitions=defs) as context:
            first = sensor.evaluate_tick(context)
        assert {r.job_name for r in first.run_requests} == {CATALOG_TABLE_JOB}  # new tables: catalog them
        _regress(database)
        with dg.build_sensor_context(instance=instance, instance_ref=instance.get_ref(), cursor=first.cursor, resources=used,
                                     definitions=defs) as context:
            second = sensor.evaluate_tick(context)
    by_job = {r.job_name: r for r in second.run_requests}
    assert by_job[CATALOG_TABLE_JOB].partition_key == ODD
    assert by_job[JOB].asset_check_keys == [dg.AssetCheckKey(table_key(DATABASE, ODD), CHECK)]


def test_the_loop_closes_on_a_real_catalog_run(shop, monkeypatch):
    """Duplicates planted in `events` fail the guardrail guarding its confirmed duplicate rows (their
    repeated key, folded into that finding, is what the guardrail checks); the
    catalog run the sensor asks for investigates them again, and its page and the finding's
    history show the failure and the confirmation together."""
    from cataloger_dagster.cli.runner import catalog_database
    from cataloger_dagster.core.guardrails.checks_log import finding_history
    from cataloger_dagster.core.layout import CATALOG_PAGE, table_prefix

    database, store = shop
    with duckdb.connect(str(database)) as con:
        con.execute("INSERT INTO events SELECT * FROM events USING SAMPLE 60 ROWS (reservoir, 7)")
    with http_receiver() as receiver, dg.instance_for_test() as instance:
        result, _ = _follow(instance, monkeypatch, receiver)
        (request,) = result.run_requests
    assert request.partition_key == "events"
    report = catalog_database(database=f"duckdb://{database}", store=str(store), agent="heuristic",
                              sandbox="local", tables=["events"], name=DATABASE)
    assert not report.failed, report.failed
    local = LocalStore(root=str(store))
    prefix = table_prefix(DATABASE, "events")
    latest = local.list_runs(prefix)[-1]
    page = (store / prefix / latest / CATALOG_PAGE).read_text()
    assert "unique:event_id (guarding events_duplicate_rows) failed at" in page
    assert "confirmed it, so it stands" in page
    history = finding_history(local, DATABASE, "events", "events_duplicate_rows")
    assert [what.split(":")[0] for _, what in history] == [
        "guardrail unique", "the catalog run's investigation confirmed it"]
