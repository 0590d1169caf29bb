"""Outliers only when isolated, implausible values (also in numbers and dates stored as text), constant columns."""

from __future__ import annotations

import math
import random
from datetime import datetime, timezone

import pytest

from cataloger_dagster.core.issues.detectors.ranges import (
    OUTLIER_MAX_RATE, constant_column, fence, isolated, out_of_range, outliers,
)

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def test_isolated():
    usual = [40.27, 41.43, 42.58, 39.12, 37.97, 36.82, 35.67, 34.52, 33.37, 32.22, 31.07]
    assert isolated(1048.36, usual, log=False)
    assert not isolated(46.0, usual, log=False)
    assert not isolated(5.0, [1.0, 2.0], log=False)    # too few neighbours to judge


def test_fence_is_logarithmic_for_positive_data():
    lo, hi, log = fence(1e6, 1e8)
    assert log and math.isclose(lo, 1e3) and math.isclose(hi, 1e11)
    assert fence(-10.0, 30.0) == (-70.0, 90.0, False)


def _knots(n: int = 2000) -> list[float]:
    """Hourly wind speeds in mph as a weather feed reports them: whole knots converted, mostly 5 to
    15 mph, calm hours at 0 and gusty ones up to about 42 (no randomness: a gamma's quantiles)."""
    rng = random.Random(17)
    return [round(min(37, int(rng.gammavariate(3, 2.2))) * 1.15078, 5) for _ in range(n)]


def _wind(tables, speeds: list[float], *, text: bool = False) -> None:
    speeds = speeds + [1048.36]
    if text:
        rows = [("NA" if i % 50 == 1 else f"{v:g}",) for i, v in enumerate(speeds)]
        tables.rows("weather", "wind_speed VARCHAR", rows)
    else:
        tables.rows("weather", "wind_speed DOUBLE", [(v,) for v in speeds])


def test_a_wind_speed_of_1048_among_speeds_under_45(tables):
    _wind(tables, _knots())
    found = outliers(tables.context("weather"), *_col(tables, "weather", "wind_speed"))
    assert found is not None
    assert found.affectedRows == 1 and found.details["max_outlier"] == 1048.36
    assert found.details["parsed_from_text"] is False
    assert "1 value of wind_speed lies" in found.description


def test_1048_among_evenly_spread_speeds_under_45(tables):
    # the same entry error where the usual speeds are spread evenly from 1 to 42.6 mph: 25 times
    # the largest usual value, and far apart from every other one
    _wind(tables, [round((1 + i % 37) * 1.15078, 5) for i in range(2000)])
    found = outliers(tables.context("weather"), *_col(tables, "weather", "wind_speed"))
    assert found is not None and found.details["max_outlier"] == 1048.36


def test_an_outlier_in_numbers_stored_as_text(tables):
    _wind(tables, _knots(), text=True)
    found = outliers(tables.context("weather"), *_col(tables, "weather", "wind_speed"))
    assert found is not None
    assert found.affectedRows == 1 and found.details["max_outlier"] == 1048.36
    assert found.details["parsed_from_text"] is True


def test_a_budget_of_218_among_millions(tables):
    rng = random.Random(2)
    budgets = [float(round(10 ** rng.uniform(6, 8.5), -3)) for _ in range(2000)] + [218.0]
    tables.rows("movies", "production_budget DOUBLE", [(b,) for b in budgets])
    found = outliers(tables.context("movies"), *_col(tables, "movies", "production_budget"))
    assert found is not None and found.affectedRows == 1 and found.details["min_outlier"] == 218.0


def _beyond_fence(tables, table: str, column: str) -> int:
    cp, _ = _col(tables, table, column)
    lo, hi, _ = fence(cp.quantiles["p05"], cp.quantiles["p95"])
    t = tables.con.table(table)
    return int(t.filter((t[column] > hi) | (t[column] < lo)).count().execute())


@pytest.mark.slow
def test_a_thinning_tail_of_delays_is_no_outlier(tables):
    # departure delays: early by up to 10 minutes, usually a few minutes late, a tail of long
    # delays that thins out minute by minute (the exponential's quantiles, no randomness)
    n = 20_000
    delays = [-10 + int(-15 * math.log(1 - (i + 0.5) / n)) for i in range(n)]
    tables.rows("flights", "dep_delay INTEGER", [(d,) for d in delays])
    beyond = _beyond_fence(tables, "flights", "dep_delay")
    # the precondition that makes this a test of isolation: some delays lie past the fence, but few
    assert 0 < beyond <= OUTLIER_MAX_RATE * n, beyond
    assert outliers(tables.context("flights"), *_col(tables, "flights", "dep_delay")) is None


