"""The date as text check, run by a session script against a real DuckDB table: text that reads as dates."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_dates_in_text_are_confirmed(orders_db, tmp_path):
    issue = made("orders", "date_as_text", ["day"])
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "confirmed"
    assert found["evidence"]["dates"] == scalar(orders_db, "SELECT count(*) FROM orders")
