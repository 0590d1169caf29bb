"""Rows that repeat another row: exactly, or in every column but a row number or a load time.

A table read from R or a CSV export often carries its row names as a first column (1, 2, 3 ...),
and a table filled by a loader stamps each row with the time it was inserted: a record entered
twice then differs from its copy in that column only, and a comparison of whole rows never
finds it.  Those columns are set aside (and named in the finding); the rest are compared.

Repeats are a finding only where chance cannot explain them: in a table whose columns take
few values (a survey of three answers per person), many rows are alike by nature; in a table whose
columns are all coarse (a catalogue of car models: make, engine size, gearbox, mileage rounded to
a mile), rows describe kinds, and two cars of one kind are two rows alike.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import ibis
import ibis.expr.datatypes as dt

from cataloger_dagster.core.grammar import verb_for
from cataloger_dagster.core.issues.detectors.context import Context, count, is_identifier, issue, name_words, pct
from cataloger_dagster.core import portable
from cataloger_dagster.core.issues.detectors.keys import (
    BITS_MAX_RANGE,
    _comparable,
    _distinct_by_bits,
    _large_integer_range,
    _repeats,
    _unique_column,
    distinct_rows,
)
from cataloger_dagster.core.models import ColumnProfile, IssueModel

# words of a column's name that say it records when the row was loaded, not what the row says
LOAD_WORDS = {
    "created",
    "inserted",
    "loaded",
    "load",
    "ingested",
    "ingest",
    "imported",
    "import",
    "updated",
    "modified",
    "etl",
    "synced",
    "extracted",
}
# words of a column's name that say it numbers the rows (R's row names, a CSV's unnamed index)
ROW_NUMBER_WORDS = {"rownames", "rowname", "row", "rownum", "rowid", "index", "idx", "column0", "unnamed"}
# the share of chance repeats (rows drawn at random from the combinations the columns allow) above
# which the observed repeats are no finding: a pessimistic estimate, since real values are not
# spread evenly, so repeats count only when chance makes far fewer of them
CHANCE_SHARE = 0.25
# a column of at most this many times sqrt(rows) values tells kinds apart, not records: rows of
# such columns only (a catalogue of configurations, a survey's answers) are alike by nature, their
# columns too dependent on one another for the chance above to say how often
KIND_SQRT = 4.0
NEAR_MAX_ROWS = 2_500_000  # rows but a row number are compared up to this size, or where a proof comes cheap
EXAMPLES = 3
EXAMPLE_COLUMNS = 6


def _is_row_number(cp: ColumnProfile, rows: int) -> bool:
    """An integer column holding exactly the row numbers (1..n or 0..n-1), whatever its name."""
    try:
        low, high = int(cp.min), int(cp.max)
    except (TypeError, ValueError):
        return False
    return low in (0, 1) and high - low + 1 == rows


def ignored_columns(ctx: Context) -> dict[str, str]:
    """The columns a record's copy may differ in: {column: why it is set aside}."""
    schema = ctx.table.schema()
    rows = ctx.rows
    ignored: dict[str, str] = {}
    for cp in ctx.profile.columns:
        if cp.name not in schema:
            continue
        dtype: dt.DataType = schema[cp.name]
        full = cp.count == rows and not cp.nulls and (cp.distinct or 0) >= 0.9 * rows
        numbered = _is_row_number(cp, rows) or bool(name_words(cp.name) & ROW_NUMBER_WORDS)
        if full and dtype.is_integer() and (numbered or is_identifier(cp.name)):
            why = "a row number" if numbered else "a surrogate id"
        elif full and (dtype.is_uuid() or cp.semantic_type == "uuid"):
            why = "a surrogate id (a UUID per row)"
        elif (dtype.is_timestamp() or dtype.is_date()) and name_words(cp.name) & LOAD_WORDS and (cp.distinct or 0) > 1:
            ignored[cp.name] = "a load time"
            continue
        else:
            continue
        # a unique id, proven (one query, which the duplicate-key check shares)
        if _repeats(ctx, cp.name) == (0, 0):
            ignored[cp.name] = f"{why}: unique on every row"
    return ignored


