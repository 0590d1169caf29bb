"""One text column holding one quantity in several units or notations: heights as 5'4", 165cm
and 64; weights as 70kg and 154 lb; durations as 1h30 and 90 min.

Read on the column's value counts (no query of its own): every distinct value is matched
against a few notations (a number, a number with a unit of UNITS, feet and inches, hours and
minutes).  One finding names each notation with its rows and examples, and converts to one
unit the values whose unit is known (a bare number takes the unit its column's name gives).
It replaces the findings the same values would otherwise raise on that column (numbers stored
as text, outliers, bad formats): one root cause, one finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

import ibis.expr.datatypes as dt

from cataloger_dagster.core.issues.detectors.context import Context, count, issue, name_words, pct
from cataloger_dagster.core.issues.text_values import is_placeholder, parse_number
from cataloger_dagster.core.models import ColumnProfile, IssueModel

# dimension -> (the unit values are converted to, {spelling: its size in that unit})
UNITS: dict[str, tuple[str, dict[str, float]]] = {
    "length": (
        "cm",
        {
            "mm": 0.1,
            "cm": 1.0,
            "m": 100.0,
            "km": 100_000.0,
            "in": 2.54,
            "inch": 2.54,
            "inches": 2.54,
            '"': 2.54,
            "ft": 30.48,
            "feet": 30.48,
            "foot": 30.48,
            "'": 30.48,
            "yd": 91.44,
            "mi": 160_934.4,
            "mile": 160_934.4,
            "miles": 160_934.4,
        },
    ),
    "mass": (
        "kg",
        {
            "mg": 1e-6,
            "g": 0.001,
            "gram": 0.001,
            "grams": 0.001,
            "kg": 1.0,
            "kgs": 1.0,
            "kilo": 1.0,
            "kilos": 1.0,
            "kilogram": 1.0,
            "kilograms": 1.0,
            "lb": 0.45359237,
            "lbs": 0.45359237,
            "pound": 0.45359237,
            "pounds": 0.45359237,
            "oz": 0.0283495,
            "st": 6.35029,
            "stone": 6.35029,
        },
    ),
    "duration": (
        "min",
        {
            "s": 1 / 60,
            "sec": 1 / 60,
            "secs": 1 / 60,
            "second": 1 / 60,
            "seconds": 1 / 60,
            "min": 1.0,
            "mins": 1.0,
            "minute": 1.0,
            "minutes": 1.0,
            "h": 60.0,
            "hr": 60.0,
            "hrs": 60.0,
            "hour": 60.0,
            "hours": 60.0,
            "d": 1440.0,
            "day": 1440.0,
            "days": 1440.0,
        },
    ),
}
# a unit's spelling -> its canonical name in the evidence (in, ft, lb...)
CANONICAL = {
    "inch": "in",
    "inches": "in",
    '"': "in",
    "feet": "ft",
    "foot": "ft",
    "'": "ft",
    "mile": "mi",
    "miles": "mi",
    "gram": "g",
    "grams": "g",
    "kgs": "kg",
    "kilo": "kg",
    "kilos": "kg",
    "kilogram": "kg",
    "kilograms": "kg",
    "lbs": "lb",
    "pound": "lb",
    "pounds": "lb",
    "stone": "st",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "day": "d",
    "days": "d",
}
NUMBER = r"(\d+(?:[.,]\d+)?)"
WITH_UNIT = re.compile(rf"^{NUMBER}\s*([a-z]+|\"|'|'')\.?$")
FEET_INCHES = re.compile(rf"^{NUMBER}\s*(?:'|ft\.?|feet|foot)\s*{NUMBER}\s*(?:\"|''|in\.?|inch|inches)?$")
HOURS_MINUTES = re.compile(rf"^{NUMBER}\s*(?:h|hr|hrs|hours?)\s*{NUMBER}\s*(?:m|min|mins|minutes?)?$")
BARE = "number without unit"
MIN_READ_SHARE = 0.9  # of the values that are not placeholders: the column holds quantities
SINGLE_NOTATION = 0.99  # one notation this dominant is the column's notation; the rest are typos


@dataclass
class Reading:
    notation: str  # "cm", "ft+in", "number without unit"...
    dimension: Optional[str]
    number: float  # in the unit of the dimension, or the bare number


def spellings(dimension: Optional[str] = None) -> dict[str, str]:
    """Each spelling of a unit of `dimension` (of any, when None) -> its name in the evidence."""
    return {
        spelling: CANONICAL.get(spelling, spelling)
        for d, (_, sizes) in UNITS.items()
        if dimension in (None, d)
        for spelling in sizes
    }


def _number(text: str) -> float:
    return float(text.replace(",", "."))


def read_quantity(value: str) -> Optional[Reading]:
    """How one value writes a quantity, or None when it writes none."""
    v = " ".join(value.strip().lower().split()).replace("\u2019", "'").replace("\u201d", '"')
    if (m := FEET_INCHES.match(v)) is not None:
        return Reading("ft+in", "length", _number(m[1]) * 30.48 + _number(m[2]) * 2.54)
    if (m := HOURS_MINUTES.match(v)) is not None:
        return Reading("h+min", "duration", _number(m[1]) * 60 + _number(m[2]))
    if (m := WITH_UNIT.match(v)) is not None:
        unit = "''" if m[2] == "''" else m[2]
        unit = '"' if unit == "''" else unit
        for dimension, (_, sizes) in UNITS.items():
            if unit in sizes:
                return Reading(CANONICAL.get(unit, unit), dimension, _number(m[1]) * sizes[unit])
        return None
    number = parse_number(v)
    return None if number is None else Reading(BARE, None, number)


def _named_unit(cp: ColumnProfile, dimension: str) -> Optional[tuple[str, float]]:
    """The unit the column's name gives its bare numbers (height_cm, weight_lbs), if any."""
    sizes = UNITS[dimension][1]
    for word in name_words(cp.name):
        if word in sizes and len(word) > 1:
            return CANONICAL.get(word, word), sizes[word]
    return None


