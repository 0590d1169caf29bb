"""The check of orphan references issues."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import count, outcome, value_counts

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import ROWS, con, pct, t


# --- the block sent to the sandbox starts here ---
def check_orphan_references(column, other_table, other_column, match):
    import re

    hypothesis = f"every {column} names a row of {other_table}.{other_column}"
    present = t.filter(t[column].notnull())
    if match == "digits":  # text codes against integer keys: compare their digits

        def digits(v):
            s = str(v).strip()
            return (s.lstrip("0") or "0") if s.isdigit() else None

        keys = {
            digits(r["k"])
            for r in con.table(other_table).select(k=lambda r: r[other_column]).distinct().to_pyarrow().to_pylist()
        }
        counts = value_counts(t[column])
        missing = sorted(str(v) for v, _ in counts if digits(v) not in keys)
        n = sum(k for v, k in counts if digits(v) not in keys)
        distinct = len(missing)
    else:
        keys = con.table(other_table).select(k=lambda r: r[other_column]).distinct()
        orphans = present.anti_join(keys, present[column] == keys.k)
        n = int(orphans.count().execute())
        missing = [str(v) for v, _ in value_counts(orphans[column], limit=1000, rel=orphans)]
        distinct = int(orphans.select(v=orphans[column]).distinct().count().execute())
    # do the missing keys follow a pattern (one shape, one ending)?
    shape = lambda v: re.sub(r"[A-Za-z]", "A", re.sub(r"[0-9]", "9", v))
    shapes = {}
    for v in missing:
        shapes[shape(v)] = shapes.get(shape(v), 0) + 1
    endings = {}
    for v in missing:
        endings[v[-3:]] = endings.get(v[-3:], 0) + 1
    pattern = {k: v for k, v in endings.items() if v >= max(2, 0.5 * len(missing))}
    evidence = dict(
        rows=n,
        percent=pct(n, ROWS),
        distinct_missing=distinct,
        references=f"{other_table}.{other_column}",
        examples=missing[:5],
        shapes=dict(sorted(shapes.items(), key=lambda p: -p[1])[:3]),
        common_ending=pattern,
    )
    if not n:
        return outcome(hypothesis, "refuted", f"every value is in {other_table}.{other_column}", 0, **evidence)
    why = f"{count(n, 'row')} name {count(distinct, 'value')} absent from {other_table}.{other_column}"
    if pattern:
        why += f", most ending in {next(iter(pattern))!r}: a class of codes the target does not hold"
    return outcome(hypothesis, "confirmed", why, n, **evidence)
