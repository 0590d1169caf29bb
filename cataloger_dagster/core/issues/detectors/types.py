"""Numbers and dates stored as text: judged on the parsed values, with placeholders set aside.

One root cause, one issue: the 'NA' strings that made a numeric column text are part of
this issue's evidence, not a second issue.

Dates written as integers (20011229 for 29 December 2001, 200112 for a month) are the same
fault in a numeric column: sorting works by luck, but no date arithmetic or range does, and a
mean or a sum of them means nothing.  A column is read so only when every value lies in the
plausible years and nearly all have a valid month and day: eight-digit identifiers or counts
spread at random have a valid month and day in about 4% of values.
"""

from __future__ import annotations

from datetime import date
from typing import Optional

import ibis.expr.datatypes as dt

from cataloger_dagster.core.grammar import verb_for
from cataloger_dagster.core.issues.detectors.context import (
    Context,
    count,
    is_identifier,
    issue,
    name_words,
    one,
    pct,
)
from cataloger_dagster.core.models import ColumnProfile, IssueModel
from cataloger_dagster.core.values import finite_float

TYPE_SHARE = 0.9  # share of the non-placeholder values that must parse before a text column "is" numbers or dates
NOT_NUMERIC_TEXT = {"phone", "zip", "postal", "postcode", "iban", "account", "code", "sku", "id"}
FIRST_YEAR, LAST_YEAR = 1800, 2200  # the years an integer date may name
INTEGER_DATE_SHARE = 0.99  # share of the values with a valid month (and day)
MIN_INTEGER_DATES = 3  # distinct values: a constant is not read as a date
# integer layouts: (format, how it is written, the divisor that leaves the year)
INTEGER_DATES = (("%Y%m%d", "YYYYMMDD", 10_000), ("%Y%m", "YYYYMM", 100))