def _agreement(cp: ColumnProfile, n: int, distinct: int) -> float:
    """The chance that two rows drawn at random agree on the column: (n/d - 1)/(n - 1) when its
    d values are spread evenly; more when some values hold many rows (the profile's most frequent
    values, the rest spread evenly over the other values): a duration read as 2 or 4 minutes on a
    quarter of the rows makes rows agree far more often than its hundred values suggest."""
    even = (n / distinct - 1) / (n - 1)
    tops = [v.count for v in cp.top_values or [] if v.count > 1]
    if not tops or sum(tops) > n:
        return even
    rest, others = n - sum(tops), distinct - len(tops)
    pairs = sum(c * (c - 1) for c in tops) + (rest * (rest / others - 1) if others > 0 and rest > others else 0.0)
    return max(even, pairs / (n * (n - 1)))


def chance_repeats(ctx: Context, columns: list[str], repeats: int) -> float:
    """Pairs of rows expected to agree on every one of `columns` if the columns were independent,
    each with the spread of its values (`_agreement`).  A column of mostly distinct values that is
    unique but for the `repeats` being judged cannot explain them: its chance is nought."""
    by_name = {cp.name: cp for cp in ctx.profile.columns}
    n = ctx.rows
    if n < 2:
        return 0.0
    log_chance = math.log(n * (n - 1) / 2)
    for name in columns:
        cp = by_name.get(name)
        if cp is None or cp.distinct is None:
            return 0.0
        distinct = cp.distinct + (1 if cp.nulls else 0)
        if distinct >= max(n - repeats, n / 2):
            return 0.0
        log_chance += math.log(max(_agreement(cp, n, distinct), 1e-300))
    return math.exp(min(log_chance, 700.0))


def kinds_only(ctx: Context, columns: list[str]) -> bool:
    """Whether every one of `columns` is coarse: a category or a rounded measure of at most
    KIND_SQRT * sqrt(rows) values, no time of day.  Such a table describes kinds of things (a car's
    model, engine and gearbox; a survey's answers) and has no column that tells two records
    apart: two rows alike are two records of one kind, not a record copied.  A fine measure (a
    price of thousands of values), a time or a long text tells records apart: their repeats are
    copies."""
    schema = ctx.table.schema()
    by_name = {cp.name: cp for cp in ctx.profile.columns}
    most = KIND_SQRT * math.sqrt(ctx.rows)
    for name in columns:
        cp = by_name.get(name)
        if cp is None or cp.distinct is None or schema[name].is_timestamp() or cp.distinct > most:
            return False
    return True


def _examples(ctx: Context, compared: list[str], ignored: list[str]) -> list[dict[str, Any]]:
    t = ctx.table
    aggs: dict[str, Any] = {"copies": t.count()}
    for i, name in enumerate(ignored):
        aggs[f"first{i}"], aggs[f"last{i}"] = t[name].min(), t[name].max()
    groups = t.group_by(compared).aggregate(**aggs).filter(lambda g: g.copies > 1)
    found = groups.order_by([ibis.desc("copies"), *compared]).limit(EXAMPLES).to_pyarrow().to_pylist()
    examples = []
    for row in found:
        example: dict[str, Any] = {
            name: None if row[name] is None else str(row[name]) for name in compared[:EXAMPLE_COLUMNS]
        }
        example["copies"] = int(row["copies"])
        for i, name in enumerate(ignored):
            example[name] = [str(row[f"first{i}"]), str(row[f"last{i}"])]
        examples.append(example)
    return examples


