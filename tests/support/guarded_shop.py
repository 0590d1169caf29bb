"""A small shop in a DuckDB file, profiled and checked by the real profiler and detectors: the
inputs a suite is built from.  `orders.total` is `subtotal + shipping` but on two rows, three
orders name a customer who does not exist, and `status` holds three values."""

from __future__ import annotations

from pathlib import Path

import duckdb
import ibis
from cataloger_dagster.core.guardrails.build import RunResults
from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.models import AnalysisResultModel, CodeInvestigation, InvestigationsResult
from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
from cataloger_dagster.core.profile.profiling import compute_profile

ROWS = 400
BROKEN_TOTALS = (17, 230)
ORPHANS = (5, 6, 7)


def make_shop(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers (customer_id INTEGER, name VARCHAR)")
    con.execute("INSERT INTO customers SELECT i, 'customer ' || i FROM range(1, 101) t(i)")
    con.execute(
        "CREATE TABLE orders (order_id INTEGER, customer_id INTEGER, status VARCHAR, "
        "subtotal DOUBLE, shipping DOUBLE, total DOUBLE, placed DATE)"
    )
    rows = []
    for i in range(1, ROWS + 1):
        subtotal, shipping = round(10 + (i * 37 % 500) / 10, 2), float(3 + i % 4)
        total = subtotal + shipping + (25.0 if i in BROKEN_TOTALS else 0.0)
        customer = 1000 + i if i in ORPHANS else 1 + i % 100
        status = ("shipped", "pending", "returned")[i % 3]
        rows.append((i, customer, status, subtotal, shipping, round(total, 2), f"2026-0{1 + i % 9}-1{i % 10}"))
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    con.close()


def results_of(path: Path, table: str = "orders", confirmed: tuple[str, ...] = ("rule_violations", "orphan_references")):
    con = ibis.duckdb.connect(str(path))
    t = con.table(table)
    profile = compute_profile(t, database="shop", table_name=table, fingerprint=compute_fingerprint(t))
    rules: list = []
    catalog = {name: con.table(name) for name in con.list_tables()}
    issues = detect_issues(t, profile, catalog=catalog, found_rules=rules)
    analysis = AnalysisResultModel(issues=issues, summary="", completedAt="2026-11-27T10:00:00Z", rules=rules)
    verdicts = [
        CodeInvestigation(code="", success=True, output=None, issue_id=i.id, verdict="confirmed")
        for i in issues
        if i.type in confirmed
    ]
    investigations = InvestigationsResult(table=table, investigations=verdicts)
    return con, RunResults(profile=profile, analysis=analysis, investigations=investigations, built_at="20261127T100000Z")


