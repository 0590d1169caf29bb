"""The check of duplicate rows issues."""

from typing import TYPE_CHECKING

import ibis
from cataloger_dagster.core.investigate.checks.helpers import count, outcome

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import ROWS, pct, rows_of, t


# --- the block sent to the sandbox starts here ---
def check_duplicate_rows(columns, ignored=None):
    ignored = dict(ignored or {})
    hypothesis = (
        "some rows are copies of others in every compared column"
        if not ignored
        else f"some rows are copies of others in every column but {', '.join(ignored)}, "
        "which only tell the copies apart"
    )
    distinct = int(t.select(*columns).distinct().count().execute())
    extra = ROWS - distinct
    groups = t.group_by(columns).aggregate(copies=lambda g: g.count()).filter(lambda g: g.copies > 1)
    examples = rows_of(groups.order_by([ibis.desc("copies"), *columns]), 3)
    evidence = dict(
        duplicate_rows=extra, rows=ROWS, percent=pct(extra, ROWS), examples=examples, ignored_columns=ignored
    )
    if not extra:
        return outcome(hypothesis, "refuted", "no row repeats another in the compared columns", 0, **evidence)
    # a set-aside column that is no row identity (it repeats across the table) is data: the
    # "copies" differ in something that matters
    ids = [c for c, why in ignored.items() if "load time" not in why]
    if ids:
        stats = t.aggregate(**{f"d{i}": t[c].nunique() for i, c in enumerate(ids)}).to_pyarrow().to_pylist()[0]
        evidence["distinct_values"] = {c: int(stats[f"d{i}"] or 0) for i, c in enumerate(ids)}
        data = [c for c, n in evidence["distinct_values"].items() if n < ROWS]
        if data:
            return outcome(
                hypothesis,
                "refuted",
                f"the rows differ in {', '.join(data)}, whose values repeat across "
                "the table: it is data, not a row number, so the rows are different records",
                0,
                **evidence,
            )
    if distinct <= ROWS / 2:
        return outcome(
            hypothesis,
            "inconclusive",
            f"most rows repeat another ({count(extra, 'row')}): the compared "
            "columns may not tell separate records apart",
            extra,
            **evidence,
        )
    but = (
        f" but {', '.join(ignored)} (unique on every row)" if ids else (f" but {', '.join(ignored)}" if ignored else "")
    )
    return outcome(
        hypothesis,
        "confirmed",
        f"{count(extra, 'row')} repeat another in all {len(columns)} compared columns{but}",
        extra,
        **evidence,
    )
