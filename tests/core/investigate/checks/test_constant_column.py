"""The constant column check, run by a session script against a real DuckDB table: one value in every row, or not."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_one_value_confirms_and_several_refute(orders_db, tmp_path):
    issues = [made("orders", "constant_column", ["country"]), made("orders", "constant_column", ["status"])]
    found = run_checks(orders_db, "orders", issues, tmp_path)
    assert found["orders_constant_column_country"]["verdict"] == "confirmed"
    assert found["orders_constant_column_country"]["evidence"]["value"] == "NL"
    assert found["orders_constant_column_status"]["verdict"] == "refuted"
