from datetime import datetime, timedelta, timezone

from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite
from cataloger_dagster.core.guardrails.run import run_suite

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
