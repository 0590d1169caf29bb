"""The check of missing values issues."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import count, outcome

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import HOLDS_NAN, ROWS, pct, t


# --- the block sent to the sandbox starts here ---
def check_missing_values(column):
    c = t[column]
    dtype = t.schema()[column]
    missing = c.isnull()
    if dtype.is_string():
        # `|| ''`: ibis takes a PostgreSQL enum for text, but the database has no trim of it
        missing = missing | (c.concat("").strip() == "")
    if dtype.is_floating() and HOLDS_NAN:
        missing = missing | c.isnan()
    n = int(t.filter(missing).count().execute())
    return outcome(
        "values of the column are missing (NULL, blank or NaN)",
        "confirmed" if n else "refuted",
        f"{n} of {count(ROWS, 'row')} hold no value" if n else "every row holds a value",
        n,
        missing=n,
        rows=ROWS,
        percent=pct(n, ROWS),
    )
