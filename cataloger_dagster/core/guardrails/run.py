"""Run a suite against the table's database: each assertion is its stored statement, run as it
is, with no agent and no sandbox.  A statement that fails is that guardrail's error, never the
suite's end."""

from __future__ import annotations

import math
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any, Callable, Optional

from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailResult, GuardrailSuite

Query = Callable[[str], list[tuple[Any, ...]]]  # a statement -> its rows


def ibis_query(con: Any) -> Query:
    """Run a statement on an ibis connection, exactly as it is (no view, no rewriting: the
    connection may be read-only), and give its rows."""

    def run(statement: str) -> list[tuple[Any, ...]]:
        cursor = con.raw_sql(statement)
        try:
            return [tuple(row) for row in cursor.fetchall()]
        finally:
            if con.name != "duckdb":  # DuckDB hands back its connection itself, which stays open
                cursor.close()

    return run


def run_suite(suite: GuardrailSuite, query: Query, *, now: Optional[datetime] = None) -> list[GuardrailResult]:
    now = now or datetime.now(timezone.utc)
    return [run_one(g, query, now) for g in suite.guardrails]


def run_one(g: Guardrail, query: Query, now: datetime) -> GuardrailResult:
    shown: dict[str, Any] = dict(name=g.name, kind=g.kind, low=g.low, high=g.high, guards=g.guards)
    try:
        rows = query(g.sql)
        measured = _measured(rows[0][0] if rows else None, g, now)
    except Exception as exc:  # noqa: BLE001 - one statement's failure is that guardrail's result
        return GuardrailResult(passed=False, error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}", **shown)
    passed = g.holds(measured)
    keys: list[str] = []
    if not passed and g.keys_sql:
        try:
            keys = [", ".join(str(v) for v in row) for row in query(g.keys_sql)]
        except Exception:  # noqa: BLE001 - the keys illustrate a failure; the verdict stands without them
            keys = []
    return GuardrailResult(passed=passed, measured=measured, failing_keys=keys, **shown)


def _measured(value: Any, g: Guardrail, now: datetime) -> Optional[float]:
    if value is None:
        return None
    if g.measure == "seconds":
        return (now - _aware(value)).total_seconds()
    number = float(value) if isinstance(value, (int, float, Decimal)) else float(str(value))
    return None if math.isnan(number) else number


def _aware(value: Any) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    elif isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
