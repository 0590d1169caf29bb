"""Generated table histories: real profile.json files in a real store, at chosen run times.

`write_history(store, prefix, days)` writes one run per entry of ``days`` (a list of `Day`), each
a profile of a small orders table whose numbers the entry sets: the tests of the history findings
and the benchmark build their tables with it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Optional

from cataloger_dagster.core.layout import PROFILE, format_timestamp
from cataloger_dagster.core.models import (
    ColumnProfile, Fingerprint, Histogram, TableProfile, ValueCount,
)

START = datetime(2026, 9, 7, 6, 0, tzinfo=timezone.utc)        # a Monday, 06:00 UTC


@dataclass
class Day:
    rows: int
    amount_centre: float = 50.0          # where the amount histogram's mass sits
    null_rate: float = 0.0               # of the amount column
    statuses: dict[str, float] = field(default_factory=lambda: {"paid": 0.7, "open": 0.2, "void": 0.1})
    updated: Optional[str] = None        # max(updated_at); None: moves with the row count
    extra_columns: tuple[str, ...] = ()
    amount_dtype: str = "float64"


def run_timestamp(n: int, *, every: timedelta = timedelta(days=1), start: datetime = START) -> str:
    return format_timestamp(start + n * every)


def _histogram(centre: float, count: int) -> Histogram:
    edges = [float(e) for e in range(0, 110, 10)]
    weights = [1.0 / (1.0 + abs((lo + 5) - centre) / 10) ** 3 for lo in edges[:-1]]
    counts = [int(count * w / sum(weights)) for w in weights]
    counts[-1] += count - sum(counts)
    return Histogram(edges=edges, counts=counts)


def profile_of(day: Day, table: str = "orders", database: str = "shop") -> TableProfile:
    nulls = int(day.rows * day.null_rate)
    present = day.rows - nulls
    updated = day.updated or (START + timedelta(minutes=day.rows)).isoformat()
    columns = [
        ColumnProfile(name="id", dtype="!int64", kind="integer", nullable=False, count=day.rows, nulls=0,
                      null_fraction=0.0, distinct=day.rows, min=1, max=day.rows,
                      histogram=Histogram(edges=[1.0, float(max(day.rows, 2))], counts=[day.rows])),
        ColumnProfile(name="amount", dtype=day.amount_dtype, kind="float", count=present, nulls=nulls,
                      null_fraction=nulls / day.rows if day.rows else 0.0, distinct=min(present, 900),
                      min=0.0, max=100.0, histogram=_histogram(day.amount_centre, present)),
        ColumnProfile(name="status", dtype="string", kind="string", count=day.rows, nulls=0, null_fraction=0.0,
                      distinct=len(day.statuses),
                      top_values=[ValueCount(value=v, count=int(day.rows * s)) for v, s in day.statuses.items()]),
        ColumnProfile(name="updated_at", dtype="timestamp", kind="timestamp", count=day.rows, nulls=0,
                      null_fraction=0.0, distinct=day.rows, min=START.isoformat(), max=updated),
        *[ColumnProfile(name=name, dtype="int64", kind="integer", count=day.rows, nulls=0, null_fraction=0.0,
                        distinct=10, min=0, max=9) for name in day.extra_columns],
    ]
    schema = hashlib.sha256(repr([(c.name, c.dtype) for c in columns]).encode()).hexdigest()[:16]
    value = hashlib.sha256(f"{schema}|{day.rows}|{updated}".encode()).hexdigest()[:16]
    return TableProfile(database=database, table=table, row_count=day.rows, column_count=len(columns),
                        columns=columns, sample_rows=[],
                        fingerprint=Fingerprint(schema_hash=schema, row_count=day.rows, update_column="updated_at",
                                                max_updated=updated, value=value))


def write_history(store, prefix: str, days: list[Day], *, table: str = "orders",
                  every: timedelta = timedelta(days=1), start: datetime = START) -> list[str]:
    """One run folder with a profile.json per day, ``every`` apart from ``start``; their timestamps."""
    stamps = []
    for n, day in enumerate(days):
        ts = run_timestamp(n, every=every, start=start)
        store.write_json(prefix, ts, PROFILE, profile_of(day, table))
        stamps.append(ts)
    return stamps


def weekly(weeks: int, *, weekday_rows: int = 1000, weekend_rows: int = 100, start_rows: int = 10_000) -> list[Day]:
    """A table that grows by ``weekday_rows`` on weekdays and ``weekend_rows`` on weekends."""
    days, rows = [], start_rows
    for n in range(weeks * 7):
        rows += weekend_rows if (START + timedelta(days=n)).weekday() >= 5 else weekday_rows
        days.append(Day(rows=rows))
    return days