def _examples(values: dict[str, int], limit: int = 5) -> list[str]:
    return [v for v, _ in sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def stored_as_text(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_string() or cp.name in ctx.carried_as_text:
        return None
    reading = ctx.reading(cp)
    if reading is None or reading.kind is None or reading.share < TYPE_SHARE:
        return None
    if reading.kind == "number" and (name_words(cp.name) & NOT_NUMERIC_TEXT or is_identifier(cp.name)):
        return None  # identifiers and codes written with digits are text on purpose
    kind = reading.kind
    values = reading.weighted()
    low, high = values[0][0], values[-1][0]
    shown = (lambda v: f"{v:g}") if kind == "number" else (lambda v: v.isoformat(sep=" ").removesuffix(" 00:00:00"))
    placeholders = reading.placeholders
    unparsed = reading.unparsed
    held = f"{pct(reading.parsed_rows, reading.candidates)} of its {count(reading.candidates, 'value')} are {kind}s"
    extra = []
    if placeholders:
        n = sum(placeholders.values())
        extra.append(
            f"{count(n, 'row')} {verb_for(n, 'holds')} placeholders "
            f"({', '.join(repr(v) for v in _examples(placeholders, 3))}) that forced the text type"
        )
    if unparsed:
        n = sum(unparsed.values())
        extra.append(
            f"{count(n, 'row')} {verb_for(n, 'holds')} other text "
            f"({', '.join(repr(v) for v in _examples(unparsed, 3))})"
        )
    if kind == "date":
        extra.append(
            f"read as dates they run from {shown(low)} to {shown(high)}, not the alphabetical range a text sort gives"
        )
    target = "a numeric type" if kind == "number" else "DATE or TIMESTAMP"
    how = "TRY_CAST" if kind == "number" else f"parsing with the format {reading.date_format!r}"
    return issue(
        ctx,
        "numeric_as_text" if kind == "number" else "date_as_text",
        cp.name,
        severity="medium",
        category="quick_fixes",
        affectedRows=reading.usable,
        description=f"{cp.name} is stored as text ({dtype}) but {held}, so "
        + (
            "sums, sorting and comparisons treat them as strings"
            if kind == "number"
            else "date arithmetic and ranges do not work on it"
        )
        + (f"; {'; '.join(extra)}" if extra else "")
        + ".",
        suggestedAction=f"Convert {cp.name} to {target} ({how})"
        + (
            f", storing the placeholders {', '.join(repr(v) for v in _examples(placeholders, 3))} as NULL"
            if placeholders
            else ""
        )
        + (", and review the values that do not convert." if unparsed else "."),
        details={
            "kind": kind,
            "usable": reading.usable,
            "parsed": reading.parsed_rows,
            "share": reading.share,
            "placeholders": placeholders,
            "unparsed": dict(sorted(unparsed.items(), key=lambda kv: (-kv[1], kv[0]))[:10]),
            "unparsed_rows": sum(unparsed.values()),
            "date_format": reading.date_format,
            "min": shown(low),
            "max": shown(high),
        },
    )


def _integer_layout(cp: ColumnProfile) -> Optional[tuple[str, str, int]]:
    """The layout (format, name, divisor) every value of an integer column would have if it
    wrote dates, from the profile's minimum and maximum, or None."""
    low, high = finite_float(cp.min), finite_float(cp.max)
    if low is None or high is None:
        return None
    for layout in INTEGER_DATES:
        divisor = layout[2]
        if FIRST_YEAR * divisor <= low and high < (LAST_YEAR + 1) * divisor:
            return layout
    return None


def _integer_date(value: int, divisor: int) -> date:
    rest = value % divisor
    return date(value // divisor, rest // 100 if divisor == 10_000 else rest, rest % 100 if divisor == 10_000 else 1)


def dates_as_integers(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    """An integer column whose values are dates written YYYYMMDD or YYYYMM."""
    if not dtype.is_integer() or (cp.distinct or 0) < MIN_INTEGER_DATES or not cp.count or is_identifier(cp.name):
        return None
    layout = _integer_layout(cp)
    if layout is None:
        return None
    date_format, written, divisor = layout
    c = ctx.table[cp.name].cast("int64")
    rest = c % divisor
    month = rest // 100 if divisor == 10_000 else rest
    valid = (month >= 1) & (month <= 12)
    if divisor == 10_000:
        valid = valid & (rest % 100 >= 1) & (rest % 100 <= 31)
    found = one(
        ctx.table.filter(c.notnull()), n=c.count(), dates=valid.sum(), low=c.min(where=valid), high=c.max(where=valid)
    )
    n, dates = int(found["n"] or 0), int(found["dates"] or 0)
    if not n or dates < INTEGER_DATE_SHARE * n:
        return None
    try:
        low, high = _integer_date(int(found["low"]), divisor), _integer_date(int(found["high"]), divisor)
    except ValueError:
        return None  # a day past its month's end (20010231): not dates after all
    others = n - dates
    return issue(
        ctx,
        "date_as_text",
        cp.name,
        severity="medium",
        category="quick_fixes",
        affectedRows=n,
        description=f"{cp.name} is stored as integers ({dtype}) but {pct(dates, n)} of its {count(n, 'value')} are "
        f"dates written {written} ({found['low']} to {found['high']}: {low.isoformat()} to "
        f"{high.isoformat()}), so date arithmetic and ranges do not work on it and its mean and sum "
        "mean nothing.",
        suggestedAction=f"Convert {cp.name} to DATE (parsing its digits with the format {date_format!r})"
        + (f", and review the {count(others, 'value')} that do not convert." if others else "."),
        details={
            "kind": "date",
            "stored_as": "integer",
            "usable": n,
            "parsed": dates,
            "share": dates / n,
            "placeholders": {},
            "unparsed": {},
            "unparsed_rows": others,
            "date_format": date_format,
            "min": low.isoformat(),
            "max": high.isoformat(),
        },
    )
