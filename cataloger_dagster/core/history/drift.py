"""How far one column's distribution moved: PSI on the stored histograms or top values, and jumps
of its null rate and distinct ratio out of their (seasonal) band.

The previous run's histogram is re-binned onto this run's edges (mass spread evenly within a
bin), with one bin below and one above for what fell outside: the edges of two runs differ.  A column
whose top values hold nearly all of its values (one value, or one and a few rare ones) is compared
on them instead, since spreading a bin's mass evenly would move a value that fills its bin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional, Sequence

from cataloger_dagster.core.history.digest import ColumnPoint
from cataloger_dagster.core.history.seasonality import expected_band
from cataloger_dagster.core.models import NUMERIC_KINDS, TEMPORAL_KINDS, Severity
from cataloger_dagster.core.values import finite_float

# PSI above which a column counts as drifted, per kind of column: dates and timestamps move by
# themselves as time passes (each load adds the newest days), so they need more
PSI_THRESHOLDS = {"numeric": 0.25, "temporal": 0.5, "categorical": 0.25}
MIN_VALUES = 50  # non-null values each run needs before its distribution is compared
NULL_FLOOR = 0.05  # the null rate may move 5 points without a finding
DISTINCT_FLOOR = 0.05  # the distinct ratio (distinct / non-null) may move 5 points
KEY_RATIO = 0.95  # distinct / non-null from which a column is taken for an identifier
# share of the non-null values the top values must hold, in both runs, for a number or date column
# to be compared on them rather than on its histogram: they are then its distribution, exactly
TOP_COVERAGE = 0.99
EPSILON = 1e-4  # share given to an empty bin (PSI takes logarithms)


@dataclass
class Drift:
    severity: Severity
    reasons: list[str]
    short: bool
    evidence: dict[str, Any] = field(default_factory=dict)


def kind_of(column: ColumnPoint) -> str:
    if column.kind in NUMERIC_KINDS:
        return "numeric"
    return "temporal" if column.kind in TEMPORAL_KINDS else "categorical"


def psi(expected: Sequence[float], actual: Sequence[float]) -> float:
    """Population stability index of two distributions over the same bins (counts or shares)."""
    te, ta = sum(expected), sum(actual)
    if te <= 0 or ta <= 0:
        return 0.0
    total = 0.0
    for e, a in zip(expected, actual):
        pe, pa = max(e / te, EPSILON), max(a / ta, EPSILON)
        total += (pa - pe) * math.log(pa / pe)
    return total


def _number(edge: Any) -> Optional[float]:
    number = finite_float(edge)
    if number is not None or not isinstance(edge, str):
        return number
    try:
        return datetime.fromisoformat(edge.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _cdf(edges: list[float], counts: list[int], x: float, *, inclusive: bool = False) -> float:
    """Mass of the histogram below ``x`` (at or below it when ``inclusive``), spread evenly
    within each bin.  A bin of no width (a column of one value: its edges are [v, v]) is all
    its mass at one point, which lies below ``x`` only when it is less than ``x`` (or equal,
    when ``inclusive``): counting it below its own edge would move every row out of the bin
    that holds it."""
    below = 0.0
    for lo, hi, n in zip(edges, edges[1:], counts):
        if hi <= lo:
            below += n if (lo <= x if inclusive else lo < x) else 0
        elif x >= hi:
            below += n
        elif x > lo:
            below += n * (x - lo) / (hi - lo)
    return below


def rebin(edges: list[float], counts: list[int], onto: list[float]) -> list[float]:
    """The histogram (edges, counts) over the bins of ``onto``, plus one bin below and one above.

    The bins of ``onto`` are read as the profile counts values into them: each holds its
    lower edge, and the last its upper edge too."""
    total = float(sum(counts))
    last = len(onto) - 1
    cuts = [_cdf(edges, counts, x, inclusive=i == last) for i, x in enumerate(onto)]
    return [cuts[0], *(b - a for a, b in zip(cuts, cuts[1:])), total - cuts[-1]]


def histogram_psi(before: ColumnPoint, now: ColumnPoint) -> Optional[float]:
    if not (before.edges and before.counts and now.edges and now.counts):
        return None
    old = [e for e in map(_number, before.edges) if e is not None]
    new = [e for e in map(_number, now.edges) if e is not None]
    if (
        len(old) != len(before.edges)
        or len(new) != len(now.edges)  # an edge that is no number
        or len(old) != len(before.counts) + 1
        or len(new) != len(now.counts) + 1
    ):
        return None
    return psi(rebin(old, before.counts, new), [0.0, *map(float, now.counts), 0.0])


def top_psi(before: ColumnPoint, now: ColumnPoint) -> Optional[float]:
    """PSI over the top values of both runs, the rest of the non-null values as one more bin."""
    if not before.top or not now.top:
        return None
    a, b = dict(before.top), dict(now.top)
    values = sorted(set(a) | set(b))
    rest = (max(before.count - sum(a.values()), 0), max(now.count - sum(b.values()), 0))
    # a value in one run's top list and not the other's is counted in the other's rest
    return psi([a.get(v, 0) for v in values] + [rest[0]], [b.get(v, 0) for v in values] + [rest[1]])


def _top_share(column: ColumnPoint) -> float:
    return sum(n for _, n in column.top) / column.count if column.top and column.count else 0.0


def distribution_psi(before: ColumnPoint, now: ColumnPoint) -> tuple[Optional[float], str]:
    """The PSI of the column's two distributions, and what it was computed on.

    Categories compare on their top values.  Numbers and dates compare on their histograms,
    unless the top values hold nearly all of the values in both runs (a column of one value, or
    of one value and a few rare ones): a histogram spreads each bin's mass evenly across the bin,
    which moves a value that fills its bin wherever the bins of the two runs differ, and the
    top values say where each value is."""
    if kind_of(now) == "categorical" or min(_top_share(before), _top_share(now)) >= TOP_COVERAGE:
        return top_psi(before, now), "top values"
    return histogram_psi(before, now), "histogram"


def _ratio(column: ColumnPoint) -> Optional[float]:
    return column.distinct / column.count if column.distinct is not None and column.count else None


def column_drift(
    name: str, history: list[tuple[datetime, ColumnPoint]], current: tuple[datetime, ColumnPoint]
) -> Optional[Drift]:
    """The drift of column ``name`` at ``current`` given its earlier values (oldest first), or None."""
    at, now = current
    before = history[-1][1]
    reasons, evidence, short = [], {}, False
    severity: Severity = "medium"
    kind = kind_of(now)
    # an identifier's values spread over a range that grows with the table: its shape says nothing
    keys = all((_ratio(c) or 0.0) >= KEY_RATIO for c in (before, now))
    if before.count >= MIN_VALUES and now.count >= MIN_VALUES and not keys:
        index, on = distribution_psi(before, now)
        limit = PSI_THRESHOLDS[kind]
        if index is not None and index > limit:
            reasons.append(
                f"its distribution moved from the previous run's (PSI {index:.2f}, over {limit} for a {kind} column)"
            )
            evidence["psi"] = {"value": round(index, 4), "threshold": limit, "kind": kind, "on": on}
            severity = "high" if index > 4 * limit else severity
    for label, value, series, floor in (
        ("null rate", now.null_fraction, [(t, c.null_fraction) for t, c in history], NULL_FLOOR),
        ("distinct ratio", _ratio(now), [(t, r) for t, c in history if (r := _ratio(c)) is not None], DISTINCT_FLOOR),
    ):
        band = expected_band(series, at, floor=floor) if value is not None else None
        if value is None or band is None or band.holds(value):
            continue
        reasons.append(
            f"its {label} is {value:.1%}, outside {max(band.low, 0):.1%} to {min(band.high, 1):.1%} "
            f"drawn from {band.describe()}"
        )
        evidence[label.replace(" ", "_")] = {"value": round(value, 6), "band": band.evidence()}
        short = short or band.short
        if label == "null rate" and value - band.expected >= 0.5:
            severity = "high"
    if not reasons:
        return None
    return Drift(severity=severity, reasons=reasons, short=short, evidence=evidence)
