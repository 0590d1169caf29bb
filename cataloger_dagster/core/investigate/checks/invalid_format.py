"""The check of invalid format issues."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import count, outcome

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import pct, rows_of, t


# --- the block sent to the sandbox starts here ---
def check_invalid_format(column, pattern, ignore):
    s = t[column].strip()
    usable = t.filter(t[column].notnull() & (s != "") & ~s.lower().isin(ignore))
    ok = usable[column].strip().re_search(pattern)
    stats = usable.aggregate(usable=lambda g: g.count(), valid=ok.sum()).to_pyarrow().to_pylist()[0]
    n, valid = int(stats["usable"]), int(stats["valid"] or 0)
    bad = n - valid
    examples = [r[column] for r in rows_of(usable.filter(~ok).select(column).distinct().order_by(column))]
    return outcome(
        f"values of {column} break the format the column follows ({pattern})",
        "confirmed" if bad else "refuted",
        f"{bad} of {count(n, 'value')} do not match it" if bad else "every value matches it",
        bad,
        invalid=bad,
        usable=n,
        percent=pct(bad, n),
        examples=examples,
    )
