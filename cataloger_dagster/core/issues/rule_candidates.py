"""Which rules between a table's columns are worth testing, chosen from the profile alone.

A rule between columns (a total and its parts, a product, a fixed multiple, an order) is
tested against the rows only if the profile allows it: the mean of a sum is the sum of the
means, a product's mean lies within the spread its factors' variation allows, a multiple's
mean, spread and median all scale by one factor.  The columns' names weigh in only through
general words: an order is tested between a pair named alike but for a word such as
min/max or start/end (every pair of dates is tested, since dates in one row usually follow
one another), and only a column named as a total is tried as the sum of three parts.

The candidates are bounded (MAX_CANDIDATES, the likeliest first) so that all of them are
counted in one query of a few hundred aggregates, whatever the table's width.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace
from decimal import Decimal
from itertools import combinations
from typing import Any, Iterable, Optional

import ibis.expr.datatypes as dt
import numpy as np

from cataloger_dagster.core import text
from cataloger_dagster.core.models import ColumnProfile, TableProfile
from cataloger_dagster.core.values import finite_float

MAX_CANDIDATES = 150  # rules counted in the one query: three aggregates each
PER_RESULT = 20  # candidates of one kind kept for one result column, the likeliest
MIN_DISTINCT = 2  # an operand varies (a flat fee of 0 or 4.99 may be a part: its zeros tell nothing)
MIN_ORDER_DISTINCT = 3  # two columns of fewer values (0/1 flags) are ordered by coincidence
MIN_RESULT_DISTINCT = 5  # the result of a formula varies more than a flag
MEAN_SLACK = 0.02  # the mean of a sum is the sum of the means, within this share
SPREAD_SLACK = 0.05  # a spread may be off by this share (exceptions, NULLs)
IQR_SLACK = 0.25  # a sum's interquartile range is at most about its parts' added
QUANTILE_SLACK = 0.1  # a quantile bound by this share (approximate quantiles, exceptions)
FACTOR_SLACK = 0.005  # an estimated factor is this near a known constant to be taken for it
MAX_DECIMALS = 6  # values with more decimals are not rounded: no rounding step
MAX_DATE_COLUMNS = 12  # every pair of these is tested for an order
MAX_TOTAL_PARTS = 60  # columns tried as the third part of a named total
PRODUCT_FACTORS = (1.0, 0.01, 0.001)  # c = a * b, and a share in percent or per mille of a whole

# a pair named alike but for these words is tested for an order (the first is the smaller)
ORDER_WORDS = (
    ("min", "max"),
    ("minimum", "maximum"),
    ("low", "high"),
    ("lo", "hi"),
    ("lower", "upper"),
    ("start", "end"),
    ("begin", "end"),
    ("from", "to"),
    ("first", "last"),
    ("birth", "death"),
    ("born", "died"),
    ("earliest", "latest"),
    ("start", "finish"),
    ("min", "avg"),
    ("avg", "max"),
    ("min", "mean"),
    ("mean", "max"),
)
_ORDER_VOCABULARY = {w for pair in ORDER_WORDS for w in pair}
TOTAL_WORDS = {"total", "sum", "overall", "all", "gross", "grand"}
# a difference (c = a - b) is shown as one when a column's name says so
DIFFERENCE_WORDS = {
    "diff",
    "difference",
    "delta",
    "change",
    "net",
    "margin",
    "gap",
    "balance",
    "profit",
    "delay",
    "surplus",
    "deficit",
    "variance",
    "remaining",
    "left",
}
# a quotient (c = a / b) is shown as one when the derived column's name says so
RATIO_WORDS = {
    "pct",
    "percent",
    "percentage",
    "ratio",
    "rate",
    "share",
    "per",
    "avg",
    "average",
    "mean",
    "density",
    "speed",
    "proportion",
    "fraction",
    "yield",
    "efficiency",
}
# factors of a fixed multiple: round numbers and the usual unit conversions
MULTIPLES = sorted(
    {m * 10.0**e for m in (1, 2, 2.5, 5) for e in range(0, 7)} - {1.0}
    | {
        2.54,
        3.28084,
        2.20462,
        1.609344,
        1.852,
        28.3495,
        3.78541,
        4.44822,
        39.3701,
        1.60934,
        12.0,
        24.0,
        7.0,
        60.0,
        3600.0,
        86400.0,
        1440.0,
        365.0,
        1024.0,
        1.8,
        3.6,
    }
)


@dataclass(frozen=True)
class Candidate:
    """A rule to test.  sum: result = sum(operands); product: result = factor * a * b;
    multiple: result = factor * a; order: result <= operands[0] (or the reverse: the rows say)."""

    kind: str
    result: str
    operands: tuple[str, ...]
    factor: float = 1.0
    # how likely, smaller first: how closely the profile fits the rule (0 exactly, 1 at the
    # edge of what it allows), plus how far apart the columns stand in the table, as a share of
    # its width (a derived column is usually written beside what it is derived from)
    closeness: float = 0.0
    hinted: bool = False  # the names suggest it

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.result, *self.operands)


@dataclass
class _Numbers:
    """The profile's figures of the numeric columns a rule may hold between."""

    names: list[str] = field(default_factory=list)
    mean: Any = None
    std: Any = None
    low: Any = None
    high: Any = None
    p05: Any = None
    p25: Any = None
    p50: Any = None
    p75: Any = None
    p95: Any = None


