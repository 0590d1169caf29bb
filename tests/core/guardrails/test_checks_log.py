"""core/guardrails/checks_log.py: each run of a suite is an entry of the table's log in a real
local store; the breaking rows' keys are kept masked, a later read can start after a run, and an
entry or a suite that is not one is an error naming its file."""

from __future__ import annotations

import pytest

from cataloger_dagster.core.guardrails.checks_log import (
    check_of_run,
    load_suite,
    log_folder,
    read_checks,
    record_check,
)
from cataloger_dagster.core.guardrails.model import GuardrailResult, GuardrailSuite
from cataloger_dagster.core.layout import GUARDRAILS, table_prefix
from cataloger_dagster.resources.store import LocalStore

EMAIL = "jane.doe@example.com"


def _results(measured: float) -> list[GuardrailResult]:
    return [
        GuardrailResult(name="unique:email", kind="unique", passed=measured == 0, measured=measured, high=0,
                        failing_keys=[f"{EMAIL}, 7"] if measured else []),
        GuardrailResult(name="row_count", kind="row_count", passed=True, measured=100, low=50, high=150),
    ]


def test_each_check_is_logged_with_its_keys_masked_and_found_by_its_run(tmp_path):
    store = LocalStore(root=str(tmp_path))
    suite = GuardrailSuite(database="shop", table="people", dialect="duckdb", built_at="b1", version=1)
    first, _ = record_check(store, "shop", suite, _results(0), dagster_run_id="r1")
    second, where = record_check(store, "shop", suite, _results(3), dagster_run_id="r2")
    assert [c.dagster_run_id for c in read_checks(store, "shop", "people")] == ["r1", "r2"]
    assert [c.dagster_run_id for c in read_checks(store, "shop", "people", since=first.checked_at)] == ["r2"]
    (failing,) = second.failing
    assert failing.failing_keys == ["xxxx.xxx@xxxxxxx.xxx, 7"]
    raw = b"".join(data for _, data in store.read_entries(log_folder("shop", "people")))
    assert EMAIL.encode() not in raw and b"xxxx.xxx@xxxxxxx.xxx" in raw
    assert check_of_run(store, "shop", "people", "r2") == (second, where)
    assert check_of_run(store, "shop", "people", "r3") is None


def test_an_entry_or_a_suite_that_is_not_one_names_its_file(tmp_path):
    store = LocalStore(root=str(tmp_path))
    store.append_entry(log_folder("shop", "people"), b'{"table": "people"}')
    with pytest.raises(ValueError, match="is not a guardrail check"):
        read_checks(store, "shop", "people")
    prefix = table_prefix("shop", "people")
    store.write_json(prefix, "2026-11-27T10:00:00.000000Z", GUARDRAILS, {"guardrails": "none"})
    with pytest.raises(ValueError, match=r"guardrails.json .* is not a guardrail suite"):
        load_suite(store, prefix, "2026-11-27T10:00:00.000000Z")
    assert load_suite(store, prefix, "2026-11-28T10:00:00.000000Z") is None
