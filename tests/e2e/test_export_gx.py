"""Great Expectations runs the exported guardrails: `gx_checkpoint.py`, as `cataloger export --to gx`
writes it, runs each table's suite in a GX 1.x checkpoint over a SQL data source on the real
database (DuckDB through duckdb-engine, PostgreSQL through psycopg2) and fails exactly the
guardrails that the catalog's own run fails: none on the table the suite was learned from, the
planted regressions (a repeated key, a new status, totals off their rule) on its later state.
The tables' and columns' names carry quotes, braces, `%`, `$`, a colon and a line break (and the
columns', and PostgreSQL's tables', a bind-like `:name`), which GX must read as names."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlsplit

import pytest
from backends import kind_params, load_tables
from guarded_shop import learned, shop_rows

from cataloger_dagster.core.guardrails import export_gx
from cataloger_dagster.core.guardrails.build import build_suite
from cataloger_dagster.core.guardrails.run import ibis_query, run_suite
from tests.conftest import service_unavailable

pytestmark = pytest.mark.gx

TABLE = 'or"ders {batch} %s $1 id: \nlog'
COLUMNS = {"status": 'sta"tus {0} :s %d $1', "total": "to}tal\n:x"}
SCRIPT = Path(export_gx.__file__).with_name("gx_checkpoint.py")


def _needs_gx(kind: str) -> None:
    """Found, not imported: the checkpoint script imports them in its own process."""
    driver = "duckdb_engine" if kind == "duckdb" else "psycopg2"
    if not all(importlib.util.find_spec(name) for name in ("great_expectations", driver)):
        service_unavailable("Great Expectations (the gx extra: pip install -e '.[gx]')")


def _named(rows):
    return rows.rename_columns([COLUMNS.get(name, name) for name in rows.column_names])


def _gx_url(url: str) -> str:
    """The catalog's URL of the test database as SQLAlchemy's, for the checkpoint script."""
    if url.startswith("duckdb://"):
        return "duckdb:///" + str(Path(url.removeprefix("duckdb://")).resolve())
    parts = urlsplit(url)
    schema = dict(parse_qsl(parts.query))["schema"]
    return parts._replace(scheme="postgresql+psycopg2", query=f"options={quote(f'-csearch_path={schema}')}").geturl()


def _checkpoint(suites, url: str, where: Path) -> dict[tuple[str, str], bool]:
    paths = []
    for i, suite in enumerate(suites):
        path = where / f"{i}.gx_suite.json"
        path.write_text(json.dumps(export_gx.suite_document(suite)), encoding="utf-8")
        paths.append(path)
    env = {**os.environ, export_gx.CONNECTION_ENV: _gx_url(url), "GX_ANALYTICS_ENABLED": "false"}
    run = subprocess.run([sys.executable, str(SCRIPT), *map(str, paths), "--json"], env=env, cwd=where,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 1) and run.stdout.strip(), run.stderr[-3000:]
    verdicts = json.loads(run.stdout.strip().splitlines()[-1])["verdicts"]
    assert all(v["error"] is None for v in verdicts), [(v["guardrail"], v["error"][:400]) for v in verdicts if v["error"]]
    assert run.returncode == (0 if all(v["success"] for v in verdicts) else 1)
    return {(v["table"], v["guardrail"]): v["success"] for v in verdicts}


@pytest.mark.parametrize("kind", kind_params(("duckdb", "postgres")))
def test_gx_fails_exactly_the_guardrails_the_catalog_fails(kind, scratch, tmp_path):
    _needs_gx(kind)
    from cataloger_dagster.resources.database.resource import DatabaseResource

    table = TABLE + (" :id" if kind == "postgres" else "")  # PostgreSQL escapes it; DuckDB refuses it
    later = table + " next"
    url = load_tables(kind, {table: _named(shop_rows()), later: _named(shop_rows(regressed=True))}, scratch)
    db = DatabaseResource(url=url)
    try:
        results = learned(db.table(table), table)
        suites = [build_suite(db.table(table), results), build_suite(db.table(later), results)]
        suites[1] = suites[1].model_copy(update={"table": later})
        query = ibis_query(db.connect())
        catalog = {(s.table, r.name): r.passed for s in suites for r in run_suite(s, query)}
    finally:
        db.close()
    gx = _checkpoint(suites, url, tmp_path)

    assert gx == catalog
    failed = {name for (table, name), passed in catalog.items() if not passed}
    assert all(name == later for (name, _), passed in catalog.items() if not passed)
    assert {"unique:order_id", f"accepted_values:{COLUMNS['status']}"} <= failed
    assert any(name.startswith("rule:") for name in failed)
    kinds = {e["type"] for s in suites for e in export_gx.suite_document(s)["expectations"]}
    assert {"expect_column_values_to_be_unique", "expect_column_values_to_not_be_null",
            "expect_table_row_count_to_be_between", "expect_column_values_to_be_in_set",
            "expect_column_values_to_be_between", "unexpected_rows_expectation"} <= kinds