def _eligible(cp: ColumnProfile, dtype: dt.DataType) -> bool:
    return (
        dtype.is_numeric()
        and not dtype.is_boolean()
        and cp.count >= 20
        and (cp.distinct or 0) >= MIN_DISTINCT
        and finite_float(cp.mean) is not None
        and (finite_float(cp.std) or 0.0) > 0
        and finite_float(cp.min) is not None
        and finite_float(cp.max) is not None
        and not _named_as(cp.name, IDENTIFIER_WORDS)
    )


def _named_as(name: str, vocabulary: set[str]) -> bool:
    words = text.words(name)
    return bool(words) and words[-1] in vocabulary


def _named_any(name: str, vocabulary: set[str]) -> bool:
    return bool(set(text.words(name)) & vocabulary)


# identifiers and parts of a date are numbers, not quantities: no arithmetic holds between them
IDENTIFIER_WORDS = {"id", "key", "uuid", "code", "sku", "no", "num", "number", "zip", "fips"}
CALENDAR_WORDS = {"year", "month", "day", "hour", "minute", "second", "week", "quarter"}


def _fingerprint(cp: ColumnProfile) -> tuple:
    return (
        cp.count,
        cp.distinct,
        finite_float(cp.min),
        finite_float(cp.max),
        finite_float(cp.mean),
        finite_float(cp.std),
    )


def _numbers(columns: list[ColumnProfile]) -> _Numbers:
    q = [cp.quantiles or {} for cp in columns]

    def arr(values: Iterable[Any]) -> Any:
        return np.array([v if v is not None else np.nan for v in (finite_float(x) for x in values)], dtype=float)

    return _Numbers(
        names=[cp.name for cp in columns],
        mean=arr(cp.mean for cp in columns),
        std=arr(cp.std for cp in columns),
        low=arr(cp.min for cp in columns),
        high=arr(cp.max for cp in columns),
        **{p: arr(x.get(p) for x in q) for p in ("p05", "p25", "p50", "p75", "p95")},
    )


def candidates(profile: TableProfile, schema: dict[str, dt.DataType]) -> list[Candidate]:
    """The rules worth testing on this table, the likeliest first, at most MAX_CANDIDATES."""
    seen: set[tuple] = set()
    numeric: list[ColumnProfile] = []
    for cp in profile.columns:
        if cp.name in schema and _eligible(cp, schema[cp.name]) and _fingerprint(cp) not in seen:
            seen.add(_fingerprint(cp))  # a column identical to another one: the same rules again
            numeric.append(cp)
    arithmetic = [cp for cp in numeric if not _named_as(cp.name, CALENDAR_WORDS)]
    nums = _numbers(arithmetic)
    found = [*_orders(profile, schema, numeric), *_sums(nums), *_products(nums), *_multiples(nums)]
    varied = {cp.name for cp in numeric if (cp.distinct or 0) >= MIN_RESULT_DISTINCT}
    place = {cp.name: i for i, cp in enumerate(profile.columns)}
    chosen = _likeliest([c for c in found if c.kind == "order" or c.result in varied])
    return [
        c if c.kind == "order" else replace(c, operands=tuple(sorted(c.operands, key=place.__getitem__)))
        for c in chosen
    ]


