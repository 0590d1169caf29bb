"""The orphan references check, run by a session script against a real DuckDB table: values with no row in the referenced table."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_the_missing_targets_are_counted_and_named(orders_db, tmp_path):
    issue = made("orders", "orphan_references", ["customer_id"], references="customers.id")
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    orphans = found["evidence"]
    assert orphans["rows"] == scalar(orders_db, "SELECT count(*) FROM orders WHERE customer_id NOT IN (SELECT id FROM customers)")
    assert orphans["distinct_missing"] == 2 and sorted(orphans["examples"]) == ["10", "11"]
