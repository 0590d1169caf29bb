"""The dbt export run by dbt itself: `dbt test` on the tests and the `cataloger_guardrail` test the
export writes, against the same data as the catalog's own guardrail run, on DuckDB and on
PostgreSQL.  The suites are learned from clean data; the tables then hold a later, bad load
(a repeated key, a misspelt status, totals off their rule, a NULL, a new orphan) and dbt fails
exactly on the guardrails the catalog's run fails, and passes the clean tables'; a stale load fails
its freshness in both.  A table and a
column whose names hold quotes, Jinja and placeholders go through as names."""

from __future__ import annotations

import json
import os
import subprocess
from urllib.parse import unquote, urlsplit

from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pytest
from backends import kind_params, load_tables
from guarded_shop import learned, shop_rows

from cataloger_dagster.core.guardrails import queries
from cataloger_dagster.core.guardrails.build import build_suite
from cataloger_dagster.core.guardrails.dbt_project import PASSWORD_VARIABLE, write_project
from cataloger_dagster.core.guardrails.dbt_schema import Descriptions, TableExport
from cataloger_dagster.core.guardrails.export_dbt import default_schema
from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite
from cataloger_dagster.core.guardrails.run import ibis_query, run_suite

ODD_TABLE = 'odd "t" {{ 1 + 1 }} %s $1'
ODD_COLUMN = "q\"u'o {% if x %} %(x)s $2"


def customers() -> pa.Table:
    return pa.table({"customer_id": pa.array(range(1, 101), pa.int32()),
                     "name": [f"customer {i}" for i in range(1, 101)]})


def planted(orders: pa.Table) -> pa.Table:
    """The regressed orders, with a NULL customer and one more orphan besides."""
    ids = orders["customer_id"].to_pylist()
    ids[9], ids[10] = None, 5000
    return orders.set_column(orders.schema.get_field_index("customer_id"), "customer_id", pa.array(ids, pa.int32()))


def odd(bad: bool) -> pa.Table:
    values = ["it's", "plain"] * 15
    if bad:
        values[4], values[7] = None, "new {{ value }}"
    return pa.table({"line_id": pa.array(range(1, 31), pa.int32()), ODD_COLUMN: values})


def loads() -> pa.Table:
    """Loads whose newest is two days old."""
    newest = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0) - timedelta(days=2)
    return pa.table({"loaded_at": pa.array([newest - timedelta(days=d) for d in range(5)], pa.timestamp("us"))})


def freshness(table, days: float) -> Guardrail:
    """The newest load at most `days` old (freshness guardrails need three runs' history to be
    learned: this one is written as the pins write it)."""
    return Guardrail(name=f"freshness:loaded_at:{days}", kind="freshness", columns=["loaded_at"], measure="seconds",
                     sql=queries.sql(queries.newest(table, "loaded_at"), queries.dialect_of(table)),
                     high=days * 86400, why=f"loads come at least every {days} days")


def verdicts_of_dbt(project, dbt_command, env) -> dict[tuple[str, str], bool]:
    """{(table, guardrail): passed} from `dbt test`'s own results."""
    done = subprocess.run([dbt_command, "test", "--profiles-dir", str(project), "--no-version-check",
                           "--no-use-colors"], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    manifest = json.loads((project / "target" / "manifest.json").read_text())
    assert done.returncode in (0, 1) and results, done.stdout[-3000:] + done.stderr[-2000:]
    assert all(r["status"] in ("pass", "fail") for r in results), done.stdout[-3000:]  # no test errored
    found = {}
    for r in results:
        node = manifest["nodes"][r["unique_id"]]
        mark = node["config"]["meta"]["cataloger"]
        found[(node["attached_node"] or manifest["sources"][node["depends_on"]["nodes"][0]]["name"],
               mark["guardrail"])] = r["status"] == "pass"
    return found


@pytest.mark.slow
@pytest.mark.parametrize("kind", kind_params(("duckdb", "postgres")))
def test_dbt_fails_exactly_on_the_guardrails_the_catalog_run_fails(kind, scratch, dbt_command, tmp_path):
    from cataloger_dagster.resources.database.connection import file_path, server_location
    from cataloger_dagster.resources.database.resource import DatabaseResource

    clean = shop_rows()
    url = load_tables(kind, {"customers": customers(), "orders": planted(shop_rows(regressed=True)),
                             "orders_learned": clean, ODD_TABLE: odd(bad=True), "odd_learned": odd(bad=False), "loads": loads()}, scratch)
    db = DatabaseResource(url=url)
    try:
        catalog = {name: db.table(name) for name in ("customers", "orders")}
        learned_from = {"customers": "customers", "orders": "orders_learned", ODD_TABLE: "odd_learned"}
        suites, expected = {}, {}
        for table, source in learned_from.items():
            results = learned(db.table(source), table, {**catalog, table: db.table(source)})
            suites[table] = build_suite(db.table(table), results, tables=catalog)
        suites["loads"] = GuardrailSuite(database="shop", table="loads", dialect=kind, built_at="r",
                                         guardrails=[freshness(db.table("loads"), 5), freshness(db.table("loads"), 1)])
        for table, suite in suites.items():
            for r in run_suite(suite, ibis_query(db.connect())):
                assert r.error is None, r
                expected[(table, r.name)] = r.passed
    finally:
        db.close()
    schema = server_location(url)[2] if kind == "postgres" else default_schema(kind)
    target = str(file_path(url)) if kind == "duckdb" else url
    project = tmp_path / "project"
    described = [TableExport(t, s, Descriptions(f"The {t} {{{{ table }}}}.", [])) for t, s in suites.items()]
    write_project(project, "shop", described, schema=schema, fresh=(kind, target))
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
           PASSWORD_VARIABLE: unquote(urlsplit(url).password or "")}

    got = verdicts_of_dbt(project, dbt_command, env)

    failing = sorted(k for k, passed in expected.items() if not passed)
    assert got == expected
    assert ("orders", "unique:order_id") in failing and ("orders", "accepted_values:status") in failing
    assert ("orders", "null_rate:customer_id") in failing and ("orders", "reference:customer_id") in failing
    assert ("orders", "rule:total = subtotal + shipping") in failing
    assert (ODD_TABLE, f"null_rate:{ODD_COLUMN}") in failing and (ODD_TABLE, f"accepted_values:{ODD_COLUMN}") in failing
    assert ("loads", "freshness:loaded_at:1") in failing and ("loads", "freshness:loaded_at:5") not in failing
    assert not [k for k in failing if k[0] == "customers"] and len(expected) > 20
    text = (project / "models" / "shop_sources.yml").read_text()
    assert "- not_null:" in text and "- unique:" in text and "- accepted_values:" in text  # dbt's own tests