def _likeliest(found: list[Candidate]) -> list[Candidate]:
    """At most MAX_CANDIDATES, each kind's likeliest in turn (those the names suggest first), so
    that the coincidences of one kind (many columns of alike means add up) crowd out no other."""

    def kind(c: Candidate) -> str:
        return f"{c.kind}{len(c.operands)}"

    queues = [
        sorted((c for c in found if kind(c) == k), key=lambda c: (not c.hinted, c.closeness))
        for k in ("order1", "multiple1", "product2", "sum2", "sum3")
    ]
    chosen: list[Candidate] = []
    while len(chosen) < MAX_CANDIDATES and any(queues):
        for queue in queues:
            if queue and len(chosen) < MAX_CANDIDATES:
                chosen.append(queue.pop(0))
    return chosen


def _renamed(words: list[str], small: str, large: str) -> Optional[list[str]]:
    if small not in words:
        return None
    return [large if w == small else w for w in words]


def order_hint(a: str, b: str) -> bool:
    """The names differ by one pair of order words (temp_min / temp_max, start_date / end_date)."""
    wa, wb = text.words(a), text.words(b)
    for small, large in ORDER_WORDS:
        for x, y in ((wa, wb), (wb, wa)):
            if _renamed(x, small, large) == y:
                return True
    return False


def _orders(profile: TableProfile, schema: dict[str, dt.DataType], numeric: list[ColumnProfile]) -> list[Candidate]:
    found = []
    dates = [
        cp
        for cp in profile.columns
        if cp.name in schema
        and (schema[cp.name].is_date() or schema[cp.name].is_timestamp())
        and cp.count >= 20
        and (cp.distinct or 0) >= MIN_ORDER_DISTINCT
    ][:MAX_DATE_COLUMNS]
    for a, b in combinations(dates, 2):
        if schema[a.name] == schema[b.name]:
            found.append(Candidate("order", a.name, (b.name,), hinted=order_hint(a.name, b.name)))
    ordered = [
        cp
        for cp in numeric
        if (cp.distinct or 0) >= MIN_ORDER_DISTINCT and set(text.words(cp.name)) & _ORDER_VOCABULARY
    ]
    for a, b in combinations(ordered, 2):
        if order_hint(a.name, b.name):
            found.append(Candidate("order", a.name, (b.name,), hinted=True))
    return found


def _sums(n: _Numbers) -> list[Candidate]:
    """c = a + b for every c, and c = a + b + d for a c named as a total: the means add up
    and c's spread is within what its parts' spreads allow."""
    found: list[Candidate] = []
    k = len(n.names)
    if k < 3:
        return found
    mean = n.mean
    a_idx, b_idx = np.triu_indices(k, 1)
    for c in range(k):
        keep = (a_idx != c) & (b_idx != c)
        a, b = a_idx[keep], b_idx[keep]
        scale = np.abs(mean[a]) + np.abs(mean[b]) + abs(mean[c])
        off = np.abs(mean[a] + mean[b] - mean[c])
        # spreads as interquartile ranges: a few wrong rows (the finding) may inflate a standard
        # deviation at will, not the middle half of the values
        iqr = n.p75 - n.p25
        with np.errstate(invalid="ignore"):
            ok = (
                (off <= MEAN_SLACK * scale)
                & ~(iqr[c] > (iqr[a] + iqr[b]) * (1 + IQR_SLACK))
                & _within_quantiles(n, c, a, b, np.add, SPREAD_SLACK * (iqr[a] + iqr[b]))
            )
        total = _named_any(n.names[c], TOTAL_WORDS)
        with np.errstate(divide="ignore", invalid="ignore"):
            fit = np.where(scale > 0, off / (MEAN_SLACK * scale), 0.0) + _span(c, a, b, k)
        for i in _best(ok, fit):
            found.append(
                Candidate("sum", n.names[c], (n.names[a[i]], n.names[b[i]]), closeness=float(fit[i]), hinted=total)
            )
        if total:
            found.extend(_three_parts(n, c))
    return found


