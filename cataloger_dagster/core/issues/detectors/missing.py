"""Missing values: NULLs, blanks and NaN, and the placeholders that hide them ('NA', 'Unknown', -999, a $0 gross)."""

from __future__ import annotations

from typing import Optional

import ibis
import ibis.expr.datatypes as dt

from cataloger_dagster.core.issues import text_values
from cataloger_dagster.core.profile.nulls import structural_nulls
from cataloger_dagster.core.issues.detectors.context import (
    Context,
    count,
    counted_together,
    free_text_counts,
    is_measure,
    issue,
    might_be_placeholder,
    numeric_sentinels,
    one,
    pct,
)
from cataloger_dagster.core.values import finite_float
from cataloger_dagster.core.models import ColumnProfile, IssueModel, missing_severity

MAYBE_PLACEHOLDERS = 1000
ZERO_MIN_ROWS = 3
ZERO_MAX_SHARE = 0.5  # zero on most rows is the usual value ("no cost"), not a placeholder
ZERO_ISOLATION_STEPS = 100  # no value between zero and this many steps of the column's resolution
ZERO_NEAR_SHARE = 0.01


def missing_values(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    blanks = 0
    if dtype.is_string():
        values = ctx.values(cp)
        if values is not None:
            blanks = sum(n for v, n in values.items() if not v.strip())
        elif cp.pattern_counts is not None and "blank" in cp.pattern_counts:
            blanks = int(cp.pattern_counts["blank"])
        else:
            c = ctx.table[cp.name]
            blanks = int(ctx.table.filter(c.notnull() & (c.strip() == "")).count().execute())
    nans = cp.nan_count or 0
    # NULLs another column explains (NULL exactly when wind < 64) are the data's structure:
    # the understanding says so, and only the blanks and NaN left are missing.  A column NULL
    # wherever another is, but on a few rows, has no NULL of its own: the other column's
    # missing values and the rule's exceptions (rule_violations) are the two root causes
    explained = cp.name in structural_nulls(ctx.profile.null_patterns) or any(
        p.kind == "not_null_when" and p.columns == [cp.name] for p in ctx.profile.null_patterns
    )
    nulls = 0 if explained else cp.nulls
    missing = nulls + blanks + nans
    if missing == 0:
        return None
    frac = missing / ctx.rows
    parts = (
        ([] if explained else [f"{nulls:,} NULL"])
        + ([f"{blanks:,} blank"] if blanks else [])
        + ([f"{nans:,} NaN"] if nans else [])
    )
    return issue(
        ctx,
        "missing_values",
        cp.name,
        severity=missing_severity(frac),
        category="quick_fixes",
        affectedRows=missing,
        description=f"{cp.name} is missing in {missing:,} of {count(ctx.rows, 'row')} ({pct(missing, ctx.rows)}: "
        f"{', '.join(parts)}).",
        suggestedAction=(
            f"Find out why {cp.name} is missing so often before relying on it."
            if frac > 0.5
            else f"Fill {cp.name} from its source where it is known, and store blanks as NULL."
        ),
        details={"nulls": nulls, "blanks": blanks, "nan": nans, "missing": missing, "fraction": frac},
    )


MAX_TOGETHER = 32  # columns with equal NULL counts compared in the one query


def merge_missing_together(ctx: Context, issues: list[IssueModel]) -> list[IssueModel]:
    """One root cause, one issue: columns NULL on exactly the same rows (a film with no IMDB record
    has neither its rating nor its votes) miss one thing, the record they come from, so their
    missing-values findings are one finding naming the columns.  Columns with equal NULL counts
    are compared in one query; columns NULL on different rows stay apart."""
    nulls_of = {
        i.id: int(d["nulls"])
        for i in issues
        if i.type == "missing_values" and len(i.affectedColumns) == 1
        for d in [i.details or {}]
        if d.get("nulls") and d.get("nulls") == d.get("missing")
    }
    by_nulls: dict[int, list[IssueModel]] = {}
    for i in issues:
        if i.id in nulls_of:
            by_nulls.setdefault(nulls_of[i.id], []).append(i)
    groups = [g for g in by_nulls.values() if len(g) > 1][:MAX_TOGETHER]
    pairs = [(g[0], i) for g in groups for i in g[1:]][:MAX_TOGETHER]
    if not pairs:
        return issues
    t = ctx.table if ctx.whole is None else ctx.whole
    both = one(
        t,
        **{
            f"b{k}": (t[a.affectedColumns[0]].isnull() & t[b.affectedColumns[0]].isnull()).sum()
            for k, (a, b) in enumerate(pairs)
        },
    )
    same = {b.id for k, (a, b) in enumerate(pairs) if int(both[f"b{k}"] or 0) == nulls_of[a.id]}
    merged: dict[str, IssueModel] = {}
    drop: set[str] = set()
    for g in groups:
        together = [g[0]] + [i for i in g[1:] if i.id in same]
        if len(together) < 2:
            continue
        columns = [i.affectedColumns[0] for i in together]
        first, nulls = together[0], nulls_of[together[0].id]
        merged[first.id] = first.model_copy(
            update={
                "affectedColumns": columns,
                "description": f"{', '.join(columns[:-1])} and {columns[-1]} are missing together, on the same "
                f"{count(nulls, 'row')} of {count(ctx.rows, 'row')} ({pct(nulls, ctx.rows)}): one thing these "
                "rows lack, not one per column.",
                "suggestedAction": f"Find out why these rows lack {', '.join(columns)} (a record not joined, a "
                "source that did not answer) and fill them from that source where it is known.",
                "details": {**(first.details or {}), "columns": columns, "rule": "NULL on the same rows"},
            }
        )
        drop.update(i.id for i in together[1:])
    return [merged.get(i.id, i) for i in issues if i.id not in drop]


def _text_placeholders(ctx: Context, cp: ColumnProfile) -> dict[str, int]:
    reading = ctx.reading(cp)
    if reading is not None:
        # among numbers or dates the placeholders belong to the "stored as text" issue
        return {} if reading.kind else dict(reading.placeholders)
    stats = free_text_counts(ctx, cp)
    if not stats["maybe_placeholders"]:
        return {}  # every value holds a character no placeholder has
    if stats["first_maybe"] == stats["last_maybe"]:
        # one value could be a placeholder ('cust-0' among 'cust-1234'...): it is, or there is none
        only = str(stats["first_maybe"])
        return {only: stats["maybe_placeholders"]} if text_values.is_placeholder(only, cp.name) else {}
    present = ctx.table.filter(ctx.table[cp.name].notnull())
    # the values that could be placeholders (a small set) are read first: when none is one,
    # the column needs no grouping of all its values
    maybe = present.filter(might_be_placeholder(present[cp.name]))
    maybe = maybe.select(value=maybe[cp.name]).distinct().limit(MAYBE_PLACEHOLDERS + 1)
    candidates = [str(v) for v in maybe.to_pyarrow().column("value").to_pylist()]
    # the candidates are the column's values of letters: words among them say 'NA' is no code
    codes = len(candidates) > MAYBE_PLACEHOLDERS or text_values.short_codes(candidates)
    if len(candidates) <= MAYBE_PLACEHOLDERS and not any(
        text_values.is_placeholder(v, cp.name, among_codes=codes) for v in candidates
    ):
        return {}
    found = (
        present.group_by(value=present[cp.name])
        .aggregate(n=present.count())
        .order_by([ibis.desc("n"), "value"])
        .limit(1000)
    )
    return {
        str(r["value"]): int(r["n"])
        for r in found.to_pyarrow().to_pylist()
        if text_values.is_placeholder(str(r["value"]), cp.name, among_codes=codes)
    }


SMALLEST = 2000
SMALLEST_FEW_DISTINCT = 100_000  # up to this many distinct values, grouping them all is cheap
SMALLEST_MAX_ROWS = 100_000  # the most rows sorted to find the smallest distinct values


def _smallest_positive(ctx: Context, cp: ColumnProfile, c: ibis.Value) -> list:
    """The SMALLEST smallest distinct positive values, in order.  Sorting the column's smallest
    rows (a top-N, no hash table) finds them when those rows hold enough distinct values; only
    a column that repeats its small values more than the profile says needs every distinct value."""
    positive = ctx.table.filter(c > 0).select(v=c)
    every = positive.distinct().order_by("v").limit(SMALLEST)
    repeats = (cp.count or 0) / max(cp.distinct or 1, 1)
    rows = int(4 * SMALLEST * max(repeats, 1.0))
    if (cp.distinct or 0) <= SMALLEST_FEW_DISTINCT or rows > SMALLEST_MAX_ROWS:
        return every.to_pyarrow().column("v").to_pylist()  # a small hash table is cheaper than a sort
    found = positive.order_by("v").limit(rows).distinct().order_by("v").limit(SMALLEST)
    smallest = found.to_pyarrow().column("v").to_pylist()
    if len(smallest) == SMALLEST or rows >= (cp.count or 0):
        return smallest  # the smallest rows held them all, or were every row
    return every.to_pyarrow().column("v").to_pylist()


def _zero_placeholder(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> int:
    """Rows where 0 stands for "unknown": a non-negative measure whose other values never come
    near zero (a film's gross of 0 among grosses in the thousands), as opposed to a count or a
    rainfall where zero sits next to the smallest values."""
    if not _zero_candidate(cp, dtype):
        return 0
    c = ctx.table[cp.name]
    stats = _signs(ctx, cp)
    zeros, positive = stats["zeros"], stats["positive"]
    if stats["negative"] or zeros < ZERO_MIN_ROWS or zeros > ZERO_MAX_SHARE * cp.count:
        return 0
    smallest = _smallest_positive(ctx, cp, c)  # only for the few columns that got this far
    if len(smallest) < 20:
        return 0
    step = min(float(b) - float(a) for a, b in zip(smallest, smallest[1:]))
    if not _whole_numbers(smallest):
        return 0  # a measured share (0.0545, 0.1381...) has no resolution that sets zero apart
    near = int(ctx.table.filter((c > 0) & (c < ZERO_ISOLATION_STEPS * step)).count().execute())
    return zeros if near <= ZERO_NEAR_SHARE * positive else 0


# negative codes ("no rear seat" written -2 in a length) in a column of non-negative values
NEGATIVE_CODES_MAX = 3  # distinct negative values at most: more is a spread, not a code list
NEGATIVE_CODES_MIN_DISTINCT = 10  # the column's own values: a measure, not a small scale (-2..2)
NEGATIVE_CODES_REPEAT = 2  # rows per code at least, on average: codes repeat, slips do not


def _negative_codes(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> dict[str, int]:
    """A few negative whole numbers, each on several rows, in a column whose other values are
    non-negative and never come near them (-2 for "no rear seat" among rear-seat widths of 47 to
    62): a code for "not applicable" written as a number.  A temperature or a difference runs on
    through zero (-1 beside 0) or spreads over many negative values, each on a row or two; a
    quantity whose sign slipped mirrors the column's own values (-2 among 1 to 12)."""
    low, q25 = finite_float(cp.min), finite_float((cp.quantiles or {}).get("p25"))
    if low is None or low >= 0 or not low.is_integer() or q25 is None or q25 < 0:
        return {}
    if (cp.distinct or 0) < NEGATIVE_CODES_MIN_DISTINCT + 1:
        return {}
    c = ctx.table[cp.name]
    negative = ctx.table.filter(c < 0)
    found = (
        negative.group_by(value=negative[cp.name])
        .aggregate(n=negative.count())
        .order_by("value")
        .limit(NEGATIVE_CODES_MAX + 1)
        .to_pyarrow()
        .to_pylist()
    )
    if not found or len(found) > NEGATIVE_CODES_MAX or not all(float(r["value"]).is_integer() for r in found):
        return {}
    rows = sum(int(r["n"]) for r in found)
    if rows < ZERO_MIN_ROWS or rows < NEGATIVE_CODES_REPEAT * len(found):
        return {}
    above = finite_float(one(ctx.table, m=c.min(where=c >= 0))["m"])
    if above is None or above - float(found[-1]["value"]) < 2:
        return {}  # the negatives run on into the other values (-1 beside 0)
    if any(-float(r["value"]) >= above for r in found):
        return {}  # -2 where 2 is a value of the column: a sign slipped (a returned quantity), not a code
    return {f"{float(r['value']):g}": int(r["n"]) for r in found}


def _whole_numbers(values: list) -> bool:
    """The smallest values are whole numbers (dollars, counts): the column has a resolution, and
    a zero with no value within many of its steps stands apart.  A measurement written with
    decimals (a share, a lightness) may come as close to zero as it likes, and a zero in it is a
    value like the others."""
    return all(float(v).is_integer() for v in values)


def _zero_candidate(cp: ColumnProfile, dtype: dt.DataType) -> bool:
    # the profile's minimum saw every row: one that is not zero means no zero at all, or
    # negative values, and zero is then an ordinary value
    low = finite_float(cp.min)
    return is_measure(cp, dtype) and (cp.distinct or 0) >= 20 and (low is None or low == 0)


def _signs(ctx: Context, cp: ColumnProfile) -> dict[str, int]:
    """The zero, negative and positive values of a measure column, counted with the table's
    other columns that could hold a placeholder zero."""
    return counted_together(ctx, cp, "signs", _zero_candidate, _sign_counts)


def _sign_counts(table: ibis.Table, columns: list[str]) -> dict[str, dict[str, int]]:
    aggs = {}
    for i, name in enumerate(columns):
        c = table[name]
        aggs[f"zeros{i}"], aggs[f"negative{i}"], aggs[f"positive{i}"] = (c == 0).sum(), (c < 0).sum(), (c > 0).sum()
    stats = one(table, **aggs)
    return {
        name: {k: int(stats[f"{k}{i}"] or 0) for k in ("zeros", "negative", "positive")}
        for i, name in enumerate(columns)
    }


# a whole number heaped in a column of fractions: it holds at least this many times the rows of
# the most frequent fractional value, and this many rows at least
HEAP_RATIO = 3.0
HEAP_MIN_ROWS = 10
HEAP_MIN_DISTINCT = 30


def heaped_round_values(cp: ColumnProfile, dtype: dt.DataType) -> dict[str, int]:
    """Whole numbers that hold far more rows than any measured value of a column of fractions
    (durations to the second, with 53 rows of exactly 4 and 23 of exactly 2, no other value above
    7): a reading coded as a round number (short, long) or guessed, not measured.  From the
    profile's most frequent values alone.  Zero (no rain, no cost) and the column's bounds (a
    share capped at 100, a floor) are natural heaps, never counted; so are columns of whole
    numbers, where every value is round."""
    if not dtype.is_floating() or not is_measure(cp, dtype) or (cp.distinct or 0) < HEAP_MIN_DISTINCT:
        return {}
    tops = [(finite_float(v.value), v.count) for v in cp.top_values or []]
    tops = [(v, n) for v, n in tops if v is not None]
    fractional = [n for v, n in tops if not v.is_integer()]
    if len(tops) < 4 or len(fractional) < len(tops) / 2:
        return {}  # the column's frequent values are whole numbers: round values are its nature
    bounds = {finite_float(cp.min), finite_float(cp.max), 0.0}
    floor = max(HEAP_MIN_ROWS, HEAP_RATIO * max(fractional))
    return {f"{v:g}": n for v, n in tops if v.is_integer() and v not in bounds and n >= floor}


def sentinel_values(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    heaped: dict[str, int] = {}
    if dtype.is_string():
        counts = _text_placeholders(ctx, cp)
    elif is_measure(cp, dtype):
        counts = {}
        values = numeric_sentinels(cp)
        if values:
            c = ctx.table[cp.name]
            hits = ctx.table.filter(c.isin(values))
            found = hits.group_by(value=hits[cp.name]).aggregate(n=hits.count()).order_by("value")
            counts = {f"{r['value']:g}": int(r["n"]) for r in found.to_pyarrow().to_pylist()}
        zeros = _zero_placeholder(ctx, cp, dtype)
        if zeros:
            counts["0"] = zeros
        counts.update(_negative_codes(ctx, cp, dtype))
        heaped = {v: n for v, n in heaped_round_values(cp, dtype).items() if v not in counts}
        counts.update(heaped)
    else:
        return None
    counts = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10])
    total = sum(counts.values())
    if total == 0:
        return None
    frac = total / ctx.rows
    shown = ", ".join(f"{v!r} ({n:,})" for v, n in counts.items())
    zero = "0" in counts and not dtype.is_string()
    if heaped and set(counts) <= set(heaped):
        description = (
            f"{cp.name} holds round values on {count(total, 'row')} ({pct(total, ctx.rows)}): {shown}, each far "
            "more often than any measured value of the column: codes or guesses written as numbers, not measurements."
        )
    else:
        description = (
            f"{cp.name} stands in for unknown values with placeholders on {count(total, 'row')} "
            f"({pct(total, ctx.rows)}): {shown}."
            + (" Its other values never come near zero, so a 0 here means unknown." if zero else "")
        )
    return issue(
        ctx,
        "sentinel_values",
        cp.name,
        severity=missing_severity(frac),
        category="quick_fixes",
        affectedRows=total,
        description=description,
        suggestedAction=f"Store {', '.join(repr(v) for v in counts)} in {cp.name} as NULL, so that counts "
        "and averages treat them as unknown.",
        details={
            "values": counts,
            "rows": total,
            "fraction": frac,
            **({"heaped": sorted(heaped), "rule": "whole numbers heaped in a column of fractions"} if heaped else {}),
        },
    )
