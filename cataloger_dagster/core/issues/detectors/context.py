"""What every detector shares: the table, its profile, the other tables, and how an issue is written."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Mapping, Optional

import ibis
import ibis.expr.datatypes as dt

from cataloger_dagster.core import portable, text
from cataloger_dagster.core.grammar import count_noun
from cataloger_dagster.core.issues import text_values
from cataloger_dagster.core.models import ColumnProfile, IssueModel, TableProfile
from cataloger_dagster.core.values import finite_float

APPROXIMATE_MARGIN = 2
NUMERIC_SENTINELS = (-999, -9999, -99999, -999999, 9999, 99999, 999999, 9999999)


@dataclass
class Context:
    table: ibis.Table
    profile: TableProfile
    catalog: Mapping[str, ibis.Table]
    now: datetime
    # the latest stored profiles of the other tables, by name (cheap facts for the reference search)
    profiles: Mapping[str, TableProfile] = field(default_factory=dict)
    # columns of another type that only travel as text (a UHUGEINT, a money domain): their
    # text is the database's rendering, not a type someone chose
    carried_as_text: set[str] = field(default_factory=set)
    cache: dict[tuple[str, str], Any] = field(default_factory=dict)
    # the table with every column, where `table` is narrowed to the column being checked: for
    # a figure counted for several columns in one scan
    whole: Optional[ibis.Table] = None
    # facts about the other tables (their keys, the values of a key), which do not depend on
    # this table: the caller may hand every table of one run over a database the same dict, so
    # that each fact is read once, by the first check that needs it, and serves the tables after
    # it (the reference search then costs a query per table, not per pair).  Plain data only,
    # never an ibis expression, whose connection may be closed by the time the next table is checked
    shared: dict[tuple[str, str], Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.profile.table

    @property
    def rows(self) -> int:
        return self.profile.row_count

    def values(self, cp: ColumnProfile) -> Optional[dict[str, int]]:
        """The text column's distinct values with their rows (None for free text with too many)."""
        key = ("values", cp.name)
        if key not in self.cache:
            self.cache[key] = None if too_many_values(cp) else text_values.value_counts(self.table, cp.name)
        return self.cache[key]

    def reading(self, cp: ColumnProfile) -> Optional[text_values.TextReading]:
        key = ("reading", cp.name)
        if key not in self.cache:
            values = self.values(cp)
            self.cache[key] = None if values is None else text_values.read_text(values, cp.name)
        return self.cache[key]


def too_many_values(cp: ColumnProfile) -> bool:
    """The profile says the text column has more distinct values than are read on the host."""
    # an approximate count (HyperLogLog) is never twice the true one: past twice the limit, the
    # column surely has too many values, and the query would group every row for nothing
    return cp.distinct is not None and cp.distinct > text_values.MAX_DISTINCT * (
        APPROXIMATE_MARGIN if cp.distinct_approximate else 1
    )


SAMPLE_ROWS = 200_000  # a bigger table's first look is a seeded sample of about this many rows


def seeded_sample(ctx: Context) -> Optional[tuple[ibis.Table, float]]:
    """A seeded sample of about SAMPLE_ROWS rows of the whole table, and its share of the rows,
    where the table is bigger and the database draws one (DuckDB, PostgreSQL); else None.  A
    detector takes a first look at it and reads the table only for what the look singles out."""
    whole = ctx.table if ctx.whole is None else ctx.whole
    if ctx.rows <= SAMPLE_ROWS:
        return None
    key = ("sample", "")
    if key not in ctx.cache:
        fraction = SAMPLE_ROWS / ctx.rows
        sample = whole.sample(fraction, method="row", seed=0)
        ctx.cache[key] = (sample, fraction) if portable.compiles(whole.get_backend(), sample) else None
    return ctx.cache[key]


COLUMNS_PER_SCAN = 30  # a few figures a column: within SQLite's and PostgreSQL's limits


def counted_together(
    ctx: Context,
    cp: ColumnProfile,
    kind: str,
    wanted: Callable[[ColumnProfile, dt.DataType], bool],
    counts: Callable[[ibis.Table, list[str]], dict[str, dict[str, Any]]],
) -> dict[str, Any]:
    """`counts` of column `cp`, figured in one scan with every other column of the table that
    `wanted` picks (the same figures, which their own checks will ask for): the first check
    pays the scan, the others read the cache.  A scan that fails counts `cp` alone, so that
    one column's failure stays its own."""
    key = (kind, cp.name)
    if key not in ctx.cache:
        whole = ctx.table if ctx.whole is None else ctx.whole
        schema = whole.schema()
        batch = [
            c.name
            for c in ctx.profile.columns
            if c.name != cp.name and c.name in schema and (kind, c.name) not in ctx.cache and wanted(c, schema[c.name])
        ]
        try:
            counted = counts(whole, [cp.name, *batch[: COLUMNS_PER_SCAN - 1]])
        except Exception:
            counted = counts(ctx.table, [cp.name])
        for name, stats in counted.items():
            ctx.cache[(kind, name)] = stats
    return ctx.cache[key]


