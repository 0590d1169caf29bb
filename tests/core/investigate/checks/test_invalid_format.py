"""The invalid format check, run by a session script against a real DuckDB table: values that do not match the column's pattern."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_the_invalid_value_is_counted_and_the_placeholder_left_out(orders_db, tmp_path):
    issue = made("orders", "invalid_format", ["email"], pattern=r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    rows = scalar(orders_db, "SELECT count(*) FROM orders")
    # 'N/A' is a sentinel, left to the sentinel check; 'nope' is the invalid value
    assert found["evidence"]["invalid"] == scalar(orders_db, "SELECT count(*) FROM orders WHERE email = 'nope'")
    assert found["evidence"]["usable"] == rows - 1
    assert found["evidence"]["examples"] == ["nope"]
