"""The generic check, run by a session script against a real DuckDB table: an issue type no check is written for is shown, not judged."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_an_unknown_type_is_inconclusive_with_its_columns_counts(orders_db, tmp_path):
    issue = made("orders", "looks_like_pii", ["note"])
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "inconclusive"
    assert found["evidence"]["note_nulls"] == 10
