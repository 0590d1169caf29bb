"""The missing values check, run by a session script against a real DuckDB table: confirmed where NULLs or blanks are, refuted where none are."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_nulls_and_blanks_confirm_and_a_complete_column_refutes(orders_db, tmp_path):
    issues = [made("orders", "missing_values", ["note"]), made("orders", "missing_values", ["id"])]
    found = run_checks(orders_db, "orders", issues, tmp_path)
    rows = scalar(orders_db, "SELECT count(*) FROM orders")
    missing = scalar(orders_db, "SELECT count(*) FROM orders WHERE note IS NULL OR trim(note) = ''")
    note, ids = found["orders_missing_values_note"], found["orders_missing_values_id"]
    assert note["verdict"] == "confirmed"
    assert note["evidence"] == {"missing": missing, "rows": rows, "percent": round(100 * missing / rows, 3)}
    assert ids["verdict"] == "refuted" and ids["evidence"]["missing"] == 0
    assert all(r["hypothesis"] and r["reason"] and isinstance(r["affected"], int) for r in found.values())