def test_a_thinning_tail_of_storm_winds_is_no_outlier(tables):
    # storms: most winds 25-60 knots, a tail of hurricanes up to 160 in 5-knot steps
    winds = [25 + 5 * (i % 8) for i in range(3000)] + [65 + 5 * (i % 20) for i in range(240)] + \
            [100 + 5 * k for k in range(13) for _ in range(max(1, 6 - k // 2))]
    tables.rows("storms", "wind INTEGER", [(w,) for w in winds])
    assert outliers(tables.context("storms"), *_col(tables, "storms", "wind")) is None


def test_coordinates_are_never_outliers(tables):
    # contiguous US airports, and a few in Alaska, Hawaii and Guam far from the rest
    lats = [25 + (i % 240) / 10 for i in range(3000)] + [71.29, 64.8, 21.3, 13.48]
    lons = [-125 + (i % 580) / 10 for i in range(3000)] + [-156.8, -147.9, -157.9, 144.8]
    tables.rows("airports", "lat DOUBLE, longitude DOUBLE", list(zip(lats, lons)))
    ctx = tables.context("airports")
    assert outliers(ctx, *_col(tables, "airports", "lat")) is None
    assert outliers(ctx, *_col(tables, "airports", "longitude")) is None


def test_identifiers_and_hours_are_never_outliers(tables):
    tables.sql("CREATE TABLE f AS SELECT i AS flight_id, i % 24 AS hour FROM range(2000) r(i) "
               "UNION ALL SELECT 9999999, 23")
    ctx = tables.context("f")
    assert outliers(ctx, *_col(tables, "f", "flight_id")) is None
    assert outliers(ctx, *_col(tables, "f", "hour")) is None


def _release_dates(tables) -> list[str]:
    usual = [f"{m} {d:02d} {y}" for y in range(1960, 2011) for m, d in (("Jun", 12), ("Dec", 25))]
    # two-digit years read a century late: 1946 became 2046, 1938 became 2038
    late = ["Jan 17 2046", "Mar 03 2038", "Oct 10 2063"]
    rows = usual + late + ["Unknown"] * 4
    tables.rows("movies", "release_date VARCHAR, title VARCHAR", [(r, f"t{i}") for i, r in enumerate(rows)])
    return late


def test_future_dates_after_parsing_text(tables):
    late = _release_dates(tables)
    found = out_of_range(tables.context("movies", now=NOW), *_col(tables, "movies", "release_date"))
    assert found is not None and found.details["counts"] == {"in the future": len(late)}
    assert "(read as dates)" in found.description
    # years later, those dates are no longer in the future
    later = tables.context("movies", now=datetime(2070, 1, 1, tzinfo=timezone.utc))
    assert out_of_range(later, *_col(tables, "movies", "release_date")) is None


def test_negative_amounts_in_numbers_stored_as_text(tables):
    rows = [("-5" if i % 50 == 0 else f"{10 + i % 30}.99", f"{i % 30 - 15}") for i in range(500)]
    tables.rows("orders", "price VARCHAR, temp_change VARCHAR", rows)
    ctx = tables.context("orders")
    price = out_of_range(ctx, *_col(tables, "orders", "price"))
    assert price.details["counts"] == {"negative": 10} and "(read as numbers)" in price.description
    assert out_of_range(ctx, *_col(tables, "orders", "temp_change")) is None


def test_typed_dates_and_numbers(tables):
    tables.sql("""CREATE TABLE r AS SELECT
        CASE WHEN i < 3 THEN DATE '2031-01-01' WHEN i < 5 THEN DATE '1850-01-01' ELSE DATE '2020-01-01' END AS released,
        DATE '2026-01-01' + i::INTEGER AS expected_delivery,
        CASE WHEN i % 25 = 0 THEN -1 ELSE 2 END AS quantity,
        i - 50 AS temperature
        FROM range(100) r(i)""")
    ctx = tables.context("r", now=NOW)
    assert out_of_range(ctx, *_col(tables, "r", "released")).details["counts"] == {
        "in the future": 3, "before 1900": 2}
    assert out_of_range(ctx, *_col(tables, "r", "expected_delivery")) is None
    assert out_of_range(ctx, *_col(tables, "r", "quantity")).affectedRows == 4
    assert out_of_range(ctx, *_col(tables, "r", "temperature")) is None


def test_constant_column(tables):
    tables.sql("""CREATE TABLE k AS SELECT i AS id, 2013 AS year,
        CASE WHEN i < 30 THEN 'x' END AS sparse, i % 2 AS parity FROM range(40) r(i)""")
    ctx = tables.context("k")
    year = constant_column(ctx, *_col(tables, "k", "year"))
    assert year.affectedRows == 40 and year.details["value"] == "2013"
    for column in ("sparse", "parity", "id"):
        assert constant_column(ctx, *_col(tables, "k", column)) is None, column


def _col(tables, table: str, column: str):
    cp = next(c for c in tables.profile(table).columns if c.name == column)
    return cp, tables.con.table(table).schema()[column]


def test_the_end_of_a_tail_that_thins_out_is_not_isolated():
    # the lowest of a few hundred ratios, a factor 1.4 below the next, whose ten neighbours spread
    # over a factor 1.15: wider than four of their steps, but within the tail's own scale
    tail = [69.9, 71.1, 71.2, 74.3, 75.0, 75.3, 75.5, 77.4, 78.0, 78.3, 80.2]
    assert not isolated(49.1, tail, log=True)
    # the same neighbours with a value ten times below them: cut off
    assert isolated(6.9, tail, log=True)


def test_a_ratio_at_the_end_of_its_low_tail_is_no_outlier(tables):
    # a ratio of two measures: lognormal around 96, a thin low tail, its last value just past the fence
    rng = random.Random(4)
    values = [round(96 * math.exp(rng.gauss(0, 0.06)), 3) for _ in range(300)]
    values += [80.2, 78.3, 78.0, 77.4, 75.5, 75.3, 75.0, 74.3, 71.2, 71.1, 69.9, 49.1]
    tables.rows("districts", "spend_ratio DOUBLE", [(v,) for v in values])
    cp, dtype = _col(tables, "districts", "spend_ratio")
    lo, _, _ = fence(cp.quantiles["p05"], cp.quantiles["p95"], cp.quantiles["p50"])
    assert 49.1 < lo     # the precondition: past the fence, so only the isolation test keeps it
    assert outliers(tables.context("districts"), cp, dtype) is None
