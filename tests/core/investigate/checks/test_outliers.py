"""The outliers check, run by a session script against a real DuckDB table: values beyond the fence, isolated from the rest."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_an_isolated_value_is_confirmed_and_the_placeholder_left_to_its_own_issue(orders_db, tmp_path):
    placeholder = made("orders", "sentinel_values", ["amount"], values={"-999": 1})
    issue = made("orders", "outliers", ["amount"], fence_low=0, fence_high=1000)
    found = run_checks(orders_db, "orders", [placeholder, issue], tmp_path)[issue.id]
    # -999 is the sentinel issue's, not an outlier: only 100000 is beyond the fence, far from the rest
    assert found["evidence"]["rows"] == 1 and found["evidence"]["examples"] == [100000.0]
    assert found["verdict"] == "confirmed" and found["evidence"]["isolated_rows"] == 1
