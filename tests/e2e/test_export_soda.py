"""The SodaCL export, run by the real `soda scan` (Soda Core 3.5.6, `make soda`) on the real
database: on DuckDB and on PostgreSQL, Soda passes and fails exactly the guardrails the catalog's
own run passes and fails.  The suite is learned from the shop's orders; the clean table holds it,
and the later, bad load (a hostile table name, a hostile category column holding a hostile
value) fails the planted findings: a repeated key, a misspelt status, totals off their rule and
out of their range."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest
import yaml
from backends import kind_params, load_tables
from tests.conftest import service_unavailable
from guarded_shop import learned, shop_rows

from cataloger_dagster.cli.soda_files import configuration_of
from cataloger_dagster.core.guardrails.build import build_suite
from cataloger_dagster.core.guardrails.export_soda import suite_soda
from cataloger_dagster.core.guardrails.run import ibis_query, run_suite
from cataloger_dagster.core.guardrails.soda_configuration import data_source_name

pytestmark = pytest.mark.soda

ROOT = Path(__file__).resolve().parents[2]
SODA = Path(os.environ.get("CATALOGER_SODA") or ROOT / ".cache/tools/soda/bin/soda")
HOSTILE_TABLE = 'ord"er\'s {{ t }} %s $x ${HOME}\nnext'
STATUS = 'st"at\'us {{ c }} %d ${HOME}'
ODD_VALUE = "it's ${HOME} {{ x }} %s"


@pytest.fixture(scope="module")
def soda(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """Soda's CLI, and an environment whose home tells it to send no usage statistics."""
    if not SODA.exists():
        service_unavailable(f"Soda Core's CLI at {SODA} (make soda)")
    home = tmp_path_factory.mktemp("soda-home")
    (home / ".soda").mkdir()
    (home / ".soda" / "config.yml").write_text("send_anonymous_usage_stats: false\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SODA")}
    return SODA, {**env, "HOME": str(home), "CATALOGER_SOURCE_PASSWORD": ""}


def _orders(regressed: bool) -> pa.Table:
    t = shop_rows(regressed=regressed)
    values = [v if i % 3 else ODD_VALUE for i, v in enumerate(t.column("status").to_pylist())]
    return t.set_column(t.schema.get_field_index("status"), STATUS, pa.array(values))


def _check_keys(text: str) -> list[str]:
    (checks,) = yaml.safe_load(text).values()
    return [next(iter(c)) for c in checks]


@pytest.mark.parametrize("kind", kind_params(("duckdb", "postgres")))
def test_soda_scan_fails_exactly_the_guardrails_the_catalog_fails(kind, scratch, soda, tmp_path):
    from cataloger_dagster.resources.database.resource import DatabaseResource

    url = load_tables(kind, {"orders": _orders(False), HOSTILE_TABLE: _orders(True)}, scratch)
    db = DatabaseResource(url=url)
    try:
        results = learned(db.table("orders"), "orders")
        suites = {
            "clean": build_suite(db.table("orders"), results),
            "later": build_suite(db.table(HOSTILE_TABLE), results).model_copy(update={"table": HOSTILE_TABLE}),
        }
        query = ibis_query(db.connect())
        catalog = {f: {r.name: r.passed for r in run_suite(s, query)} for f, s in suites.items()}
    finally:
        db.close()
    assert all(catalog["clean"].values())
    assert {n for n, ok in catalog["later"].items() if not ok} == {
        "unique:order_id", f"accepted_values:{STATUS}", "range:total", "rule:total = subtotal + shipping"}

    (tmp_path / "configuration.yml").write_text(configuration_of(url, "shop"))
    keys = {}
    for name, suite in suites.items():
        text = suite_soda(suite)
        (tmp_path / f"{name}.checks.yml").write_text(text)
        keys[name] = dict(zip(_check_keys(text), [g.name for g in suite.guardrails]))
    cli, env = soda
    done = subprocess.run(
        [str(cli), "scan", "-d", data_source_name("shop"), "-c", "configuration.yml",
         "clean.checks.yml", "later.checks.yml", "-srf", "results.json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 2, done.stdout + done.stderr  # Soda's exit code for failed checks, no error
    scan = json.loads((tmp_path / "results.json").read_text())
    assert not scan["hasErrors"], done.stdout
    by_soda: dict[str, dict[str, bool]] = {"clean": {}, "later": {}}
    for check in scan["checks"]:
        file = Path(check["location"]["filePath"]).name.split(".")[0]
        key = yaml.safe_load(check["definition"].split("\n", 1)[1])[0]
        by_soda[file][keys[file][next(iter(key))]] = {"pass": True, "fail": False}[check["outcome"]]
    assert by_soda == catalog
