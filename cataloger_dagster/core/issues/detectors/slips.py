"""Whether a value at a unit factor from its peers is a slip rather than a true extreme.

A factor alone proves little: the last value of a skewed measure's tail is often about ten
times its median by chance.  A candidate the magnitudes detector found at a factor from its
peers is kept as a scale error only when two more things hold.

- It is cut off (`cut_off`): the stretch of the log scale between it and the bulk is wide
  against the bulk's own tail on that side.  A tail thins out value after value (the extreme
  values of n draws are spaced about as the tail's scale); a slip jumps.  The tail's scale is
  read from the bulk's last TAIL_VALUES values (Hill's estimator: their mean distance, in bins
  of the log scale, to the next value in): the gap must be TAIL_GAP times that.  On a tail
  that falls off exponentially on the log scale (a power law), a gap that wide comes by chance
  about once in e**TAIL_GAP (0.7%).
- Its row does not move with it (`moves_together`): a real event moves a row's measures
  together (a month when the production of every meat fell, the largest district with the most
  pupils and the most passes), where a slip moves one cell, or all of the row's cells by the
  same factor.  Another measure of the row as extreme on the same side (TOGETHER_Z robust
  standard deviations of its column's logarithm) at another ratio makes the value an event.

Inputs (what the magnitudes detector already holds): a view's histogram of orders of magnitude
{bin: rows} (RESOLUTION bins a decade, bin = floor(log10(v) * RESOLUTION)) with the weight of
one of its rows (1, or 1/fraction for a sample's), its `Shape` (the bulk's first and last bins
`low`/`high`, the median and MAD in bins), and the rows read apart with every measure's value and
each measure's whole-column `Shape`.  No query of its own.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Protocol

TAIL_VALUES = 10  # the bulk's last values read for its tail's scale
MIN_TAIL_VALUES = 3
TAIL_GAP = 5.0  # a gap this many times the tail's scale cuts a value off
MIN_SCALE = 0.5  # bins: below the histogram's resolution, a tail's scale is not read
TOGETHER_Z = 3.0  # another measure this far out on the same side moves with the value
SAME_FACTOR = 0.1  # decades: another measure off by the same factor slipped with it


class Bulk(Protocol):
    """What the corroboration reads of a view's shape (magnitudes.Shape), in bins."""

    rows: int
    median: float
    mad: float
    low: int
    high: int


def tail_ratio(hist: Mapping[int, float], b: int, s: Bulk, unit: float = 1.0) -> float:
    """The gap between the candidate bin `b` and the bulk, in units of the scale of the bulk's
    tail on b's side (the larger, the more cut off).  `unit` is what one value counts for in the
    histogram (a sampled row stands for 1/fraction of the table's)."""
    high = b > s.high
    edge = s.high if high else s.low
    beyond = [x for x in hist if (edge < x <= b if high else b <= x < edge)]
    gap = abs(edge - (min(beyond) if high else max(beyond))) if beyond else abs(edge - b)
    # the bins of the bulk's k values nearest the edge, and of the next one in (Hill's reference)
    k = max(MIN_TAIL_VALUES, min(TAIL_VALUES, s.rows // 4))
    ranks: list[int] = []
    for x in sorted((x for x in hist if s.low <= x <= s.high), reverse=high):
        ranks += [x] * min(max(round(hist[x] / unit), 1), k + 1 - len(ranks))
        if len(ranks) > k:
            break
    if len(ranks) < 2:
        return math.inf
    scale = sum(abs(x - ranks[-1]) for x in ranks[:-1]) / (len(ranks) - 1)
    return gap / max(scale, MIN_SCALE)


def cut_off(hist: Mapping[int, float], b: int, s: Bulk, unit: float = 1.0) -> bool:
    """Whether the candidate bin `b` is cut off from its bulk rather than the end of its tail."""
    return tail_ratio(hist, b, s, unit) >= TAIL_GAP


def _z(value: float, s: Bulk, resolution: int) -> float:
    return (math.log10(value) * resolution - s.median) / max(1.4826 * s.mad, 1.0)


def moves_together(
    row: Mapping[str, Any], column: str, factor: float, shapes: Mapping[str, Bulk], resolution: int
) -> bool:
    """Whether another measure of the candidate's row is as extreme on the same side (at another
    ratio than `factor`): the row is an event, not a slip.  `row` holds the candidate's value
    under `column` and the other measures' values; `shapes` the whole columns' shapes."""
    own = shapes.get(column)
    value = row.get(column)
    if own is None or value is None or not value > 0:
        return False
    up = math.log10(value) * resolution > own.median
    for other, v in row.items():
        s = shapes.get(other)
        if other == column or s is None or v is None or not (isinstance(v, (int, float)) and v > 0):
            continue
        z = _z(float(v), s, resolution)
        if z >= TOGETHER_Z if up else z <= -TOGETHER_Z:
            off = abs(math.log10(float(v)) * resolution - s.median) / resolution
            if abs(off - math.log10(factor)) > SAME_FACTOR:
                return True
    return False


def events(
    rows: list[dict[str, Any]],
    column: str,
    ranges: list[tuple[float, float, float]],
    shapes: Mapping[str, Bulk],
    resolution: int,
) -> set[int]:
    """The indexes of `ranges` ((lo, hi, factor) of a candidate cell) whose rows, for the most
    part, move together with the candidate: real events rather than slips."""
    together: dict[int, list[bool]] = {}
    for row in rows:
        v = row.get(column)
        if v is None:
            continue
        for i, (lo, hi, factor) in enumerate(ranges):
            if lo <= v <= hi:
                together.setdefault(i, []).append(moves_together(row, column, factor, shapes, resolution))
    return {i for i, flags in together.items() if sum(flags) * 2 > len(flags)}
