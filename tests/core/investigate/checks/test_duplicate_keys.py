"""The duplicate keys check, run by a session script against a real DuckDB table: repeated keys that are copies of one row."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_a_key_repeated_by_a_copied_row_is_confirmed(orders_db, tmp_path):
    issue = made("orders", "duplicate_keys", ["id"])
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    keys = found["evidence"]
    assert found["verdict"] == "confirmed"
    assert (keys["repeated_values"], keys["rows"], keys["examples"], keys["distinct_rows_among_them"]) == (1, 2, [7], 1)
