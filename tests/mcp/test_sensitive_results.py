"""run_sql and execute_python under the sensitive-values policy, on a real catalog run: a value
of a column the stored profile classifies as sensitive never comes back in clear, whatever name
or expression the query gives it; a count of them does."""

from __future__ import annotations

import shutil

import duckdb
import pytest
from mcp_support import TABLE

from cataloger_dagster.core.sensitive.masking import protect
from cataloger_dagster.mcp.server import Service
from cataloger_dagster.mcp.sensitive_results import WHOLE
from cataloger_dagster.mcp.sessions import PythonSessions
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.sandbox import SandboxResource
from cataloger_dagster.resources.store import LocalStore


def _service(database, store, policy="mask") -> Service:
    return Service(database=DatabaseResource(url=f"duckdb://{database}"),
                   store=LocalStore(root=str(store), sensitive_values=policy),
                   sandbox=SandboxResource(backend="local", timeout_s=20))


def _run(service: Service, sql: str) -> dict:
    decision = service.runner.check(sql)
    assert decision.allowed, decision.reason
    return service.sensitive.result(service.runner.run(decision), decision.sql, decision.dialect)


def _emails(database) -> list[str]:
    with duckdb.connect(str(database), read_only=True) as con:
        return [r[0] for r in con.execute(f"SELECT email FROM {TABLE} WHERE email IS NOT NULL ORDER BY id").fetchall()]


@pytest.mark.parametrize("policy", ["mask", "hash", "drop"])
def test_run_sql_hides_a_sensitive_column_under_any_name_or_expression(small_catalog, tmp_path, policy):
    database, store = small_catalog[0], tmp_path / "store"
    shutil.copytree(small_catalog[1], store)  # `hash` keeps its key in the store
    service = _service(database, store, policy)
    assert service.sensitive.classes(TABLE)["email"] == WHOLE and "tier" not in service.sensitive.classes(TABLE)
    emails, key = _emails(database), service.values.key
    where = f"FROM {TABLE} WHERE email IS NOT NULL ORDER BY id"
    queries = {
        f"SELECT email AS contact {where}": lambda e: e,
        f"SELECT 'mail: ' || email || '.' AS contact {where}": lambda e: f"mail: {e}.",
        f"WITH c AS (SELECT id, upper(email) AS m FROM {TABLE} WHERE email IS NOT NULL) "
        "SELECT m AS contact FROM c ORDER BY id": str.upper,
        f"SELECT * FROM (SELECT id, email AS contact, tier {where}) AS s": lambda e: e,
    }
    for sql, made in queries.items():
        out = _run(service, sql)
        shown = [row[out["columns"].index("contact")] for row in out["rows"]]
        assert out["sensitive_columns"] == ["contact"], sql
        assert shown == [protect(made(e), policy, key) for e in emails], sql
        assert not any(e.lower() in str(out["rows"]).lower() for e in emails), sql
    every = _run(service, f"SELECT * {where}")
    assert every["sensitive_columns"] == ["email"]
    with duckdb.connect(str(database), read_only=True) as con:  # what is not sensitive comes back as it is
        tiers = sorted(r[0] for r in con.execute(f"SELECT tier FROM {TABLE} WHERE email IS NOT NULL").fetchall())
    assert sorted(r[every["columns"].index("tier")] for r in every["rows"]) == tiers
    # how many is no value: counts come back as they are
    counts = _run(service, f"SELECT count(email) AS n, count(DISTINCT email) AS d FROM {TABLE}")
    assert counts["rows"] == [[len(emails), len(set(emails))]] and counts["sensitive_columns"] == []


def test_each_result_column_is_judged_by_lineage_or_else_by_name(small_catalog):
    service = _service(*small_catalog)
    assert service.sensitive.output_classes(f"SELECT email AS e, tier FROM {TABLE}", "duckdb", ["e", "tier"]) == [
        WHOLE, None]
    # a query sqlglot cannot trace is judged by the result's column names
    assert service.sensitive._by_name([TABLE], ["EMAIL", "tier"]) == [WHOLE, None]


def test_execute_python_prints_no_sensitive_value_in_clear(small_catalog, tmp_path):
    database, store = small_catalog[0], tmp_path / "store"
    shutil.copytree(small_catalog[1], store)
    service = _service(database, store)
    sessions = PythonSessions(service.sandbox, service.database, service.catalog, service.redactor, service.db_lock,
                              service.sensitive)
    try:
        out = sessions.execute(TABLE, "import os, ibis\nt = ibis.connect(os.environ['DB_CONNECTION_STRING'])"
                                      f".table({TABLE!r})\nfor e in t.email.execute().dropna()[:20]: print(e)\n")
    finally:
        sessions.close()
    assert out["ok"], out
    emails = _emails(database)
    assert not any(e in out["stdout"] for e in emails)
    assert out["stdout"].count("@xxxxxxx.xxx") == 20
