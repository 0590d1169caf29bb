"""The duplicate rows check, run by a session script against a real DuckDB table: whole rows repeated."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_a_row_written_twice_is_counted_with_an_example(orders_db, tmp_path):
    columns = ["id", "customer_id", "note", "status", "amount", "code", "day", "email", "country", "qty", "created"]
    issue = made("orders", "duplicate_rows", columns)
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    rows = scalar(orders_db, "SELECT count(*) FROM orders")
    distinct = scalar(orders_db, "SELECT count(*) FROM (SELECT DISTINCT * FROM orders)")
    assert found["evidence"]["duplicate_rows"] == rows - distinct == 1
    assert found["evidence"]["examples"][0]["id"] == 7
