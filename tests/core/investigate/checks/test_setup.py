"""The setup block: it connects, reads the table's row count, and `record` prints one JSON line
per check, an error of one check never stopping the next."""

import pytest

from cataloger_dagster.core.investigate.code import check_block, investigate_block, parse_records, setup_block
from cataloger_dagster.core.investigate.codegen import SCRIPT_HEADER
from session_checks import made, run_code, scalar

pytestmark = pytest.mark.slow


def test_a_failing_check_is_recorded_and_the_next_one_still_runs(orders_db, tmp_path):
    gone = made("orders", "missing_values", ["no_such_column"])
    fine = made("orders", "missing_values", ["note"])
    code = "\n".join([SCRIPT_HEADER, setup_block("orders"), check_block("missing_values"),
                      investigate_block(gone, [gone, fine]), investigate_block(fine, [gone, fine]),
                      "print('rows', ROWS, pct(1, 8), pct(1, 0))"])
    out = run_code(code, orders_db, tmp_path)
    found = parse_records(out)
    assert found[gone.id]["verdict"] is None and "no_such_column" in found[gone.id]["error"]
    assert found[fine.id]["verdict"] == "confirmed"
    assert f"rows {scalar(orders_db, 'SELECT count(*) FROM orders')} 12.5 0.0" in out