def _span(c: Any, a: Any, b: Any, width: int) -> Any:
    """How far apart the columns stand, as a share of the width of the table."""
    return (np.maximum(np.maximum(c, a), b) - np.minimum(np.minimum(c, a), b)) / max(width, 1)


def _best(ok: Any, score: Any) -> Any:
    """The indices of the PER_RESULT lowest scores where ok: no more are built for one result."""
    where = np.flatnonzero(ok)
    if len(where) > PER_RESULT:
        where = where[np.argpartition(score[where], PER_RESULT)[:PER_RESULT]]
    return where


def _three_parts(n: _Numbers, c: int) -> list[Candidate]:
    mean = n.mean
    iqr = n.p75 - n.p25
    parts = [i for i in range(len(n.names)) if i != c and not iqr[i] > iqr[c] * (1 + IQR_SLACK)]
    if n.low[c] >= 0:  # a total of amounts: every part is an amount no larger than the total
        parts = [i for i in parts if n.low[i] >= 0 and mean[i] <= mean[c] * (1 + MEAN_SLACK)]
    parts = sorted(parts, key=lambda i: mean[i])[:MAX_TOTAL_PARTS]
    means = [float(mean[i]) for i in parts]
    found = []
    for x, y in combinations(range(len(parts)), 2):
        a, b = parts[x], parts[y]
        need = mean[c] - mean[a] - mean[b]
        slack = MEAN_SLACK * (abs(mean[a]) + abs(mean[b]) + abs(mean[c]) + abs(need))
        for z in range(bisect.bisect_left(means, need - slack), bisect.bisect_right(means, need + slack)):
            d = parts[z]
            if z <= y or d in (a, b):  # each set of parts once
                continue
            if not iqr[c] > (iqr[a] + iqr[b] + iqr[d]) * (1 + IQR_SLACK):
                off = abs(mean[a] + mean[b] + mean[d] - mean[c]) / slack
                found.append(
                    Candidate("sum", n.names[c], (n.names[a], n.names[b], n.names[d]), closeness=off, hinted=True)
                )
    return found


def _products(n: _Numbers) -> list[Candidate]:
    """c = k * a * b over columns of no negative value: c's mean is k times the product of the
    means, within what their variation allows (E[ab] = E[a]E[b](1 + corr * cv_a * cv_b)), and
    c's middle half lies within the products of a's and b's outer quantiles."""
    found: list[Candidate] = []
    positive = [i for i in range(len(n.names)) if n.low[i] >= 0 and n.mean[i] > 0]
    if len(positive) < 3:
        return found
    idx = np.array(positive)
    a_idx, b_idx = (idx[x] for x in np.triu_indices(len(idx), 1))
    cv = n.std / n.mean
    shares = np.array([_named_any(name, RATIO_WORDS) for name in n.names], dtype=bool)
    for c in positive:
        keep = (a_idx != c) & (b_idx != c)
        a, b = a_idx[keep], b_idx[keep]
        for k in PRODUCT_FACTORS:
            expected = k * n.mean[a] * n.mean[b]
            ratio = n.mean[c] / np.where(expected > 0, expected, np.nan)
            width = cv[a] * cv[b] + SPREAD_SLACK
            with np.errstate(invalid="ignore"):
                ok = (np.abs(ratio - 1) <= width) & _within_quantiles(
                    n, c, a, b, lambda x, y, k=k: k * x * y, QUANTILE_SLACK * n.mean[c], relative=True
                )
                if k != 1:  # a share in percent (per mille) of a whole: a factor named so, within 0..1/k
                    ok &= (shares[a] & (n.high[a] <= (1 + SPREAD_SLACK) / k)) | (
                        shares[b] & (n.high[b] <= (1 + SPREAD_SLACK) / k)
                    )
            fit = np.abs(ratio - 1) / width + _span(c, a, b, len(n.names))
            for i in _best(ok, fit):
                found.append(
                    Candidate("product", n.names[c], (n.names[a[i]], n.names[b[i]]), factor=k, closeness=float(fit[i]))
                )
    return found


