"""The guardrail loop closed on the demo database, both ways, through real runs: a real catalog
run (heuristic agent, local sandbox), the `guardrails` job and the `guardrail_failure_sensor` on
a real Dagster instance, and the catalog run the sensor requests, executed as requested.

The demo plants customers who registered twice (a second id with another customer's e-mail);
the first catalog run confirms them and guards the finding.  Then:

1. a few more double registrations: the guardrail fails, the requested run's investigation
   confirms it (still a slip of a few rows of an identifier), the guardrail stands, and the
   finding's history and the page say so;
2. many more: the guardrail fails again, and this time the investigation refutes it (so many
   rows share a value that the column is no key), so the band is relearned at the level it
   failed at; the next check of the new suite holds, and the history and the page say so."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.assets.guardrails import CHECK
from cataloger_dagster.assets.table_specs import table_key
from cataloger_dagster.core.guardrails import tolerance
from cataloger_dagster.core.guardrails.checks_log import finding_history, load_suite, read_checks
from cataloger_dagster.core.guardrails.model import band_text
from cataloger_dagster.core.layout import CATALOG_PAGE, table_prefix
from cataloger_dagster.demo import create_demo_database
from guardrail_runs import guardrails_then_sensor
from cataloger_dagster.demo.spec import DEFECTS, EMAIL_REGEX, PHONE_REGEX, SPEND_FLOOR, STRING_SENTINELS
from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.jobs import CATALOG_TABLE_JOB
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.sensors.database_change import REASON_TAG
from cataloger_dagster.sensors.guardrail_failures import GUARDRAIL_FAILED, GUARDRAILS_RUN_TAG
from cataloger_dagster.settings.model import load_settings

pytestmark = [pytest.mark.slow, pytest.mark.bwrap, pytest.mark.filterwarnings("error::DeprecationWarning")]

DATABASE = "demo.duckdb"
SENSOR = "guardrail_failure_sensor"
TWICE = next(d for d in DEFECTS if d["type"] == "duplicate_keys")  # customers registered twice
TABLE, (KEY,) = TWICE["table"], TWICE["columns"]
FINDING = f"{TABLE}_duplicate_keys_{KEY}"
GUARDRAIL = f"unique:{KEY}"


@pytest.fixture
def demo(tmp_path, monkeypatch, local_sandbox):
    """(database, store) of the demo database, its registrations table cataloged once."""
    from cataloger_dagster.cli.runner import catalog_database

    database, store = tmp_path / DATABASE, tmp_path / "store"
    create_demo_database(database, scale=0.05)
    for name in ("CATALOGER_TABLE_OWNERS", "CATALOGER_ALERT_NOTIFIER", "CATALOGER_ALERT_WEBHOOK_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CATALOGER_DATABASE", f"duckdb://{database}")
    monkeypatch.setenv("CATALOGER_STORE", str(store))
    monkeypatch.setenv("CATALOGER_AGENT", "heuristic")
    monkeypatch.setenv("CATALOGER_SANDBOX", local_sandbox)
    report = catalog_database(tables=[TABLE], name=DATABASE)
    assert not report.failed, report.failed
    return database, store


def _register_twice(database, n: int, skip: int) -> None:
    """n more customers registered twice: each a new id holding one valid customer's details and
    another valid customer's e-mail (valid: its phone, e-mail, city and spend break no other rule,
    and its e-mail is not repeated yet); the first `skip` valid customers are left alone."""
    valid = (f"regexp_full_match({KEY}, '{EMAIL_REGEX}') AND regexp_full_match(phone, '{PHONE_REGEX}') "
             f"AND city NOT IN ({', '.join(repr(s) for s in STRING_SENTINELS)}) AND annual_spend < {SPEND_FLOOR} "
             f"AND {KEY} IN (SELECT {KEY} FROM {TABLE} GROUP BY {KEY} HAVING count(*) = 1)")
    with duckdb.connect(str(database)) as con:
        con.execute(f"""
            CREATE TEMP TABLE pool AS
              SELECT *, row_number() OVER (ORDER BY customer_id) AS k FROM {TABLE} WHERE {valid};
            INSERT INTO {TABLE}
              SELECT a.* EXCLUDE (k)
                         REPLACE ((SELECT max(customer_id) FROM {TABLE}) + a.k AS customer_id, b.{KEY} AS {KEY})
              FROM pool a JOIN pool b ON b.k = a.k + {n}
              WHERE a.k > {skip} AND a.k <= {skip + n}""")


def _repeated(database) -> int:
    with duckdb.connect(str(database)) as con:
        return con.execute(f"SELECT count(*) FROM (SELECT {KEY} FROM {TABLE} GROUP BY {KEY} "
                           f"HAVING count(*) > 1)").fetchone()[0]


def _check_and_follow(instance):
    """One `guardrails` run and the failure sensor's evaluation of it: (the run, what the sensor asked)."""
    return guardrails_then_sensor(instance)