def mixed_units(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_string() or cp.name in ctx.carried_as_text:
        return None
    values = ctx.values(cp)
    if not values:
        return None
    placeholders = {v: n for v, n in values.items() if is_placeholder(v, cp.name, typed=True) or not v.strip()}
    candidates = sum(n for v, n in values.items() if v not in placeholders)
    readings = {v: r for v in values if v not in placeholders and (r := read_quantity(v)) is not None}
    dimensions: dict[str, int] = {}
    for v, r in readings.items():
        if r.dimension:
            dimensions[r.dimension] = dimensions.get(r.dimension, 0) + values[v]
    if not dimensions or not candidates:
        return None
    dimension = max(dimensions, key=dimensions.__getitem__)
    readings = {v: r for v, r in readings.items() if r.dimension in (dimension, None)}
    read = sum(values[v] for v in readings)
    notations: dict[str, dict[str, int]] = {}
    for v, r in readings.items():
        notations.setdefault(r.notation, {})[v] = values[v]
    rows = {k: sum(g.values()) for k, g in notations.items()}
    top = max(rows.values())
    if read < MIN_READ_SHARE * candidates or len(notations) < 2 or top >= SINGLE_NOTATION * read:
        return None
    unit, _ = UNITS[dimension]
    named = _named_unit(cp, dimension)
    converted = {v: r.number for v, r in readings.items() if r.dimension}
    if named:
        converted.update({v: r.number * named[1] for v, r in readings.items() if not r.dimension})
    unknown = read - sum(values[v] for v in converted)
    likely = {} if named else _likely_units(values, readings, converted, dimension)
    order = sorted(notations, key=lambda k: -rows[k])
    breakdown: dict[str, dict[str, Any]] = {
        k: {"rows": rows[k], "examples": sorted(notations[k], key=lambda v: -notations[k][v])[:3]} for k in order
    }
    shown = "; ".join(
        f"{count(rows[k], 'value')} {'as ' + k if k != BARE else 'without a unit'} "
        f"({', '.join(repr(v) for v in breakdown[k]['examples'][:2])})"
        for k in order
    )
    numbers = sorted(converted.values())
    where = f"{BARE} read as {named[0]} (the column's name says so)" if named else None
    return issue(
        ctx,
        "mixed_units",
        cp.name,
        severity="medium",
        category="quick_fixes" if not unknown else "smart_fixes",
        affectedRows=read - top,
        description=f"{cp.name} writes one {dimension} in {len(notations)} notations: {shown}"
        + (
            f"; {count(unknown, 'value')} without a unit cannot be converted"
            + (" (by their size, " + ", ".join(f"{n:,} read as {u}" for u, n in likely.items()) + ")" if likely else "")
            if unknown
            else ""
        )
        + ".",
        suggestedAction=f"Store {cp.name} as a number in one unit ({unit}), converting each notation"
        + (f", and ask the source which unit the {count(unknown, 'value')} without one are in" if unknown else "")
        + "; keep the unit in the column's name.",
        details={
            "dimension": dimension,
            "unit": unit,
            "notations": breakdown,
            "rows_read": read,
            "share_of_main_notation": pct(top, read),
            "converted_rows": read - unknown,
            "unknown_unit_rows": unknown,
            "bare_numbers": where,
            "likely_units_of_bare_numbers": likely,
            "converted_examples": {
                v: round(converted[v], 4) for k in order for v in breakdown[k]["examples"] if v in converted
            },
            "converted_range": [numbers[0], numbers[-1]] if numbers else None,
            "placeholders": {v: n for v, n in placeholders.items() if v.strip()},
            "examples": [e for k in order for e in breakdown[k]["examples"][:2]],
        },
    )


def _likely_units(
    values: dict[str, int], readings: dict[str, Reading], converted: dict[str, float], dimension: str
) -> dict[str, int]:
    """Rows of bare numbers by the one unit (among those the column uses) that puts them within
    the range of the values whose unit is written: a guess for the steward, never a conversion."""
    known = [converted[v] for v in converted if readings[v].dimension]
    if not known:
        return {}
    low, high = min(known) / 1.2, max(known) * 1.2
    base, sizes = UNITS[dimension]
    used = {base} | {u for r in readings.values() if r.dimension for u in r.notation.split("+")}
    likely: dict[str, int] = {}
    for v, r in readings.items():
        if r.dimension:
            continue
        fits = [u for u in sorted(used) if u in sizes and low <= r.number * sizes[u] <= high]
        if len(fits) == 1:
            likely[fits[0]] = likely.get(fits[0], 0) + values[v]
    return dict(sorted(likely.items(), key=lambda kv: -kv[1]))


# the findings the same values raise on their column when their notations are not understood
REPLACED = ("numeric_as_text", "outliers", "out_of_range", "invalid_format", "inconsistent_categories")


def merge_mixed_units(issues: list[IssueModel]) -> list[IssueModel]:
    """A column of mixed units is one finding: the other findings on that column alone that its
    notations explain are dropped."""
    mixed = {i.affectedColumns[0] for i in issues if i.type == "mixed_units"}
    return [
        i for i in issues if not (i.type in REPLACED and len(i.affectedColumns) == 1 and i.affectedColumns[0] in mixed)
    ]
