"""The bands guardrails allow, drawn from the table's history: how far a measure moved between
earlier runs sets how far it may move now.  With no history yet a band is wide, and says so."""

from __future__ import annotations

from typing import Optional, Sequence

FIRST_RUN_ROWS = 0.5  # a table's rows may halve or grow by half before the first history exists
MIN_ROWS_MOVE = 0.1  # never a row-count band tighter than 10% either way
SHARE_FLOOR = 0.01  # a share's band is never tighter than one point either way
GROWTH = 0.1  # a guarded finding may grow by 10% (its rows) before its guardrail fails
SPAN_MARGIN = 0.1  # a range widens by a tenth of its span either way


def rows_band(now: int, earlier: Sequence[int]) -> tuple[float, float, str]:
    """(low, high, where from) of a table's rows."""
    counts = [n for n in earlier if n > 0]
    if not counts:
        move, said = FIRST_RUN_ROWS, "no history yet: a wide band of half the rows either way"
    else:
        steps = [abs(b - a) / a for a, b in zip(counts, [*counts[1:], now]) if a]
        move = max(MIN_ROWS_MOVE, 2 * max(steps, default=0.0))
        said = f"twice the largest change between the {len(counts) + 1} runs so far"
    return max(0.0, now * (1 - move)), now * (1 + move), said


def share_band(now: float, earlier: Sequence[float]) -> tuple[float, float]:
    """(low, high) of a share (of NULLs) over the runs: their range, widened by itself."""
    seen = [*earlier, now]
    lo, hi = min(seen), max(seen)
    margin = max(SHARE_FLOOR, hi - lo)
    return max(0.0, lo - margin), min(1.0, hi + margin)


def grown(rows: Optional[int]) -> float:
    """The breaking rows a guarded finding may reach before its guardrail fails."""
    return float(int((rows or 0) * (1 + GROWTH)))


def grown_share(share: Optional[float]) -> float:
    """The share a guarded finding may reach: a tenth more, and never less than one point more."""
    now = share or 0.0
    return min(1.0, max(now * (1 + GROWTH), now + SHARE_FLOOR))


def widened(low: float, high: float, earlier: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """A range over the runs (their lowest minimum, highest maximum), widened by a tenth of its span."""
    lows = [low, *(lo for lo, _ in earlier)]
    highs = [high, *(hi for _, hi in earlier)]
    lo, hi = min(lows), max(highs)
    margin = (hi - lo) * SPAN_MARGIN
    return lo - margin, hi + margin


def relearned(
    measure: str, measured: float, low: Optional[float], high: Optional[float]
) -> tuple[Optional[float], Optional[float]]:
    """The band of a guardrail whose failure at `measured` an investigation refuted: the level it
    failed at becomes its level (plus a tenth, as a finding's), and a two-sided band widens just
    enough to hold it."""
    if measure == "rows" and low is None:
        return None, grown(int(measured))
    if measure == "share" and low is None:
        return None, grown_share(measured)
    margin = max(abs(measured) * MIN_ROWS_MOVE, SHARE_FLOOR if measure == "share" else 0.0)
    new_low = None if low is None else min(low, measured - margin)
    new_high = None if high is None else max(high, measured + margin)
    if measure == "share":
        new_low = None if new_low is None else max(0.0, new_low)
        new_high = None if new_high is None else min(1.0, new_high)
    return new_low, new_high
