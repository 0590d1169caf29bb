"""The numeric as text check, run by a session script against a real DuckDB table: text that reads as numbers, and text that does not."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_numbers_in_text_confirm_and_other_text_refutes(orders_db, tmp_path):
    issues = [made("orders", "numeric_as_text", ["code"]), made("orders", "numeric_as_text", ["email"])]
    found = run_checks(orders_db, "orders", issues, tmp_path)
    code = found["orders_numeric_as_text_code"]
    assert code["verdict"] == "confirmed" and code["evidence"]["numbers"] == scalar(orders_db, "SELECT count(*) FROM orders")
    assert found["orders_numeric_as_text_email"]["verdict"] == "refuted"