def _within_quantiles(n: _Numbers, c: int, a: Any, b: Any, op: Any, slack: Any, relative: bool = False) -> Any:
    """Whether c's quantiles lie where c = op(a, b) puts them, for op increasing in both (a sum;
    a product of values of no sign): P(op(a, b) <= op(a_p, b_q)) >= p + q - 1, so c's median
    lies between op(a25, b25) and op(a75, b75), its p25 above op(a05, b05), its p75 below
    op(a95, b95).  A missing quantile rules nothing out."""

    def inside(cq: Any, low: Any, high: Any) -> Any:
        if relative:
            low, high = low * (1 - QUANTILE_SLACK), high * (1 + QUANTILE_SLACK)
        with np.errstate(invalid="ignore"):
            return ~(cq < low - slack) & ~(cq > high + slack)

    return (
        inside(n.p50[c], op(n.p25[a], n.p25[b]), op(n.p75[a], n.p75[b]))
        & inside(n.p25[c], op(n.p05[a], n.p05[b]), np.inf)
        & inside(n.p75[c], -np.inf, op(n.p95[a], n.p95[b]))
    )


def _multiples(n: _Numbers) -> list[Candidate]:
    """c = k * a, k a round number or a unit conversion: the mean, the spread and the median
    of c are all k times a's."""
    found = []
    known = np.array(MULTIPLES)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = n.mean[:, None] / n.mean[None, :]  # k[c, a]: the larger column over the smaller
        usable = np.isfinite(k) & (k > 1)
        nearest = known[np.abs(np.log(np.where(usable, k, 1.0))[..., None] - np.log(known)).argmin(axis=-1)]
        ok = usable & (np.abs(nearest / k - 1) <= FACTOR_SLACK)
        iqr = n.p75 - n.p25  # robust to the few wrong rows, as a standard deviation is not
        spread = iqr[:, None] / (iqr[None, :] * nearest)
        ok &= ~(np.isfinite(spread) & (np.abs(spread - 1) > QUANTILE_SLACK))
        medians = n.p50[:, None] / (n.p50[None, :] * nearest)
        ok &= ~(np.isfinite(medians) & (np.abs(medians - 1) > SPREAD_SLACK))
    for c, a in zip(*np.nonzero(ok)):
        fit = abs(nearest[c, a] / k[c, a] - 1) / FACTOR_SLACK + abs(c - a) / len(n.names)
        found.append(Candidate("multiple", n.names[c], (n.names[a],), factor=float(nearest[c, a]), closeness=fit))
    return found


def rounding_step(cp: ColumnProfile, dtype: dt.DataType, sample_rows: list[dict[str, Any]]) -> float:
    """The step a column's values are rounded to: 1 for integers, 0.01 for cents; 0 for values
    that are not rounded (floats of many decimals).  Read from values the profile holds."""
    if dtype.is_integer():
        return 1.0
    if dtype.is_decimal() and dtype.scale is not None:
        return 10.0**-dtype.scale
    values = [cp.min, cp.max, *(v.value for v in cp.top_values or []), *(row.get(cp.name) for row in sample_rows)]
    decimals = 0
    for v in values:
        x = finite_float(v) if not isinstance(v, str) else finite_float(_number(v))
        if x is None:
            continue
        d = next((d for d in range(MAX_DECIMALS + 1) if abs(x - round(x, d)) <= 1e-9 * max(1.0, abs(x))), None)
        if d is None:
            return 0.0
        decimals = max(decimals, d)
    return 10.0**-decimals


def _number(value: str) -> Optional[Decimal]:
    try:
        return Decimal(value)
    except Exception:  # not a number: no step to read from it
        return None
