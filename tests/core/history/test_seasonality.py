"""core/history/seasonality.py: the expected band, by day of week once there are two weeks."""

from datetime import datetime, timedelta, timezone

import pytest

from cataloger_dagster.core.history.seasonality import SEASONAL_DAYS, expected_band

MONDAY = datetime(2026, 9, 7, 6, tzinfo=timezone.utc)


def series(days: int, weekday: float, weekend: float) -> list[tuple[datetime, float]]:
    return [(MONDAY + timedelta(days=n), weekend if (MONDAY + timedelta(days=n)).weekday() >= 5 else weekday)
            for n in range(days)]


def test_two_weeks_of_daily_values_give_a_band_per_day_of_week():
    history = series(SEASONAL_DAYS, 1000.0, 100.0)
    sunday = expected_band(history, MONDAY + timedelta(days=SEASONAL_DAYS + 6))
    assert sunday.method == "day_of_week" and sunday.weekday == "Sunday" and sunday.basis == 2
    assert sunday.holds(100.0) and not sunday.holds(1000.0) and not sunday.short
    monday = expected_band(history, MONDAY + timedelta(days=SEASONAL_DAYS))
    assert monday.holds(1000.0) and not monday.holds(100.0) and monday.expected == 1000.0


def test_a_shorter_history_gives_a_robust_band_that_says_so():
    band = expected_band(series(SEASONAL_DAYS - 1, 1000.0, 100.0), MONDAY + timedelta(days=20))
    assert band.method == "robust" and band.short and band.history_days == SEASONAL_DAYS - 1
    assert "history is short" in band.describe()
    # one outlier does not move a robust band
    noisy = [(t, v) for t, v in series(10, 1000.0, 1000.0)] + [(MONDAY + timedelta(days=10), 50_000.0)]
    assert expected_band(noisy, MONDAY + timedelta(days=11)).expected == 1000.0


def test_the_floor_widens_a_band_that_never_moved_and_too_few_values_give_none():
    flat = series(6, 10.0, 10.0)
    assert expected_band(flat, MONDAY).low == expected_band(flat, MONDAY).high == 10.0
    floored = expected_band(flat, MONDAY, floor=2.0)
    assert (floored.low, floored.high) == (8.0, 12.0)
    assert expected_band(series(4, 1.0, 1.0), MONDAY) is None


@pytest.mark.parametrize("spread", [10.0, 100.0])
def test_the_band_scales_with_the_spread(spread):
    history = [(MONDAY + timedelta(hours=n), 1000.0 + (spread if n % 2 else -spread)) for n in range(8)]
    band = expected_band(history, MONDAY)
    assert band.holds(1000.0 + 3 * spread) and not band.holds(1000.0 + 6 * spread)