def free_text_counts(ctx: Context, cp: ColumnProfile) -> dict[str, Any]:
    """A text column with too many values to read on the host: its values, those wrapped in double
    quotes, those with a space at either end, and those that could be placeholders (with the lowest and highest of them), shared
    by its checks and counted with the table's other such columns."""
    return counted_together(
        ctx, cp, "free text", lambda c, dtype: dtype.is_string() and too_many_values(c), _free_text_stats
    )


def _free_text_stats(table: ibis.Table, columns: list[str]) -> dict[str, dict[str, Any]]:
    aggs: dict[str, Any] = {}
    for i, name in enumerate(columns):
        s = table[name]  # a NULL is in none of them: count(), sum(), min() and max() pass over it
        maybe = might_be_placeholder(s)
        aggs[f"values{i}"], aggs[f"quoted{i}"] = s.count(), is_quoted(s).sum()
        aggs[f"padded{i}"] = is_padded(s).sum()
        # the lowest and highest of those values: when they are one value, it is the only candidate,
        # and the placeholder check needs no query of its own
        aggs[f"maybe{i}"], aggs[f"first{i}"], aggs[f"last{i}"] = maybe.sum(), s.min(where=maybe), s.max(where=maybe)
    stats = one(table, **aggs)
    return {
        name: {
            "values": int(stats[f"values{i}"] or 0),
            "quoted": int(stats[f"quoted{i}"] or 0),
            "padded": int(stats[f"padded{i}"] or 0),
            "maybe_placeholders": int(stats[f"maybe{i}"] or 0),
            "first_maybe": stats[f"first{i}"],
            "last_maybe": stats[f"last{i}"],
        }
        for i, name in enumerate(columns)
    }


def might_be_placeholder(s: ibis.StringValue) -> ibis.BooleanValue:
    """The value holds none of the characters no placeholder has (text_values.NEVER_IN_PLACEHOLDER_CHARS).
    A CASE of substring tests, not a regular expression nor an OR: the databases stop at the
    first character found ('@' in an e-mail, a digit in a code), where an OR tests all ten and
    DuckDB's regex takes four times as long over ten million values (SQLite has no regex of its
    own: ibis adds one in Python)."""
    # a NULL passes every WHEN (its tests are NULL, not true) and is no placeholder
    return ibis.cases(*((s.contains(ch), False) for ch in text_values.NEVER_IN_PLACEHOLDER_CHARS), else_=s.notnull())


def is_quoted(s: ibis.StringValue) -> ibis.BooleanValue:
    """Text wrapped in literal double quotes ('"Avatar"'): a pattern of a prefix and a suffix,
    which the databases test without counting the characters of every value."""
    return s.like('"%"')


def is_padded(s: ibis.StringValue) -> ibis.BooleanValue:
    """Text with a space at either end (' Delivered', 'shipped '): a prefix and a suffix pattern,
    as cheap as `is_quoted`; a value of spaces only is blank, which the missing-value check counts."""
    return ibis.cases((s.like(" %") | s.like("% "), s.strip() != ""), else_=False)


def not_nan(ctx: Context, value: ibis.Value) -> ibis.Value:
    """``value`` is not NaN: on backends that hold no NaN (SQLite, MySQL) always true."""
    if portable.backend_name(ctx.table) in portable.NO_NAN_BACKENDS:
        return ibis.literal(True)
    return ~value.isnan()


def issue(
    ctx: Context, type_: str, column: Optional[str], *, columns: Optional[list[str]] = None, **fields: Any
) -> IssueModel:
    ident = f"{ctx.name}_{type_}" + (f"_{column}" if column else "")
    affected = columns or ([column] if column else list(ctx.table.columns))
    return IssueModel(id=ident, type=type_, affectedColumns=affected, **fields)


def pct(part: float, whole: float) -> str:
    """A share as a person would write it: never "100.00%" unless it is all, never "0.00%" unless none."""
    if not whole:
        return "0%"
    share = 100.0 * part / whole
    if part == whole:
        return "100%"
    if part == 0:
        return "0%"
    shown = f"{share:.2f}"
    if shown == "100.00":
        return ">99.99%"
    if shown == "0.00":
        return "<0.01%"
    return f"{shown}%"


def count(n: int, noun: str) -> str:
    """``1 row``, ``2 rows``: a number with its noun in the right number; a zero stays a digit."""
    return count_noun(n, noun, zero=None)


def one(table: ibis.Table, **aggs: Any) -> dict[str, Any]:
    return table.aggregate(**aggs).to_pyarrow().to_pylist()[0]


def is_identifier(name: str) -> bool:
    lname = name.lower()
    return bool(re.search(r"(?:^|_| )(?:id|key|uuid|code|sku|no|num|number)$", lname) or re.search(r"[a-z]Id$", name))


def numeric_sentinels(cp: ColumnProfile) -> list[float]:
    return [s for s in NUMERIC_SENTINELS if s in (finite_float(cp.min), finite_float(cp.max))]


def is_measure(cp: ColumnProfile, dtype: dt.DataType) -> bool:
    """A number column that measures something (not a flag, not an identifier)."""
    return dtype.is_numeric() and not dtype.is_boolean() and not is_identifier(cp.name)


def name_words(name: str) -> set[str]:
    return set(text.words(name))
