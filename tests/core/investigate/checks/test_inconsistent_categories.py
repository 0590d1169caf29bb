"""The inconsistent categories check, run by a session script against a real DuckDB table: one label written two ways."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_one_label_in_two_cases_is_confirmed_with_its_spellings(orders_db, tmp_path):
    issue = made("orders", "inconsistent_categories", ["status"], groups={"shipped": ["shipped", "Shipped"]})
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    rows = scalar(orders_db, "SELECT count(*) FROM orders")
    minority = scalar(orders_db, "SELECT count(*) FROM orders WHERE status = 'Shipped'")
    pending = scalar(orders_db, "SELECT count(*) FROM orders WHERE status = 'pending'")
    assert found["evidence"]["spellings"] == {"shipped": {"shipped": rows - minority - pending, "Shipped": minority}}
    assert found["evidence"]["rows_with_variant"] == minority
    assert found["verdict"] == "confirmed"
