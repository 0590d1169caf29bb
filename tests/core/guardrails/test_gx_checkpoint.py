"""The checkpoint script as a user runs it: with no connection string it says, in one line, what to
set (before it imports GX); on a small DuckDB file it prints one line per expectation and exits with 1 when one fails.
(The verdicts against the catalog's own run, on DuckDB and PostgreSQL: tests/e2e/test_export_gx.py.)"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from cataloger_dagster.core.guardrails import export_gx
from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite
from tests.conftest import service_unavailable

SCRIPT = Path(export_gx.__file__).with_name("gx_checkpoint.py")


@pytest.fixture
def gx_present():
    if not all(importlib.util.find_spec(name) for name in ("great_expectations", "duckdb_engine")):
        service_unavailable("Great Expectations (the gx extra: pip install -e '.[gx]')")


def _run(where: Path, *args: str, connection: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != export_gx.CONNECTION_ENV}
    env["GX_ANALYTICS_ENABLED"] = "false"
    if connection:
        env[export_gx.CONNECTION_ENV] = connection
    return subprocess.run([sys.executable, str(SCRIPT), *args], env=env, cwd=where, capture_output=True, text=True,
                          timeout=300)


def test_without_a_connection_string_it_says_what_to_set(tmp_path):
    run = _run(tmp_path, "orders.gx_suite.json", connection=None)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip().splitlines() == [
        f"Set {export_gx.CONNECTION_ENV} to the database's SQLAlchemy URL (e.g. duckdb:///shop.duckdb)"]


@pytest.mark.gx
def test_it_prints_each_expectation_s_verdict_and_fails_when_one_fails(gx_present, tmp_path):
    with duckdb.connect(str(tmp_path / "shop.duckdb")) as con:
        con.execute("CREATE TABLE orders AS SELECT i AS id, i % 2 AS parity FROM range(3) t(i)")
    suite = GuardrailSuite(database="shop", table="orders", dialect="duckdb", built_at="r", guardrails=[
        Guardrail(name="row_count", kind="row_count", sql='SELECT COUNT(*) AS "measured" FROM "orders"',
                  measure="count", low=2, high=4, why="three rows"),
        Guardrail(name="rule:parity = 0", kind="rule", columns=["parity"], high=0, why="even",
                  sql='SELECT COUNT(*) AS "measured" FROM "orders" WHERE "parity" <> 0'),
    ])
    (tmp_path / "orders.gx_suite.json").write_text(json.dumps(export_gx.suite_document(suite)))
    run = _run(tmp_path, "orders.gx_suite.json", connection=f"duckdb:///{tmp_path / 'shop.duckdb'}")
    assert run.returncode == 1, run.stderr[-2000:]
    assert run.stdout.splitlines() == ["PASS orders row_count: observed 3", "FAIL orders rule:parity = 0: observed 1"]
