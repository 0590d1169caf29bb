"""Repeated rows and keys: exact duplicates, a unique column that repeats, and a key of an entity and a time."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pytest
from backends import kind_params

from cataloger_dagster.core.issues.detectors import keys
from cataloger_dagster.core.issues.detectors.duplicates import duplicate_rows
from cataloger_dagster.core.issues.detectors.context import Context, one
from cataloger_dagster.core.issues.detectors.keys import (
    _key_parts, composite_key, distinct_rows, duplicate_keys,
)

ORIGINS = ("EWR", "JFK", "LGA")
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def _weather(tables, *, hours: int = 600, exact_copies: int = 0) -> None:
    """Hourly weather at three airports.  time_hour is UTC; year/month/day/hour are local time, so the
    hour the clocks go back (2013-11-03 01:00 EDT, then 01:00 EST) repeats once per airport."""
    rng = random.Random(7)
    start = datetime(2013, 11, 1, 0)          # UTC
    switch = datetime(2013, 11, 3, 6)         # 02:00 EDT = 01:00 EST
    rows = []
    for origin in ORIGINS:
        for h in range(hours):
            utc = start + timedelta(hours=h)
            local = utc - timedelta(hours=4 if utc < switch else 5)
            rows.append((origin, local.year, local.month, local.day, local.hour, utc,
                         rng.randrange(0, 370, 10), round(rng.uniform(20, 70), 1)))
    rows += rows[:exact_copies]
    tables.rows("weather", "origin VARCHAR, year INTEGER, month INTEGER, day INTEGER, hour INTEGER, "
                           "time_hour TIMESTAMP, wind_dir INTEGER, temp DOUBLE", rows)


def test_a_local_hour_that_repeats_when_the_clocks_go_back(tables):
    _weather(tables)
    found = composite_key(tables.context("weather"))
    assert found is not None
    assert found.affectedColumns == ["origin", "year", "month", "day", "hour"]
    assert found.details["extra_rows"] == 3 and found.affectedRows == 6
    assert {e["hour"] for e in found.details["examples"]} == {"1"}
    assert {e["origin"] for e in found.details["examples"]} == set(ORIGINS)
    assert found.id == "weather_duplicate_keys_origin, year, month, day, hour"


def test_exact_copies_are_duplicate_rows_not_a_broken_key(tables):
    _weather(tables, exact_copies=2)
    ctx = tables.context("weather")
    rows = duplicate_rows(ctx)
    assert rows.affectedRows == 2 and rows.details["distinct_rows"] == 1800
    # the clock change still shows; the two copies are not counted in it a second time
    assert composite_key(ctx).details["extra_rows"] == 5


def test_a_clean_composite_key_is_no_issue(tables):
    rows = [(o, utc, round(20 + i * 0.01, 2)) for i, utc in enumerate(
        datetime(2013, 1, 1) + timedelta(hours=h) for h in range(600)) for o in ORIGINS]
    tables.rows("clean", "origin VARCHAR, time_hour TIMESTAMP, temp DOUBLE", rows)
    assert composite_key(tables.context("clean")) is None


def test_columns_that_repeat_often_are_no_key(tables):
    # (station, taken_at) repeats on a fifth of the rows: not "unique but for a few", no key at all
    rows = [(f"S{s}", datetime(2020, 1, 1) + timedelta(days=d + 1 if d % 5 == 0 else d), 1.0 * d)
            for s in range(5) for d in range(300)]
    tables.rows("readings", "station VARCHAR, taken_at TIMESTAMP, value DOUBLE", rows)
    assert composite_key(tables.context("readings")) is None


def test_no_composite_key_search_when_one_column_is_a_key(tables):
    rows = [(i, o, datetime(2013, 1, 1) + timedelta(hours=i // 3)) for i, o in
            enumerate(ORIGINS * 200)]
    rows[5] = (5, rows[4][1], rows[4][2])     # (origin, time) repeats once, but the id is the key
    tables.rows("obs", "obs_id INTEGER, origin VARCHAR, taken_at TIMESTAMP", rows)
    assert composite_key(tables.context("obs")) is None


def test_a_unique_column_that_repeats(tables):
    rows = [(f"N{i:04d}", 1990 + i % 30, "BOEING" if i % 2 else "AIRBUS") for i in range(300)]
    rows += [("N0007", 2001, "EMBRAER"), ("N0007", 2002, "EMBRAER"), ("N0042", 1999, "AIRBUS")]
    tables.rows("planes", "tailnum_code VARCHAR, year INTEGER, manufacturer VARCHAR", rows)
    found = duplicate_keys(tables.context("planes"), *_col(tables, "planes", "tailnum_code"))
    assert found.details["duplicated_values"] == 2 and found.affectedRows == 5
    assert found.details["examples"] == ["N0007", "N0042"]
    assert found.severity == "medium"


def test_the_tables_own_id_repeating_is_high(tables):
    tables.sql("CREATE TABLE counties AS SELECT i AS id FROM range(100) r(i) UNION ALL SELECT 3")
    assert duplicate_keys(tables.context("counties"), *_col(tables, "counties", "id")).severity == "high"


def test_codes_that_repeat_by_nature_are_no_key(tables):
    # most rows share a country code: the column was never unique
    rows = [(["US", "CA", "FR"][i % 3], i) for i in range(300)]
    tables.rows("cities", "country_code VARCHAR, population INTEGER", rows)
    assert duplicate_keys(tables.context("cities"), *_col(tables, "cities", "country_code")) is None


def test_duplicate_rows_ignore_nested_columns(tables):
    tables.sql("CREATE TABLE n AS SELECT i % 50 AS k, [i % 50, 1] AS tags, {'a': i % 50} AS s "
               "FROM range(60) r(i)")
    found = duplicate_rows(tables.context("n"))
    assert found.affectedRows == 10
    assert found.details["compared_columns"] == ["k"]


def test_rows_copied_whole_are_counted_even_beside_a_nearly_unique_id(tables):
    # order_id looks unique (so it is tried as the proof that no row repeats) but three orders
    # were loaded twice: the rows are compared whole, and the key check reads the same repeats
    rows = [(i, f"C{i % 40}", 10.0 + i) for i in range(500)]
    tables.rows("orders", "order_id INTEGER, customer VARCHAR, total DOUBLE", rows + rows[:3])
    ctx = tables.context("orders")
    assert duplicate_rows(ctx).affectedRows == 3
    key = duplicate_keys(ctx, *_col(tables, "orders", "order_id"))
    assert key.details["duplicated_values"] == 3 and key.affectedRows == 6


def test_a_unique_column_is_proof_that_no_row_repeats(tables):
    tables.sql("CREATE TABLE events AS SELECT i AS event_id, i % 3 AS kind FROM range(400) r(i)")
    ctx = tables.context("events")
    assert duplicate_rows(ctx) is None
    # the proof was the id's repeats (none), which its own key check then reuses
    assert ctx.cache[("repeats", "event_id")] == (0, 0)
    assert duplicate_keys(ctx, *_col(tables, "events", "event_id")) is None


def test_repeats_counted_range_by_range_are_those_of_the_whole_column(tables, monkeypatch):
    # ids repeating near both ends and in the middle
    tables.sql("CREATE TABLE t AS SELECT i AS row_id FROM range(1000) r(i) "
               "UNION ALL SELECT * FROM (VALUES (0), (0), (499), (500), (999), (1500)) v(x)")
    cp, dtype = _col(tables, "t", "row_id")
    whole = duplicate_keys(tables.context("t"), cp, dtype)
    assert whole.details["duplicated_values"] == 4 and whole.affectedRows == 9
    monkeypatch.setattr(keys, "SLICE_VALUES", 100)
    profile = tables.profile("t")
    tables.con.raw_sql("INSERT INTO t VALUES (-7), (-7), (1500)")   # beyond the profile's min and max
    ctx = Context(tables.con.table("t"), profile, {}, NOW)
    assert len(keys._slices(ctx, "row_id")) > 2
    sliced = duplicate_keys(ctx, cp, dtype)
    assert sliced.details["duplicated_values"] == 6 and sliced.affectedRows == 13


def test_a_large_integer_key_is_proven_unique_by_one_bit_per_value(tables, monkeypatch):
    """On DuckDB the ids between the profile's min and max each set a bit: all distinct in one
    query; ids that repeat, or a range too wide for the bits, are counted range by range."""
    tables.sql("CREATE TABLE t AS SELECT i * 3 AS row_id, i % 7 AS kind FROM range(1000) r(i)")
    tables.sql("CREATE TABLE r AS SELECT i AS row_id FROM range(1000) r(i) UNION ALL SELECT 4 UNION ALL SELECT 4")
    tables.sql("CREATE TABLE w AS SELECT i * 1000000 AS row_id FROM range(1000) r(i)")
    monkeypatch.setattr(keys, "SLICE_VALUES", 100)
    monkeypatch.setattr(keys, "BITS_MAX_RANGE", 10_000)
    queries = []
    monkeypatch.setattr(keys, "one", lambda table, **aggs: queries.append(sorted(aggs)) or one(table, **aggs))
    ctx = tables.context("t")
    assert keys._repeats(ctx, "row_id") == (0, 0) and queries == [["bits", "values"]]
    assert duplicate_rows(ctx) is None
    queries.clear()
    assert keys._repeats(tables.context("r"), "row_id") == (1, 3)
    assert queries[0] == ["bits", "values"] and len(queries) > 2      # found repeats, then counted them
    queries.clear()
    assert keys._repeats(tables.context("w"), "row_id") == (0, 0)
    assert ["bits", "values"] not in queries and len(queries) > 2     # a range wider than the bits


def _col(tables, table: str, column: str):
    cp = next(c for c in tables.profile(table).columns if c.name == column)
    return cp, tables.con.table(table).schema()[column]


@pytest.mark.parametrize("kind", kind_params())
def test_distinct_rows_count_nulls_alike_on_every_backend(scratch, kind):
    # MySQL counts with COUNT(DISTINCT ...), which skips any row holding a NULL: the count
    # must still be SELECT DISTINCT's, where NULLs are equal to each other and to no value
    from backends import load_tables

    from cataloger_dagster.resources.database.resource import DatabaseResource

    rows = [("a", 1, 1.5, datetime(2013, 1, 1)), ("a", 1, 1.5, datetime(2013, 1, 1)),
            ("a", None, 1.5, datetime(2013, 1, 1)), ("a", None, 1.5, datetime(2013, 1, 1)),
            ("", 0, 0.0, datetime(1970, 1, 1)), (None, None, None, None), (None, None, None, None),
            (None, 0, None, None), ("b", 2, None, datetime(2013, 1, 2))]
    table = pa.table({name: [r[i] for r in rows] for i, name in enumerate(("s", "i", "f", "t"))})
    db = DatabaseResource(url=load_tables(kind, {"t": table}, scratch))
    try:
        t = db.table("t")
        assert distinct_rows(t, ["s", "i", "f", "t"]) == 6
        assert distinct_rows(t, ["s", "i"]) == 6   # ("", 0) and (NULL, 0) are two
        assert distinct_rows(t, ["s"]) == 4
    finally:
        db.close()


def test_a_delay_stored_as_text_is_no_entity_of_a_key(tables):
    # a delay in minutes (text because of its 'NA's) and the scheduled minute repeat together
    # by chance, a few times in 2,000 flights: the minute and a measure are no key
    rng = random.Random(3)
    rows = [(2013, 1, 1 + i // 200, (i // 20) % 24, i % 60,
             "NA" if i % 97 == 0 else str(rng.randrange(-10, 60))) for i in range(2000)]
    tables.rows("flights", "year INTEGER, month INTEGER, day INTEGER, hour INTEGER, minute INTEGER, "
                           "dep_delay VARCHAR", rows)
    ctx = tables.context("flights")
    entities, times = _key_parts(ctx)
    assert times == [["year", "month", "day", "hour", "minute"]] and entities == []
    assert composite_key(ctx) is None
