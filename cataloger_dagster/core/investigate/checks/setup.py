"""The setup block's code: the connection, the table, and `record`, which runs one check and
prints its verdict as a JSON line.  The block's head (its imports, TABLE and NO_NAN_BACKENDS as
literals) is written by core/investigate/code.py before this code."""

import json
import os
from typing import TYPE_CHECKING

import ibis

if TYPE_CHECKING:  # literals the block's head writes
    from cataloger_dagster.core.investigate.checks.session import NO_NAN_BACKENDS, TABLE

# --- the block sent to the sandbox starts here ---
con = ibis.connect(os.environ["DB_CONNECTION_STRING"])
t = con.table(TABLE)
ROWS = int(t.count().execute())
RESULTS: dict = {}
HOLDS_NAN = con.name not in NO_NAN_BACKENDS  # SQLite stores a NaN as NULL, MySQL has none (nor isnan)


def record(issue_id, check, *args):
    """Run one check and print its verdict and evidence (or its error) as a JSON line."""
    try:
        outcome = check(*args)
    except Exception as exc:  # a failing check is a finding about the check, not the run
        outcome = {"verdict": None, "error": f"{type(exc).__name__}: {exc}"}
    RESULTS[issue_id] = outcome
    print(json.dumps({"issue": issue_id, **outcome}, default=str))


def pct(part, whole):
    return round(100.0 * part / whole, 3) if whole else 0.0


def rows_of(expr, limit=5):
    expr = expr.limit(limit)
    try:
        return expr.to_pyarrow().to_pylist()
    except Exception:  # a type Arrow cannot take (INTERVAL, BIT, ranges...): its text instead
        return expr.select(*[expr[c].cast("string") for c in expr.columns]).to_pyarrow().to_pylist()
