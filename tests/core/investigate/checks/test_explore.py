"""The explore block looks at the data and judges nothing."""

import pytest

from cataloger_dagster.core.investigate.code import explore_block, parse_records, setup_block
from session_checks import made, run_code

pytestmark = pytest.mark.slow


def test_explore_block_only_looks(orders_db, tmp_path):
    target = made("orders", "inconsistent_categories", ["status", "note", "qty", "email"])
    out = run_code("\n".join([setup_block("orders"), explore_block(target)]), orders_db, tmp_path)
    assert parse_records(out) == {}                      # it records no verdict
    looked_at = [line.split(" ", 1)[0] for line in out.split("\n") if line.split(" ", 1)[0] in target.affectedColumns]
    assert looked_at == ["status", "note", "qty"]        # at most three columns, in order
    assert "'Shipped'" in out and "'pending'" in out     # their most frequent values
