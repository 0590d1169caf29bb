"""The check of empty table issues."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import count, outcome

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import ROWS


# --- the block sent to the sandbox starts here ---
def check_empty_table():
    return outcome(
        "the table holds no rows",
        "confirmed" if ROWS == 0 else "refuted",
        "the table holds no rows" if ROWS == 0 else f"it holds {count(ROWS, 'row')}",
        0,
        rows=ROWS,
    )
