"""The check of duplicate rows issues."""

from typing import TYPE_CHECKING

import ibis
from cataloger_dagster.core.investigate.checks.helpers import count, outcome

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import ROWS, pct, rows_of, t

# --- the block sent to the sandbox starts here ---
def check_duplicate_rows(columns):
    distinct = int(t.select(*columns).distinct().count().execute())
    extra = ROWS - distinct
    groups = t.group_by(columns).aggregate(copies=lambda g: g.count()).filter(lambda g: g.copies > 1)
    examples = rows_of(groups.order_by([ibis.desc("copies"), *columns]), 3)
    return outcome("some rows are copies of others in every compared column",
                   "confirmed" if extra else "refuted",
                   f"{count(extra, 'row')} repeat another in all {len(columns)} columns" if extra else "no row repeats",
                   extra, duplicate_rows=extra, rows=ROWS, percent=pct(extra, ROWS), examples=examples)