def _dense_integers(ctx: Context, column: str) -> bool:
    """A large integer column whose values span at most twice their count: a bit per value is one
    quick pass (a sparse span scatters the bits over memory and costs as much as a grouping)."""
    found = _large_integer_range(ctx, column)
    return (
        found is not None
        and portable.backend_name(ctx.table) == "duckdb"
        and found[2] - found[1] < min(BITS_MAX_RANGE, 2 * found[0])
    )


def _proven_unique(ctx: Context, compared: list[str]) -> bool:
    """Whether a compared column is unique, from what costs (almost) nothing: an exact distinct
    count in the profile, a count already made, or a bit per value of a dense integer column."""
    for cp in ctx.profile.columns:
        if cp.name not in compared or cp.count != ctx.rows or cp.nulls:
            continue
        if not cp.distinct_approximate and cp.distinct == ctx.rows:
            return True
        if ctx.cache.get(("repeats", cp.name)) == (0, 0):
            return True
    return any(
        _dense_integers(ctx, c) and _distinct_by_bits(ctx, c)
        for c in compared
        if (profiled := next((p for p in ctx.profile.columns if p.name == c), None)) is not None
        and profiled.count == ctx.rows
        and (profiled.distinct or 0) >= 0.9 * ctx.rows
    )


def repeated_rows(ctx: Context, compared: list[str], near: bool) -> Optional[int]:
    """Rows that repeat another in `compared`, or None when not judged.  Whole rows, as always; rows
    but their row number only where a unique compared column comes cheap or the table is small
    enough to compare them (NEAR_MAX_ROWS): the search must not double the cost of a large table."""
    if _proven_unique(ctx, compared):
        return 0
    if not near:
        return 0 if _unique_column(ctx, compared) is not None else ctx.rows - distinct_rows(ctx.table, compared)
    if ctx.rows > NEAR_MAX_ROWS and any(cp.distinct_approximate for cp in ctx.profile.columns):
        return None
    return ctx.rows - distinct_rows(ctx.table, compared)


def duplicate_rows(ctx: Context) -> Optional[IssueModel]:
    comparable = _comparable(ctx.table.schema())
    ignored = {c: why for c, why in ignored_columns(ctx).items() if c in comparable}
    compared = [c for c in comparable if c not in ignored]
    if not compared or (ignored and len(compared) < 2):
        return None  # one value beside a row's number is no record that could have been copied
    if kinds_only(ctx, compared):
        return None  # rows of kinds: alike by nature, whatever their number (and not counted)
    dups = repeated_rows(ctx, compared, near=bool(ignored))
    if not dups or dups <= 0:
        return None
    expected = chance_repeats(ctx, compared, dups)
    if expected >= CHANCE_SHARE * dups:
        return None  # the columns take so few values that rows are alike by nature
    frac = dups / ctx.rows
    severity = "high" if frac > 0.1 else "medium" if frac > 0.01 else "low"
    rows_text = f"{count(dups, 'row')} ({pct(dups, ctx.rows)}) of {ctx.name}"
    verb = verb_for(dups, "repeats")
    if ignored:
        but = ", ".join(f"{c} ({why.split(':')[0]})" for c, why in ignored.items())
        description = f"{rows_text} {verb} another row in every column but {but}: the same record entered twice."
        action = (
            f"Keep one row of each record (compare every column but {', '.join(ignored)}) and find "
            "which load step inserts records twice."
        )
    else:
        description = f"{rows_text} {verb} another row exactly."
        action = "Keep one copy of each row (SELECT DISTINCT) and find which load step inserts rows twice."
    return issue(
        ctx,
        "duplicate_rows",
        None,
        columns=compared,
        severity=severity,
        category="quick_fixes",
        affectedRows=dups,
        description=description,
        suggestedAction=action,
        details={
            "rows": ctx.rows,
            "distinct_rows": ctx.rows - dups,
            "duplicate_rows": dups,
            "fraction": frac,
            "compared_columns": compared,
            "ignored_columns": ignored,
            "chance_repeats": round(expected, 3),
            "example_rows": _examples(ctx, compared, list(ignored)),
        },
    )
