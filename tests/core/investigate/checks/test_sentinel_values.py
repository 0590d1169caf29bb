"""The sentinel values check, run by a session script against a real DuckDB table: a placeholder standing alone in its cell."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_a_placeholder_alone_in_its_cell_is_counted(orders_db, tmp_path):
    issue = made("orders", "sentinel_values", ["amount"], values={"-999": 1})
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    assert not found.get("error") and found["evidence"]["whole_cells"] == {"-999.0": 1}
