"""The expected band of a number given its history: by day of week when there is enough of it.

With at least ``SEASONAL_DAYS`` days of daily history, a value is compared with the values of the
same day of week only (the median and the median absolute deviation of those), so that a table
loaded on weekdays only, or a quieter Sunday, is not an anomaly every week.  Before that, the band
is robust over every value (median +/- k * MAD), and says that the history is short.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from statistics import median
from typing import Sequence

SEASONAL_DAYS = 14  # two weeks of daily runs before the day of week is used
MIN_POINTS = 5  # fewer values than this give no band at all
MIN_SAME_DAY = 2  # values of the same day of week the seasonal band needs
K = 4.0  # band half-width in (scaled) MADs: wide, so that a finding is rare and real
MAD_SCALE = 1.4826  # MAD -> standard deviation of a normal distribution
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class Band:
    expected: float  # the median
    low: float
    high: float
    method: str  # "day_of_week" or "robust"
    basis: int  # values the band was drawn from
    history_days: int  # distinct days in the history
    short: bool  # less than SEASONAL_DAYS days of daily history
    weekday: str = ""  # the day of week compared with (day_of_week only)

    def holds(self, value: float) -> bool:
        return self.low <= value <= self.high

    def evidence(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items() if v != ""}

    def describe(self) -> str:
        if self.method == "day_of_week":
            return f"the {self.basis} earlier {self.weekday}s (history of {self.history_days} days)"
        note = (
            (
                f"; the history is short ({self.history_days} of the {SEASONAL_DAYS} days the day of week "
                "needs), so the band ignores it"
            )
            if self.short
            else ""
        )
        return f"{self.basis} earlier runs{note}"


def _mad(values: Sequence[float], centre: float) -> float:
    return median(abs(v - centre) for v in values)


def expected_band(
    history: Sequence[tuple[datetime, float]], at: datetime, *, k: float = K, floor: float = 0.0
) -> Band | None:
    """The band ``at`` is expected in, from ``history`` ((moment, value), any order); None when the
    history is too short to tell.  ``floor`` is the least half-width: a history that never moved
    still allows a change of that size."""
    if len(history) < MIN_POINTS:
        return None
    days = {moment.date() for moment, _ in history}
    span = (max(days) - min(days)).days + 1
    daily = len(days) >= SEASONAL_DAYS and span >= SEASONAL_DAYS
    same_day = [v for moment, v in history if moment.weekday() == at.weekday()]
    if daily and len(same_day) >= MIN_SAME_DAY:
        values, method, weekday = same_day, "day_of_week", WEEKDAYS[at.weekday()]
    else:
        values, method, weekday = [v for _, v in history], "robust", ""
    centre = median(values)
    half = max(k * MAD_SCALE * _mad(values, centre), floor)
    return Band(
        expected=centre,
        low=centre - half,
        high=centre + half,
        method=method,
        basis=len(values),
        history_days=len(days),
        short=not daily,
        weekday=weekday,
    )
