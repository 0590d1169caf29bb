"""The check of duplicate keys issues."""

from typing import TYPE_CHECKING

import ibis
from cataloger_dagster.core.investigate.checks.helpers import (
    as_number,
    count,
    is_placeholder,
    listing,
    outcome,
    share,
    verb,
)

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import pct, rows_of, t


# --- the block sent to the sandbox starts here ---
def check_duplicate_keys(columns):
    columns = [columns] if isinstance(columns, str) else list(columns)
    hypothesis = (
        f"{listing(columns)} {verb(len(columns), 'identifies', 'identify')} a row, and the repeated values are errors"
    )
    f = t.filter(ibis.and_(*[t[c].notnull() for c in columns]))
    present = int(f.count().execute())
    groups = f.group_by(columns).aggregate(n=lambda g: g.count()).filter(lambda g: g.n > 1)
    stats = groups.aggregate(keys=lambda g: g.count(), rows=lambda g: g.n.sum()).to_pyarrow().to_pylist()[0]
    keys, rows = int(stats["keys"] or 0), int(stats["rows"] or 0)
    if not keys:
        return outcome(hypothesis, "refuted", "every value is unique", 0, repeated_values=0)
    examples = rows_of(groups.order_by([ibis.desc("n"), *columns]))
    # the repeated rows: copies of one row, or rows that differ (and in which columns)?
    others = [c for c in t.columns if c not in columns][:60]
    repeated = f.semi_join(groups, columns) if hasattr(f, "semi_join") else f.join(groups, columns)
    copies = int(repeated.select(*columns, *others).distinct().count().execute()) if others else keys
    differ = []
    if others:
        spread = repeated.group_by(columns).aggregate(**{f"d{i}": repeated[c].nunique() for i, c in enumerate(others)})
        top = (
            spread.aggregate(**{f"d{i}": spread[f"d{i}"].max() for i in range(len(others))}).to_pyarrow().to_pylist()[0]
        )
        differ = [c for i, c in enumerate(others) if int(top[f"d{i}"] or 0) > 1]
    part = rows / present if present else 0.0
    schema = t.schema()
    textual = [c for c in columns if schema[c].is_string()]
    spaced = (
        textual and int(f.filter(ibis.or_(*[f[c].contains(" ") for c in textual])).count().execute()) > 0.5 * present
    )
    evidence = dict(
        repeated_values=keys,
        rows=rows,
        percent=pct(rows, present),
        distinct_rows_among_them=copies,
        columns_that_differ=differ[:10],
        examples=[r[columns[0]] if len(columns) == 1 else {c: r[c] for c in columns} for r in examples],
    )
    if copies == keys:
        return outcome(
            hypothesis,
            "confirmed",
            f"the {count(rows, 'row')} sharing {count(keys, 'value')} are copies of each other "
            "in every column: true duplicates",
            rows,
            **evidence,
        )
    if any(schema[c].is_floating() for c in columns):
        return outcome(
            hypothesis,
            "refuted",
            "a measured (floating) value is no key: equal measurements differ in their other columns",
            rows,
            **evidence,
        )
    if spaced and len(differ) >= max(1, len(others) // 2):
        return outcome(
            hypothesis,
            "refuted",
            f"the values are names, and the rows sharing one differ in "
            f"{len(differ)} of {len(others)} other columns: different things with one name",
            rows,
            **evidence,
        )
    # text like a code or an e-mail (no spaces, no number, no placeholder, not blank): an identifier
    coded = (
        textual
        and not spaced
        and not any(
            as_number(v) is not None or not str(v).strip() or is_placeholder(v, typed=True)
            for r in examples
            for v in ([r[columns[0]]] if len(columns) == 1 else [r[c] for c in textual])
        )
    )
    if part <= 0.05 and coded:
        return outcome(
            hypothesis,
            "confirmed",
            f"an identifier written as text, unique but for {keys} "
            f"values ({share(rows, present)} of rows) whose rows differ: two records claim one "
            "identifier",
            rows,
            **evidence,
        )
    if part <= 0.01:
        return outcome(
            hypothesis,
            "confirmed",
            f"unique but for {count(keys, 'value')} ({share(rows, present)} of rows), "
            f"whose rows differ in {', '.join(differ[:3]) or 'nothing'}",
            rows,
            **evidence,
        )
    if part > 0.05:
        return outcome(
            hypothesis,
            "refuted",
            f"{share(rows, present)} of rows share a value with another and "
            f"differ in {len(differ)} columns: the column is not a key",
            rows,
            **evidence,
        )
    return outcome(
        hypothesis,
        "inconclusive",
        f"{share(rows, present)} of rows repeat a value: too many for a few slips, too few to say the column is no key",
        rows,
        **evidence,
    )
