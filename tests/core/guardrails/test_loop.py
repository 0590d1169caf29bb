"""core/guardrails/loop.py and checks_log.py: the loop a failing guardrail closes, driven on the
shop (tests/support/guarded_shop.py) with a planted regression: the first run confirms the
three orders naming no customer and guards them; a later load adds three more; the guardrail check fails
and is logged in the store; the next catalog run's investigation confirms it (the finding's
history shows the failure and the confirmation) or refutes it (the guardrail's band is relearned
from what it measured, and the suite says so)."""

from __future__ import annotations

from dataclasses import replace

import duckdb
import pytest
from guarded_shop import make_shop, results_of

from cataloger_dagster.core.guardrails import tolerance
from cataloger_dagster.core.guardrails.build import build_suite
from cataloger_dagster.core.guardrails.checks_log import finding_history, read_checks, record_check
from cataloger_dagster.core.guardrails.loop import follow_up, started_failing
from cataloger_dagster.core.guardrails.run import ibis_query, run_suite
from cataloger_dagster.core.layout import GUARDRAILS, table_prefix
from cataloger_dagster.resources.store import LocalStore

FINDING = "orders_orphan_references_customer_id"
ORPHANS_NOW = 6
FIRST, SECOND = "2026-11-27T10:00:00.000000Z", "2026-11-28T10:00:00.000000Z"


@pytest.fixture
def looped(tmp_path):
    """(store, the first suite, the database after the bad load, the guardrail guarding the orphans)."""
    path = tmp_path / "shop.duckdb"
    make_shop(path)
    con, first = results_of(path)
    store = LocalStore(root=str(tmp_path / "store"))
    suite = build_suite(con.table("orders"), first, tables=_tables(con)).model_copy(update={"built_at": FIRST})
    store.write_json(table_prefix("shop", "orders"), FIRST, GUARDRAILS, suite.model_dump(mode="json"))
    con.disconnect()
    with duckdb.connect(str(path)) as raw:
        raw.execute("UPDATE orders SET customer_id = 2000 + order_id WHERE order_id BETWEEN 300 AND 302")
    (guard,) = [g.name for g in suite.guardrails if g.guards == FINDING]
    return store, suite, path, guard


def _tables(con):
    return {name: con.table(name) for name in con.list_tables()}


def _check(store, suite, path):
    con, later = results_of(path)
    results = run_suite(suite, ibis_query(con))
    record_check(store, "shop", suite, results)
    return con, later


def test_a_confirmed_failure_stands_and_the_finding_s_history_shows_both(looped):
    store, suite, path, RULE = looped
    con, later = _check(store, suite, path)
    (check,) = read_checks(store, "shop", "orders", since=FIRST)
    failed = {r.name: r for r in check.failing}
    assert failed[RULE].measured == ORPHANS_NOW and failed[RULE].guards == FINDING
    rebuilt = build_suite(con.table("orders"), later, tables=_tables(con))  # its investigation confirms the orphans again
    verdicts = {i.issue_id: i.verdict for i in later.investigations.investigations}
    assert verdicts[FINDING] == "confirmed"
    followed = follow_up(suite, rebuilt, [check], verdicts)
    (rule,) = [f for f in followed.followed_up if f.guardrail == RULE]
    assert rule.outcome == "confirmed" and rule.measured == ORPHANS_NOW and "confirmed it" in rule.sentence()
    assert followed.named(RULE) == rebuilt.named(RULE)  # it stands as the run built it
    prefix = table_prefix("shop", "orders")
    store.write_json(prefix, SECOND, GUARDRAILS, followed.model_dump(mode="json"))
    history = finding_history(store, "shop", "orders", FINDING)
    assert [what for _, what in history] == [
        f"guardrail {RULE} failed: measured 6",
        "the catalog run's investigation confirmed it",
    ]
    assert history[0][0] == check.checked_at and history[1][0] == SECOND


def test_a_refuted_failure_relearns_the_band_from_what_it_measured(looped):
    store, suite, path, RULE = looped
    con, later = _check(store, suite, path)
    checks = read_checks(store, "shop", "orders")
    verdicts = {FINDING: "refuted"}
    rebuilt = build_suite(con.table("orders"), replace(later, investigations=None), tables=_tables(con))
    assert all(g.guards != FINDING for g in rebuilt.guardrails)  # unconfirmed, it guards nothing
    followed = follow_up(suite, rebuilt, checks, verdicts)
    (rule,) = [f for f in followed.followed_up if f.guardrail == RULE]
    assert rule.outcome == "relearned" and rule.high == suite.named(RULE).high
    relearned = followed.named(RULE)
    assert relearned.high == rule.new_high == tolerance.grown(ORPHANS_NOW) and "Relearned" in relearned.why
    assert "refuted it, so its band is relearned: ..6" in rule.sentence()
    (result,) = [r for r in run_suite(followed, ibis_query(con)) if r.name == RULE]
    assert result.passed  # the level the investigation explained holds now


def test_a_guardrail_that_keeps_failing_started_failing_once(looped):
    store, suite, path, RULE = looped
    _check(store, suite, path)
    _check(store, suite, path)
    first, second = read_checks(store, "shop", "orders")
    assert RULE in {r.name for r in started_failing(first, [])}
    assert started_failing(second, [first]) == []


@pytest.mark.parametrize(
    ("measure", "measured", "low", "high", "band"),
    [
        ("rows", 22, None, 2, (None, 24.0)),  # a finding's rows: its new level plus a tenth
        ("share", 0.3, None, 0.05, (None, 0.33)),
        ("count", 900, 250, 750, (250, 990.0)),  # a two-sided band widens just enough, and a tenth
        ("count", 100, 250, 750, (90.0, 750)),
    ],
)
def test_a_relearned_band_holds_the_level_that_was_refuted(measure, measured, low, high, band):
    got = tolerance.relearned(measure, measured, low, high)
    assert got == pytest.approx(band)
    assert (got[0] is None or got[0] <= measured) and (got[1] is None or measured <= got[1])