def _run_requested(instance, result) -> str:
    """The one catalog run the sensor asked for, executed as asked (the daemon's part: its
    partition added, its tags kept); the catalog page it wrote."""
    (request,) = result.run_requests
    assert request.partition_key == TABLE
    assert request.tags[REASON_TAG] == GUARDRAIL_FAILED and GUARDRAILS_RUN_TAG in request.tags
    for added in result.dynamic_partitions_requests:
        instance.add_dynamic_partitions(added.partitions_def_name, list(added.partition_keys))
    job = build_definitions(load_settings()).resolve_job_def(CATALOG_TABLE_JOB)
    run = job.execute_in_process(instance=instance, partition_key=request.partition_key, tags=request.tags)
    assert run.success
    folder = load_settings().store
    prefix = table_prefix(DATABASE, TABLE)
    latest = LocalStore(root=folder).list_runs(prefix)[-1]
    return (Path(folder) / prefix / latest / CATALOG_PAGE).read_text()


def _guardrail(store):
    prefix = table_prefix(DATABASE, TABLE)
    suite = load_suite(store, prefix, store.list_runs(prefix)[-1])
    return suite.named(GUARDRAIL)


def _failure(store, run_id):
    (check,) = [c for c in read_checks(store, DATABASE, TABLE) if c.dagster_run_id == run_id]
    return next(r for r in check.results if r.name == GUARDRAIL)


def test_a_planted_regression_closes_the_loop_both_ways(demo):
    database, store_folder = demo
    store = LocalStore(root=str(store_folder))
    guarded = _guardrail(store)
    assert guarded is not None and guarded.guards == FINDING and guarded.pinned_by == "finding"
    before = _repeated(database)
    assert guarded.high == tolerance.grown(before)

    with dg.instance_for_test() as instance:
        # 1. a few more: still a slip of an identifier, so the investigation confirms the failure
        _register_twice(database, before, skip=0)
        checked, asked = _check_and_follow(instance)
        failed = _failure(store, checked.run_id)
        assert not failed.passed and failed.measured == _repeated(database) > guarded.high
        page = _run_requested(instance, asked)
        stands = _guardrail(store)
        assert stands.high == tolerance.grown(_repeated(database)) and "Relearned" not in stands.why
        assert (f"{GUARDRAIL} (guarding {FINDING}) failed at {failed.measured:g} "
                f"(allowed {band_text(failed.low, failed.high)})") in page
        assert "investigation confirmed it, so it stands" in page
        assert [what for _, what in finding_history(store, DATABASE, TABLE, FINDING)] == [
            f"guardrail {GUARDRAIL} failed: measured {failed.measured:g}",
            "the catalog run's investigation confirmed it",
        ]

        # 2. many more: so many rows share an e-mail that it is no key, so the investigation refutes
        # the failure and the guardrail takes the level it failed at as its own
        _register_twice(database, 3 * _repeated(database), skip=2 * before)
        checked, asked = _check_and_follow(instance)
        refuted = _failure(store, checked.run_id)
        assert not refuted.passed and refuted.measured == _repeated(database) > stands.high
        page = _run_requested(instance, asked)
        relearned = _guardrail(store)
        assert relearned.guards == FINDING and "Relearned" in relearned.why
        assert (relearned.low, relearned.high) == tolerance.relearned("rows", refuted.measured, refuted.low, refuted.high)
        assert (f"failed at {refuted.measured:g} (allowed {band_text(refuted.low, refuted.high)})") in page
        assert (f"investigation refuted it, so its band is relearned: "
                f"{band_text(relearned.low, relearned.high)}") in page
        assert [what for _, what in finding_history(store, DATABASE, TABLE, FINDING)][2:] == [
            f"guardrail {GUARDRAIL} failed: measured {refuted.measured:g}",
            "the catalog run's investigation refuted it; the guardrail's band was relearned",
        ]

        # the new suite holds on the data it was relearned from, and nothing more is asked
        checked, asked = _check_and_follow(instance)
        evaluation = checked.get_asset_check_evaluations()
        assert [(e.asset_check_key, e.passed) for e in evaluation] == [
            (dg.AssetCheckKey(table_key(DATABASE, TABLE), CHECK), True)]
        assert _failure(store, checked.run_id).passed
        assert isinstance(asked, dg.SkipReason)
