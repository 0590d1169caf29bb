"""The SodaCL export, run by the real `soda scan` (Soda Core 3.5.6, `make soda`) on the real
database: on DuckDB and on PostgreSQL, Soda passes and fails exactly the guardrails the catalog's
own run passes and fails.  The suite is learned from the shop's orders; the clean table holds it,
and the later, bad load (a hostile table name, a hostile category column holding a hostile
value) fails the planted findings: a repeated key, a misspelt status, totals off their rule and
out of their range.  A table of loads checks freshness: the newest load within three hours, and
within the hour."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pytest
import yaml
from backends import kind_params, load_tables
from tests.conftest import service_unavailable
from guarded_shop import learned, shop_rows

from cataloger_dagster.cli.soda_files import configuration_of
from cataloger_dagster.core.guardrails import queries as q
from cataloger_dagster.core.guardrails.build import build_suite
from cataloger_dagster.core.guardrails.export_soda import suite_soda
from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite
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


def _loads() -> pa.Table:
    """Three loads, a day apart, the newest two hours ago (UTC, as a naive timestamp)."""
    newest = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(hours=2)
    stamps = [newest - timedelta(days=d) for d in (2, 1, 0)]
    return pa.table({"load_id": pa.array([1, 2, 3], pa.int32()), "loaded_at": pa.array(stamps, pa.timestamp("us"))})


def _freshness_suite(loads) -> GuardrailSuite:
    """The newest load within three hours (it is: two hours ago), and within the hour (it is not)."""
    newest = q.sql(q.newest(loads, "loaded_at"), q.dialect_of(loads))
    fresh = Guardrail(name="freshness:loaded_at", kind="freshness", columns=["loaded_at"], sql=newest,
                      measure="seconds", high=3 * 3600, why="A load every three hours at most.")
    late = fresh.model_copy(update={"name": "freshness:loaded_at:late", "high": 3600, "why": "A load every hour."})
    return GuardrailSuite(database="shop", table="loads", dialect=q.dialect_of(loads) or "", built_at="r",
                          guardrails=[fresh, late])


def _check_keys(text: str) -> list[str]:
    (checks,) = yaml.safe_load(text).values()
    return [next(iter(c)) for c in checks]


@pytest.mark.parametrize("kind", kind_params(("duckdb", "postgres")))
def test_soda_scan_fails_exactly_the_guardrails_the_catalog_fails(kind, scratch, soda, tmp_path):
    from cataloger_dagster.resources.database.resource import DatabaseResource

    url = load_tables(kind, {"orders": _orders(False), HOSTILE_TABLE: _orders(True), "loads": _loads()}, scratch)
    db = DatabaseResource(url=url)
    try:
        results = learned(db.table("orders"), "orders")
        suites = {
            "clean": build_suite(db.table("orders"), results),
            "later": build_suite(db.table(HOSTILE_TABLE), results).model_copy(update={"table": HOSTILE_TABLE}),
            "fresh": _freshness_suite(db.table("loads")),
        }
        query = ibis_query(db.connect())
        catalog = {f: {r.name: r.passed for r in run_suite(s, query)} for f, s in suites.items()}
    finally:
        db.close()
    assert all(catalog["clean"].values())
    assert {n for n, ok in catalog["later"].items() if not ok} == {
        "unique:order_id", f"accepted_values:{STATUS}", "range:total", "rule:total = subtotal + shipping"}
    assert catalog["fresh"] == {"freshness:loaded_at": True, "freshness:loaded_at:late": False}

    (tmp_path / "configuration.yml").write_text(configuration_of(url, "shop"))
    keys = {}
    for name, suite in suites.items():
        text = suite_soda(suite)
        (tmp_path / f"{name}.checks.yml").write_text(text)
        keys[name] = dict(zip(_check_keys(text), [g.name for g in suite.guardrails]))
    code, by_soda = _scan(soda, tmp_path, data_source_name("shop"), keys)
    assert code == 2  # Soda's exit code for failed checks and no error
    assert by_soda == catalog


def test_the_files_the_command_writes_scan_as_they_are_with_the_catalog_s_verdicts(cataloged_shop, soda, tmp_path):
    """`cataloger export --to soda` on a real catalog run of the shop (its odd table name too):
    Soda, given the written files as they are, agrees with the catalog's run on every guardrail."""
    import ibis
    from click.testing import CliRunner

    from cataloged_shop import TABLES
    from cataloger_dagster.assets.guardrails import latest_suite
    from cataloger_dagster.cli.app import main
    from cataloger_dagster.core.layout import store_name
    from cataloger_dagster.resources.store import LocalStore

    database, store = cataloged_shop
    out = CliRunner().invoke(main, ["export", "--to", "soda", *TABLES, "--out", str(tmp_path),
                                    "--database", f"duckdb://{database}", "--store", str(store)])
    assert out.exit_code == 0, out.output
    suites = {store_name(t): latest_suite(LocalStore(root=str(store)), "shop.duckdb", t) for t in TABLES}
    con = ibis.duckdb.connect(str(database), read_only=True)
    try:
        catalog = {f: {r.name: r.passed for r in run_suite(s, ibis_query(con))} for f, s in suites.items()}
    finally:
        con.disconnect()
    keys = {f: dict(zip(_check_keys((tmp_path / f"{f}.checks.yml").read_text()), [g.name for g in s.guardrails]))
            for f, s in suites.items()}
    code, by_soda = _scan(soda, tmp_path, "shop_duckdb", keys)
    assert code in (0, 2)
    assert by_soda == catalog


def _scan(soda, folder: Path, source: str, keys: dict[str, dict[str, str]]) -> tuple[int, dict[str, dict[str, bool]]]:
    """`soda scan` of each `<file>.checks.yml` in `folder`: its exit code, and each guardrail's
    verdict by file (the check's line in the file says which guardrail it is)."""
    cli, env = soda
    done = subprocess.run(
        [str(cli), "scan", "-d", source, "-c", "configuration.yml", *[f"{f}.checks.yml" for f in keys],
         "-srf", "results.json"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )
    scan = json.loads((folder / "results.json").read_text())
    assert not scan["hasErrors"], done.stdout + done.stderr
    verdicts: dict[str, dict[str, bool]] = {f: {} for f in keys}
    for check in scan["checks"]:
        file = Path(check["location"]["filePath"]).name.removesuffix(".checks.yml")
        key = yaml.safe_load(check["definition"].split("\n", 1)[1])[0]
        verdicts[file][keys[file][next(iter(key))]] = {"pass": True, "fail": False}[check["outcome"]]
    return done.returncode, verdicts
