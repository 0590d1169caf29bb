"""The check of issues an agent adds with a type no check is written for yet."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import outcome

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import ROWS, t


# --- the block sent to the sandbox starts here ---
def check_generic(columns):
    stats = (
        t.aggregate(
            **{f"{c}_nulls": t[c].isnull().sum() for c in columns}, **{f"{c}_distinct": t[c].nunique() for c in columns}
        )
        .to_pyarrow()
        .to_pylist()[0]
    )
    return outcome(
        "the issue an agent described (no check is written for its type)",
        "inconclusive",
        "no check tests this kind of issue; the columns' counts are shown",
        0,
        rows=ROWS,
        **{k: int(v or 0) for k, v in stats.items()},
    )
