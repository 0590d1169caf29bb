"""The out of range check, run by a session script against a real DuckDB table: negative quantities and dates in the future, by rule."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_each_rule_counts_its_rows(orders_db, tmp_path):
    now = "2025-06-01T12:00:00+00:00"
    issues = [made("orders", "out_of_range", ["qty"], counts={"negative": 4}, now=now),
              made("orders", "out_of_range", ["created"], counts={"in the future": 1}, now=now)]
    found = run_checks(orders_db, "orders", issues, tmp_path)
    negative = scalar(orders_db, "SELECT count(*) FROM orders WHERE qty < 0")
    assert found["orders_out_of_range_qty"]["evidence"]["by_rule"] == {"negative": negative}
    assert found["orders_out_of_range_created"]["evidence"]["by_rule"] == {"in the future": 1}
