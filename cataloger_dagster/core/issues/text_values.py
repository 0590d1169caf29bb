"""What a text column's values really are: placeholders, numbers, dates or labels.

One query pulls the column's distinct values with their row counts (when there are
at most MAX_DISTINCT of them); everything else is read here in Python.  Parsing on
the host, not in SQL, is what makes the answer the same on every backend: a
PostgreSQL TRY_CAST that compiles to CAST, SQLite's lack of date parsing or MySQL's
lenient casts can no longer change what a column is judged to hold.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable, Optional

import ibis

from cataloger_dagster.core import vocabulary
from cataloger_dagster.core.vocabulary import NEVER_IN_PLACEHOLDER_CHARS  # noqa: F401 - read by the detectors

MAX_DISTINCT = 50_000
FORMAT_SAMPLE = 200  # distinct values tried against every date format before choosing one

# Values that stand for "unknown" wherever they appear, and those that do only among numbers or
# dates ('None' in a label column is content): the vocabulary's roles.
_PLACEHOLDER = vocabulary.full_match(vocabulary.UNKNOWN_WORDS, vocabulary.PLACEHOLDER_MARKS)
_TYPED_PLACEHOLDER = vocabulary.full_match(vocabulary.TYPED_PLACEHOLDERS)
_CODE_WORDS = {"country", "code", "state", "region", "iso", "lang", "language"}

_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
_GROUPED_NUMBER = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_CODE = re.compile(r"^[+-]?0\d")  # '007', '01001': codes whose leading zeros matter

# Date formats tried, most specific first; ISO 8601 (with any time part) is tried separately.
DATE_FORMATS = (
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d",
    "%m/%d/%Y %H:%M:%S",
    "%m/%d/%Y %H:%M",
    "%m/%d/%Y",
    "%d/%m/%Y",
    "%m/%d/%y",
    "%d/%m/%y",
    "%d.%m.%Y",
    "%d-%m-%Y",
    "%b %d %Y",
    "%b %d, %Y",
    "%B %d %Y",
    "%B %d, %Y",
    "%d %b %Y",
    "%d %B %Y",
    "%d-%b-%Y",
    "%d-%b-%y",
    "%a %b %d %Y",
    "%Y-%m",
)
ISO = "ISO 8601"


def value_counts(table: ibis.Table, column: str) -> Optional[dict[str, int]]:
    """Each distinct non-NULL value of a text column with its number of rows, or None when
    there are more than MAX_DISTINCT of them (free text: nothing here applies)."""
    present = table.filter(table[column].notnull())
    counts = (
        present.group_by(value=present[column]).aggregate(n=present.count()).order_by("value").limit(MAX_DISTINCT + 1)
    )
    rows = counts.to_pyarrow().to_pylist()
    if len(rows) > MAX_DISTINCT:
        return None
    return {str(r["value"]): int(r["n"]) for r in rows}


def is_placeholder(value: str, column: str = "", *, typed: bool = False, among_codes: bool = True) -> bool:
    """True when ``value`` stands for "unknown".  ``typed``: among numbers or dates, where
    'none' and zero dates are placeholders too.  'NA' in a country or state code is Namibia
    or North America, not a placeholder.  ``among_codes`` False: the column's other values
    are words ('English', 'French', 'Other'), so 'NA' in it is no code whatever its name."""
    key = vocabulary.normal(value)
    if key == "na" and among_codes and _CODE_WORDS & set(re.split(r"[\W_]+", column.casefold())):
        return False
    return bool(_PLACEHOLDER.match(key)) or (typed and bool(_TYPED_PLACEHOLDER.match(key)))


_SHORT_CODE = re.compile(r"^[A-Za-z]{2,3}$")
CODES_SHARE = 0.9


def short_codes(values: Iterable[str]) -> bool:
    """The values besides 'NA' are short letter codes ('US', 'FR', 'eng'), most of them: 'NA'
    among them can be a code too.  Values of full words say it cannot."""
    others = [v.strip() for v in values if v.strip() and vocabulary.normal(v) != "na"]
    return not others or sum(1 for v in others if _SHORT_CODE.match(v)) >= CODES_SHARE * len(others)


def parse_number(value: str) -> Optional[float]:
    """A number written as text, or None.  Codes with leading zeros, NaN and infinity are not numbers."""
    v = value.strip()
    if _CODE.match(v):
        return None
    if _NUMBER.match(v):
        number = float(v)
    elif _GROUPED_NUMBER.match(v):
        number = float(v.replace(",", ""))
    else:
        return None
    return number if math.isfinite(number) else None


def parse_date(value: str, fmt: str) -> Optional[datetime]:
    v = " ".join(value.split())
    try:
        if fmt == ISO:
            if not re.match(r"^\d{4}-\d{2}-\d{2}", v):
                return None
            parsed = datetime.fromisoformat(v.replace("Z", "+00:00"))
        else:
            parsed = datetime.strptime(v, fmt)
    except ValueError:
        return None
    return parsed


def best_date_format(values: dict[str, int]) -> Optional[str]:
    """The format that parses most rows of a sample of the values; None if none parses half."""
    sample = sorted(values, key=lambda v: (-values[v], v))[:FORMAT_SAMPLE]
    total = sum(values[v] for v in sample)
    best, best_rows = None, 0
    for fmt in (ISO, *DATE_FORMATS):
        rows = sum(values[v] for v in sample if parse_date(v, fmt) is not None)
        if rows > best_rows:
            best, best_rows = fmt, rows
    return best if total and best_rows >= 0.5 * total else None


@dataclass
class TextReading:
    """A text column read value by value.  Counts are rows, not distinct values."""

    usable: int = 0  # non-blank values
    blank: int = 0
    placeholders: dict[str, int] = field(default_factory=dict)
    kind: Optional[str] = None  # "number", "date" or None (labels)
    date_format: Optional[str] = None
    parsed: dict[str, float | datetime] = field(default_factory=dict)
    parsed_counts: dict[str, int] = field(default_factory=dict)  # value -> rows
    parsed_rows: int = 0
    unparsed: dict[str, int] = field(default_factory=dict)  # neither placeholder nor `kind`

    @property
    def candidates(self) -> int:
        """Rows that should hold a value of `kind`: usable rows that are not placeholders."""
        return self.usable - sum(self.placeholders.values())

    @property
    def share(self) -> float:
        return self.parsed_rows / self.candidates if self.candidates else 0.0

    def weighted(self) -> list[tuple[float | datetime, int]]:
        """(parsed value, rows), sorted by value."""
        return sorted(((self.parsed[v], n) for v, n in self.parsed_counts.items()), key=lambda p: p[0])


def read_text(values: dict[str, int], column: str) -> TextReading:
    """Reads the values of a text column: which are blank, placeholders, numbers or dates.
    ``kind`` is the type most of the non-placeholder values share, if any."""
    reading = TextReading()
    present: dict[str, int] = {}
    for value, n in values.items():
        if not value.strip():
            reading.blank += n
        else:
            reading.usable += n
            present[value] = n
    numbers = {v: x for v in present if (x := parse_number(v)) is not None}
    number_rows = sum(present[v] for v in numbers)
    others = {v: n for v, n in present.items() if v not in numbers}
    fmt = best_date_format(others) if others else None
    dates = {v: d for v in others if fmt and (d := parse_date(v, fmt)) is not None}
    date_rows = sum(present[v] for v in dates)
    parsed: dict[str, float] | dict[str, datetime]
    if number_rows >= date_rows and number_rows:
        reading.kind, parsed = "number", numbers
    elif date_rows:
        reading.kind, reading.date_format, parsed = "date", fmt, dates
    else:
        parsed = {}
    # typed: most values that are not placeholders parse, so the column holds numbers or dates
    # (and 'none' or a zero date among them is a placeholder too)
    # words among the values that do not parse say 'NA' is no code ('English', 'Other', 'NA')
    codes = short_codes(v for v in present if v not in parsed)
    maybe_placeholder = {
        v for v in present if v not in parsed and is_placeholder(v, column, typed=True, among_codes=codes)
    }
    other_rows = sum(n for v, n in present.items() if v not in parsed and v not in maybe_placeholder)
    parsed_rows = sum(present[v] for v in parsed)
    typed = bool(parsed) and parsed_rows >= other_rows
    for value, n in present.items():
        if typed and value in parsed:
            reading.parsed[value] = parsed[value]
            reading.parsed_counts[value] = n
            reading.parsed_rows += n
        elif value in maybe_placeholder and is_placeholder(value, column, typed=typed, among_codes=codes):
            reading.placeholders[value] = n
        else:
            reading.unparsed[value] = n
    if not typed:
        reading.kind, reading.date_format = None, None
    return reading


def weighted_quantile(pairs: list[tuple[float, int]], q: float) -> float:
    """The q-quantile of values given as sorted (value, rows) pairs (lower value at ties)."""
    total = sum(n for _, n in pairs)
    target = q * (total - 1)
    seen = 0
    for value, n in pairs:
        seen += n
        if seen > target:
            return value
    return pairs[-1][0]
