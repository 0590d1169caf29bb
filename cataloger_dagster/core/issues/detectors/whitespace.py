"""Text with spaces at either end (' Delivered', 'shipped '), or a run of spaces inside a label
that also stands spaced right ('Home  & Kitchen' beside 'Home & Kitchen'): a load or a form that
did not trim.  One finding per column, whatever else
the padded values get wrong: the category check compares labels with their spaces trimmed."""

from __future__ import annotations

from typing import Optional

import ibis.expr.datatypes as dt

from cataloger_dagster.core.grammar import verb_for
from cataloger_dagster.core.issues.detectors.context import (
    Context,
    count,
    free_text_counts,
    is_padded,
    issue,
    pct,
)
from cataloger_dagster.core.issues.text_values import is_placeholder
from cataloger_dagster.core.models import ColumnProfile, IssueModel

FIXED_WIDTH_SHARE = 0.9  # padded values of one length on this share of rows: a fixed-width column
SHOWN = 5


def trimmed(value: str) -> str:
    """The value as it should have been stored: no spaces at its ends, single spaces inside."""
    return " ".join(value.split())


def padded(value: str) -> bool:
    """Spaces at an end of a one-line value; never a blank value (that is missing), nor prose over
    several lines, whose layout is its own."""
    core = value.strip()
    if not core or "\n" in core or "\r" in core:
        return False
    return value != core


def doubled(value: str, values: dict[str, int]) -> bool:
    """A run of spaces inside a value that also stands in the column spaced right ('Home  & Kitchen'
    beside 'Home & Kitchen'); alone, a doubled space is a name's layout ('BE-58  BARON')."""
    core = value.strip()
    return "  " in core and "\n" not in core and " ".join(core.split()) in values


def _fixed_width(values: dict[str, int], found: dict[str, int]) -> bool:
    """Every padded value is padded to one length, the column's longest, on most rows or for
    several values: CHAR(n), or a fixed-width file."""
    rows = sum(values.values())
    lengths = {len(v) for v in found}
    if len(lengths) != 1 or next(iter(lengths)) < max(len(v) for v in values):
        return False
    return sum(found.values()) >= FIXED_WIDTH_SHARE * rows or len(found) >= 3


def whitespace_values(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_string() or not cp.count:
        return None
    values = ctx.values(cp)
    if values is None:
        return _free_text(ctx, cp)
    found = {
        v: n for v, n in values.items() if (padded(v) or doubled(v, values)) and not is_placeholder(v.strip(), cp.name)
    }
    if not found or _fixed_width(values, found):
        return None
    twins = {v: trimmed(v) for v in found if trimmed(v) in values}
    rows = sum(found.values())
    shown = sorted(found, key=lambda v: (-found[v], v))
    return _issue(ctx, cp, rows, {v: found[v] for v in shown[:20]}, twins, distinct=len(found))


def _free_text(ctx: Context, cp: ColumnProfile) -> Optional[IssueModel]:
    """Too many values to read: the count comes with the table's scan of its free-text columns,
    and a few examples from one more query only where some are padded."""
    rows = free_text_counts(ctx, cp)["padded"]
    if not rows:
        return None
    c = ctx.table[cp.name]
    picked = (
        ctx.table.filter(is_padded(c))
        .group_by(v=c)
        .aggregate(n=lambda g: g.count())
        .order_by(["v"])
        .limit(SHOWN)
        .to_pyarrow()
        .to_pylist()
    )
    return _issue(ctx, cp, rows, {r["v"]: int(r["n"]) for r in picked}, {}, distinct=None)


def _issue(
    ctx: Context, cp: ColumnProfile, rows: int, shown: dict[str, int], twins: dict[str, str], distinct: Optional[int]
) -> IssueModel:
    examples = list(shown)[:SHOWN]
    split = (
        (
            f"; {count(len(twins), 'value')} ({', '.join(repr(v) for v in list(twins)[:3])}) "
            f"{verb_for(twins, 'stands')} beside the same text without the spaces, "
            "so that a group-by or a join splits them"
        )
        if twins
        else ""
    )
    return issue(
        ctx,
        "whitespace_values",
        cp.name,
        severity="medium" if twins else "low",
        category="quick_fixes",
        affectedRows=rows,
        description=f"{count(rows, 'value')} of {cp.name} ({pct(rows, cp.count)}) carry spaces at either end or "
        f"doubled inside, e.g. {', '.join(repr(v) for v in examples[:3])}{split}.",
        suggestedAction=f"Trim {cp.name} (and collapse doubled spaces) in the table and in the load that "
        "writes it, so that equal text compares equal.",
        details={
            "padded_rows": rows,
            "padded_values": distinct,
            "fraction": rows / cp.count,
            "values": shown,
            "twins": twins,
            "examples": examples,
        },
    )
