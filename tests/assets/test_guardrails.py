"""assets/guardrails.py: each catalog run stores its table's guardrail suite, and the `guardrails`
job runs every table's suite against the database as Dagster runs it, over a real catalog run of
the shop database: every guardrail holds on the data it was built from, and a regression planted
afterwards fails the table that has it, alone."""

from __future__ import annotations

import shutil

import dagster as dg
import duckdb
import pytest

from cataloged_shop import ODD, TABLES
from cataloger_dagster.assets.guardrails import CHECK, JOB, build_guardrail_checks, build_guardrails_job, latest_suite
from cataloger_dagster.assets.table_specs import table_key
from cataloger_dagster.core.layout import CATALOG_PAGE, GUARDRAILS, table_prefix
from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.settings.model import load_settings

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

DATABASE = "shop.duckdb"


def _copy(cataloged_shop, tmp_path):
    database, store = cataloged_shop
    shutil.copy(database, tmp_path / DATABASE)
    shutil.copytree(store, tmp_path / "store")
    return tmp_path / DATABASE, tmp_path / "store"


def _run(database, store, monkeypatch) -> dict[str, dg.AssetCheckEvaluation]:
    monkeypatch.setenv("CATALOGER_DATABASE", f"duckdb://{database}")
    defs = build_definitions(load_settings(store=str(store)))
    with dg.instance_for_test() as instance:
        result = defs.resolve_job_def(JOB).execute_in_process(instance=instance)
    assert result.success
    return {e.asset_key.path[-1]: e for e in result.get_asset_check_evaluations()}


def test_each_run_stores_a_suite_and_it_holds_on_the_data_it_was_built_from(cataloged_shop, tmp_path, monkeypatch):
    database, store = _copy(cataloged_shop, tmp_path)
    suites = {t: latest_suite(LocalStore(root=str(store)), DATABASE, t) for t in TABLES}
    assert all(s is not None and s.guardrails for s in suites.values())
    events = suites["events"]
    assert events.named("row_count") and any(g.kind == "null_rate" for g in events.guardrails)
    prefix = table_prefix(DATABASE, "events")
    page = (store / prefix / events.built_at / CATALOG_PAGE).read_text()
    assert f"{len(events.guardrails)} assertions, version 1; changed since the last suite: + " in page
    found = _run(database, store, monkeypatch)
    assert set(found) == {table_key(DATABASE, t).path[-1] for t in TABLES}
    assert all(e.check_name == CHECK for e in found.values())
    assert [k for k, e in found.items() if not e.passed] == [], {k: e.description for k, e in found.items()}


def test_a_planted_regression_fails_its_table_s_guardrails_alone(cataloged_shop, tmp_path, monkeypatch):
    database, store = _copy(cataloged_shop, tmp_path)
    with duckdb.connect(str(database)) as con:
        con.execute(f'INSERT INTO "{ODD}" SELECT * FROM "{ODD}"')  # every line twice: its key repeats
        con.execute(f'INSERT INTO "{ODD}" SELECT line_id + 1000, qty FROM "{ODD}"')  # and its rows double again
    found = _run(database, store, monkeypatch)
    odd = found[table_key(DATABASE, ODD).path[-1]]
    assert not odd.passed and "guardrails hold" in odd.description
    failures = odd.metadata["failures"].value
    assert "row_count" in failures and "unique:line_id" in failures
    assert found["customers"].passed and found["events"].passed


def test_a_table_whose_suite_is_unreadable_fails_its_check_alone(cataloged_shop, tmp_path, monkeypatch):
    database, store = _copy(cataloged_shop, tmp_path)
    prefix = table_prefix(DATABASE, "customers")
    (store / prefix / LocalStore(root=str(store)).list_runs(prefix)[-1] / GUARDRAILS).write_text("[1, 2")
    found = _run(database, store, monkeypatch)
    assert not found["customers"].passed and "could not" in found["customers"].description
    assert found["events"].passed


def test_no_table_no_check_and_no_job():
    assert build_guardrail_checks([]) == [] and build_guardrails_job([], "0 * * * *") == ([], [])
