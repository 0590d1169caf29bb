from datetime import datetime, timedelta, timezone

import pytest
from backends import kind_params, load_tables
from guarded_shop import learned, shop_rows

from cataloger_dagster.core.guardrails.build import build_suite

from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite
from cataloger_dagster.core.guardrails.run import ibis_query, run_suite

NOW = datetime(2026, 11, 27, 12, tzinfo=timezone.utc)


def test_a_failing_statement_is_its_guardrail_s_error_and_the_others_still_run():
    suite = GuardrailSuite(database="d", table="t", dialect="duckdb", built_at="x", guardrails=[
        Guardrail(name="broken", kind="rule", sql="SELECT nope", high=0, why="w"),
        Guardrail(name="rows", kind="rule", sql="SELECT 3", high=0, keys_sql="SELECT keys", why="w"),
    ])
    answers = {"SELECT 3": [(3,)], "SELECT keys": [(7, "a"), (9, "b")]}

    def query(statement):
        if statement not in answers:
            raise RuntimeError("Binder Error: column nope not found\nLINE 1")
        return answers[statement]

    broken, rows = run_suite(suite, query, now=NOW)
    assert not broken.passed and broken.error == "RuntimeError: Binder Error: column nope not found"
    assert not rows.passed and rows.measured == 3 and rows.failing_keys == ["7, a", "9, b"]


def test_freshness_measures_the_seconds_since_the_newest_update():
    g = Guardrail(name="f", kind="freshness", sql="SELECT max(t)", measure="seconds", high=3600, why="w")
    suite = GuardrailSuite(database="d", table="t", dialect="duckdb", built_at="x", guardrails=[g])
    (fresh,) = run_suite(suite, lambda s: [(NOW.replace(tzinfo=None) - timedelta(minutes=30),)], now=NOW)
    (stale,) = run_suite(suite, lambda s: [((NOW - timedelta(hours=2)).isoformat(),)], now=NOW)
    assert fresh.passed and fresh.measured == 1800
    assert not stale.passed and stale.measured == 7200


@pytest.mark.parametrize("kind", kind_params())
def test_a_suite_runs_as_stored_on_every_backend_and_fails_on_a_later_state_of_the_data(kind, scratch):
    """The suite learned from `orders`, bound to `orders_next` (the same table after a bad load:
    twenty totals off their rule, a new status, a repeated key): on each backend it holds on the
    data it learned from and fails on the later state, by the same counts."""
    from cataloger_dagster.resources.database.resource import DatabaseResource

    before, after = shop_rows(), shop_rows(regressed=True)
    db = DatabaseResource(url=load_tables(kind, {"orders": before, "orders_next": after}, scratch))
    try:
        results = learned(db.table("orders"), "orders")
        holds = build_suite(db.table("orders"), results)
        later = build_suite(db.table("orders_next"), results)
        query = ibis_query(db.connect())
        assert [r.name for r in run_suite(holds, query) if not r.passed] == []
        failed = {r.name: r for r in run_suite(later, query) if not r.passed}
    finally:
        db.close()
    assert all(r.error is None for r in failed.values()), failed
    assert failed["rule:total = subtotal + shipping"].measured == 22
    assert failed["accepted_values:status"].failing_keys == ["50"]
    assert failed["unique:order_id"].measured == 1
