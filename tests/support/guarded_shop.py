"""A small shop, profiled and checked by the real profiler and detectors: the inputs a guardrail
suite is built from.  `orders.total` is `subtotal + shipping` but on two rows, three orders name a
customer who does not exist, and `status` holds three values.  The regressed orders (a later, bad
load) break the rule on twenty more rows, add a misspelt status and repeat a key."""

from __future__ import annotations

from pathlib import Path

import duckdb
import ibis
import pyarrow as pa

from cataloger_dagster.core.guardrails.build import RunResults
from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.models import AnalysisResultModel, CodeInvestigation, InvestigationsResult
from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
from cataloger_dagster.core.profile.profiling import compute_profile

ROWS = 400
BROKEN_TOTALS = (17, 230)
ORPHANS = (5, 6, 7)
CONFIRMED = ("rule_violations", "orphan_references")


def shop_rows(regressed: bool = False) -> pa.Table:
    rows: dict[str, list] = {k: [] for k in ("order_id", "customer_id", "status", "subtotal", "shipping", "total")}
    for i in range(1, ROWS + 1):
        subtotal, shipping = round(10 + (i * 37 % 500) / 10, 2), float(3 + i % 4)
        off = 25.0 if i in BROKEN_TOTALS else 40.0 if regressed and 100 <= i < 120 else 0.0
        rows["order_id"].append(2 if regressed and i == 3 else i)
        rows["customer_id"].append(1000 + i if i in ORPHANS else 1 + i % 100)
        rows["status"].append("shiped" if regressed and i == 50 else ("shipped", "pending", "returned")[i % 3])
        rows["subtotal"].append(subtotal)
        rows["shipping"].append(shipping)
        rows["total"].append(round(subtotal + shipping + off, 2))
    return pa.table(rows, schema=pa.schema([("order_id", pa.int32()), ("customer_id", pa.int32()),
                                            ("status", pa.string()), ("subtotal", pa.float64()),
                                            ("shipping", pa.float64()), ("total", pa.float64())]))


def make_shop(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers AS SELECT i AS customer_id, 'customer ' || i AS name FROM range(1, 101) t(i)")
    orders = shop_rows()  # noqa: F841 - read by DuckDB's replacement scan
    con.execute("CREATE TABLE orders AS SELECT * FROM orders")
    con.close()


def learned(t: ibis.Table, name: str, catalog: dict | None = None, confirmed: tuple[str, ...] = CONFIRMED) -> RunResults:
    """What one catalog run of `t` leaves: its profile, findings, rules and (for the `confirmed`
    types) an investigation's confirmation."""
    profile = compute_profile(t, database="shop", table_name=name, fingerprint=compute_fingerprint(t))
    rules: list = []
    issues = detect_issues(t, profile, catalog=catalog, found_rules=rules)
    analysis = AnalysisResultModel(issues=issues, summary="", completedAt="2026-11-27T10:00:00Z", rules=rules)
    verdicts = [
        CodeInvestigation(code="", success=True, output=None, issue_id=i.id, verdict="confirmed")
        for i in issues
        if i.type in confirmed
    ]
    investigations = InvestigationsResult(table=name, investigations=verdicts)
    return RunResults(profile=profile, analysis=analysis, investigations=investigations, built_at="20261127T100000Z")


def results_of(path: Path, table: str = "orders", confirmed: tuple[str, ...] = CONFIRMED):
    con = ibis.duckdb.connect(str(path))
    catalog = {name: con.table(name) for name in con.list_tables()}
    return con, learned(con.table(table), table, catalog, confirmed)
