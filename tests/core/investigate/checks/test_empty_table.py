"""The empty table check, run by a session script against a real DuckDB table: a table with rows refutes it."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_a_table_with_rows_refutes_it(orders_db, tmp_path):
    issue = made("orders", "empty_table", []).model_copy(update={"id": "orders_empty_table"})
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "refuted" and found["evidence"] == {"rows": scalar(orders_db, "SELECT count(*) FROM orders")}
