"""The check of constant column issues."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import count, outcome

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import ROWS, t


# --- the block sent to the sandbox starts here ---
def check_constant_column(column):
    stats = t.aggregate(distinct=t[column].nunique(), nulls=t[column].isnull().sum()).to_pyarrow().to_pylist()[0]
    distinct, nulls = int(stats["distinct"]), int(stats["nulls"] or 0)
    value = t[column].max().execute() if distinct == 1 else None
    constant = distinct == 1 and not nulls
    return outcome(
        f"{column} holds one value on every row",
        "confirmed" if constant else "refuted",
        f"every row holds {value!r}" if constant else f"{count(distinct, 'value')} and {nulls} NULLs",
        ROWS if constant else 0,
        distinct=distinct,
        nulls=nulls,
        value=value,
        rows=ROWS,
    )
