"""assets/table_checks.py: the catalog's findings as a check on each of the user's tables, run as
Dagster runs them (the `check_tables` job of the definitions), over the store of a real catalog run
of the shop database (`events` has planted high-severity defects)."""

from __future__ import annotations

import shutil

import dagster as dg
import pytest

from cataloged_shop import ODD, TABLES
from cataloger_dagster.assets.table_checks import CHECK, JOB, build_table_checks, build_table_checks_job
from cataloger_dagster.assets.table_specs import table_key
from cataloger_dagster.core.layout import ISSUES, table_prefix
from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.settings.model import load_settings

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

DATABASE = "shop.duckdb"


def definitions(database, store_path, monkeypatch) -> dg.Definitions:
    # the definitions make the settings' database URL this process's CATALOGER_DATABASE: restored after
    monkeypatch.setenv("CATALOGER_DATABASE", f"duckdb://{database}")
    return build_definitions(load_settings(store=str(store_path)))


def run_checks(defs: dg.Definitions) -> dict[str, dg.AssetCheckEvaluation]:
    with dg.instance_for_test() as instance:
        result = defs.resolve_job_def(JOB).execute_in_process(instance=instance)
    assert result.success
    return {e.asset_key.path[-1]: e for e in result.get_asset_check_evaluations()}


def test_each_table_is_checked_against_its_latest_runs_findings(cataloged_shop, monkeypatch):
    database, store_path = cataloged_shop
    defs = definitions(database, store_path, monkeypatch)
    found = run_checks(defs)
    assert set(found) == {table_key(DATABASE, t).path[-1] for t in TABLES}
    assert all(e.check_name == CHECK for e in found.values())
    events = found["events"]
    spec = next(s for s in defs.assets if isinstance(s, dg.AssetSpec) and s.metadata.get("table") == "events")
    assert not events.passed and events.severity == dg.AssetCheckSeverity.WARN
    for severity in ("high", "medium", "low"):
        assert events.metadata[f"findings_{severity}"].value == spec.metadata[f"findings_{severity}"]
    assert found["customers"].passed == (found["customers"].metadata["findings_high"].value == 0)


def test_a_table_whose_results_turn_unreadable_fails_its_check_alone(cataloged_shop, monkeypatch, tmp_path):
    database, store_path = cataloged_shop
    copy = tmp_path / "store"
    shutil.copytree(store_path, copy)
    defs = definitions(database, copy, monkeypatch)
    store = LocalStore(root=str(copy))
    prefix = table_prefix(DATABASE, ODD)
    (copy / prefix / store.list_runs(prefix)[-1] / ISSUES).write_text("[1, 2")
    found = run_checks(defs)
    odd = found[table_key(DATABASE, ODD).path[-1]]
    assert not odd.passed and repr(ODD) in odd.description and "issues.json" in odd.description
    assert "findings_high" in found["customers"].metadata


def test_no_table_no_check_and_no_job():
    assert build_table_checks([], DATABASE) == [] and build_table_checks_job([]) == []
