"""Values off from their column, or from their group, by a unit factor or by orders of magnitude.

A measurement column's positive values are read as a histogram of their orders of magnitude
(RESOLUTION bins a decade), for the whole column and within the groups of a few category
columns of the table: one query per view (the whole column and at most MAX_GROUP_COLUMNS group
columns), each a union of bounded group-bys over at most MAX_MEASURES columns; a table of more
than SAMPLE_ROWS rows is read from a seeded sample, whose bulks are then completed by the rows
outside them, read exactly in one scan (errors are rare: a sample would miss them).  Within each
histogram, the values "apart" are those cut off from the bulk around the median by an empty
stretch of the log scale and far from it on a robust scale (median and MAD of the logarithm): a
tail that thins out value after value (incomes, storms, big airports) stays connected and is
never apart.

A row apart is then judged with its groups (from the rows outside the bulks, read back once for
every column: a cell per bin and groups): normal within the group of a category narrower than the column (a unit column,
a segment: a big airport among big airports), it is nothing; a category that cuts across levels
(a city of consumers and firms) tells nothing and is not asked.  Brought among its peers by one
known factor (x10, x100, x1000 in a bulk under 0.8 of a decade wide; x2.54, x12, x60... in a
tight one) in every view it is apart in, it is a scale error; ten times or more above its
group's median with no factor, and not apart in the whole column (the outliers check's
ground), an implausible value.  Small values have a long natural tail (tiny budgets, fog,
a slow taxi): below the median, only a value apart from the whole column too is judged, and
never as implausible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional

import ibis
import ibis.expr.datatypes as dt
import pyarrow as pa
import pyarrow.compute as pc

from cataloger_dagster.core.grammar import verb_for
from cataloger_dagster.core.issues.detectors import slips
from cataloger_dagster.core.issues.detectors.context import (
    SAMPLE_ROWS,
    Context,
    count,
    is_measure,
    issue,
    name_words,
    not_nan,
    seeded_sample,
)
from cataloger_dagster.core.issues.detectors.ranges import COORDINATES
from cataloger_dagster.core.models import ColumnProfile, IssueModel
from cataloger_dagster.core.values import finite_float

RESOLUTION = 20  # histogram bins per decade (a bin is a factor of 1.12)
GAP_BINS = 7  # an empty stretch wider than this (a factor of 2.2) cuts a value off its bulk
MIN_GROUP_ROWS = 8  # a group judged has this many positive values
MIN_BULK_ROWS = 5
MAX_APART_SHARE = 0.2  # more than this of a group apart is two populations, not errors
MAX_COLUMN_SHARE = 0.02  # scale errors and implausible values are a few rows of a column (or 3)
ROBUST_Z = 4.0  # distance to the median, in robust standard deviations of the log
IMPLAUSIBLE_DECADES = 1.0  # an implausible value is ten times or more from its group's median
TELLING_SHARE = 0.75  # a group this much narrower than its column tells the values' level
WIDE_DECADES = 0.8  # a group's 10th to 90th percentiles wider than this recognise no factor
TIGHT_DECADES = 0.2  # a group this tight (log interquartile range) tells 2.54 from 2.2
SMALL_WHOLE = 10  # whole numbers below this are never low outliers: a count of 3 is a count
UNIQUE_SHARE = 0.9
MAX_MEASURES = 8
MAX_GROUP_COLUMNS = 3
MAX_GROUPS = 30
MAX_VALUES_SHOWN = 100
FETCHED = 2000  # (bin, groups) cells judged for a column's values apart
MAX_OUTSIDE = 100_000  # rows outside the bulks read back exactly; more, and the table is not judged
BIG = 1e300

# factor -> what it usually means.  Powers of ten are tried first: they are the common slips.
FACTORS: dict[float, str] = {
    10.0: "a misplaced decimal point (x10)",
    100.0: "a factor of 100 (percent against fraction, cents against units)",
    1000.0: "thousands against units (x1,000)",
    2.54: "inches against centimetres (x2.54)",
    12.0: "feet against inches (x12)",
    3.28084: "metres against feet (x3.28)",
    2.20462: "kilograms against pounds (x2.2046)",
    1.60934: "miles against kilometres (x1.609)",
    60.0: "minutes against seconds or hours (x60)",
}
POWERS_OF_TEN = (10.0, 100.0, 1000.0)
YEAR_WORDS = {"year", "yr", "years", "decade"}
# numbers that name or order things rather than measure them (a flight number, a rank)
LABEL_WORDS = {
    "flight",
    "route",
    "zip",
    "postal",
    "postcode",
    "phone",
    "room",
    "gate",
    "platform",
    "channel",
    "version",
    "rank",
    "position",
    "index",
    "order",
    "seq",
    "sequence",
    "fips",
    "isbn",
}
CLOCK_WORDS = {"time", "hhmm", "clock"}  # 1330 for 13:30: not a quantity
FRACTION_WORDS = {"percent", "pct", "percentage", "rate", "ratio", "share", "fraction", "proportion"}


@dataclass
class Shape:
    """One group's histogram of orders of magnitude, read robustly."""

    rows: int
    median: float  # in bins
    mad: float  # in bins
    low: int  # the bulk: the occupied bins joined to the median's by gaps <= GAP_BINS
    high: int
    p10: float
    p25: float
    p75: float
    p90: float

    def apart(self, b: int) -> bool:
        return (b < self.low or b > self.high) and abs(b + 0.5 - self.median) >= ROBUST_Z * max(1.4826 * self.mad, 1.0)

    def normal(self, b: int) -> bool:
        return self.low <= b <= self.high

    @property
    def median_value(self) -> float:
        return 10 ** (self.median / RESOLUTION)


def _quantile(bins: list[tuple[int, float]], q: float) -> float:
    total = sum(n for _, n in bins)
    seen = 0.0
    for b, n in bins:
        seen += n
        if seen > q * total:
            return b + 0.5
    return bins[-1][0] + 0.5


def shape(hist: Mapping[int, float]) -> Optional[Shape]:
    bins = sorted(hist.items())
    rows = round(sum(n for _, n in bins))  # a sample's counts are weighted
    if rows < MIN_GROUP_ROWS:
        return None
    median = _quantile(bins, 0.5)
    mad = _quantile(sorted(((int(abs(b + 0.5 - median)), n) for b, n in bins)), 0.5)
    occupied = [b for b, _ in bins]
    at = min(range(len(occupied)), key=lambda i: abs(occupied[i] + 0.5 - median))
    lo = hi = at
    while lo > 0 and occupied[lo] - occupied[lo - 1] <= GAP_BINS:
        lo -= 1
    while hi < len(occupied) - 1 and occupied[hi + 1] - occupied[hi] <= GAP_BINS:
        hi += 1
    bulk = sum(hist[b] for b in occupied[lo : hi + 1])
    if bulk < MIN_BULK_ROWS or rows - bulk > MAX_APART_SHARE * rows:
        return None
    inside = [(b, n) for b, n in bins if occupied[lo] <= b <= occupied[hi]]
    return Shape(rows, median, mad, occupied[lo], occupied[hi], *(_quantile(inside, q) for q in (0.1, 0.25, 0.75, 0.9)))


def too_wide(s: Shape) -> bool:
    """A bulk this wide takes most values back among it by some power of ten: no factor is told."""
    return s.p90 - s.p10 > WIDE_DECADES * RESOLUTION


def telling(group: Shape, whole: Optional[Shape]) -> bool:
    """Whether a group is narrower than the whole column: its category tells something of the
    values' level (a unit column, a segment), where a category that cuts across levels (a city
    of consumers and firms) makes every value "normal" and tells nothing."""
    return whole is None or group.p90 - group.p10 <= TELLING_SHARE * (whole.p90 - whole.p10)


def fitting_factor(value: float, s: Shape) -> Optional[float]:
    """The known factor that brings `value` among its peers, or None.  A power of ten must land
    it within the bulk's 10th to 90th percentiles (the nearest the median, if two do); another
    factor (2.54, 12, 60...) between the quartiles of a group tight enough to tell it from its
    neighbours.  Give or take a bin either way."""
    ratio = math.log10(value) * RESOLUTION - s.median

    def corrected(f: float) -> float:
        return s.median + ratio - math.copysign(math.log10(f) * RESOLUTION, ratio)

    if too_wide(s):
        return None
    powers = [f for f in POWERS_OF_TEN if s.p10 - 2 <= corrected(f) <= s.p90 + 2]
    if powers:
        return min(powers, key=lambda f: abs(corrected(f) - s.median))
    if s.p75 - s.p25 > TIGHT_DECADES * RESOLUTION:
        return None
    others = [f for f in FACTORS if f not in POWERS_OF_TEN and s.p25 - 2 <= corrected(f) <= s.p75 + 2]
    return min(others, key=lambda f: abs(corrected(f) - s.median)) if others else None


def _is_clock(cp: ColumnProfile, dtype: dt.DataType) -> bool:
    high = finite_float(cp.max)
    return dtype.is_integer() and bool(name_words(cp.name) & CLOCK_WORDS) and high is not None and high <= 2400


def low_side_judged(cp: ColumnProfile) -> bool:
    """A share runs down towards zero by nature (0.0001 of a habitat): only its values too
    high (67 among fractions) are judged."""
    high = finite_float(cp.max)
    return not (name_words(cp.name) & FRACTION_WORDS or (high is not None and high <= 1))


def _is_year(cp: ColumnProfile) -> bool:
    low, high = finite_float(cp.min), finite_float(cp.max)
    return bool(name_words(cp.name) & YEAR_WORDS) or (
        cp.dtype.lstrip("!").startswith(("int", "uint"))
        and low is not None
        and high is not None
        and 1000 <= low
        and high <= 2200
    )


def measures(ctx: Context) -> list[str]:
    """Measurement columns worth a look: numbers on a ratio scale (none negative), not mostly
    zero, not identifiers, years or coordinates."""
    schema = _whole(ctx).schema()
    found = []
    for cp in ctx.profile.columns:
        dtype = schema[cp.name] if cp.name in schema else None
        if (
            dtype is None
            or not is_measure(cp, dtype)
            or name_words(cp.name) & (COORDINATES | LABEL_WORDS)
            or _is_year(cp)
            or _is_clock(cp, dtype)
        ):
            continue
        low, median = finite_float(cp.min), finite_float((cp.quantiles or {}).get("p50"))
        if low is None or low < 0 or median is None or median <= 0 or (cp.distinct or 0) < 5:
            continue
        if dtype.is_integer() and (cp.distinct or 0) >= UNIQUE_SHARE * cp.count:
            continue  # whole numbers, all different: a numbering, not a measure
        found.append(cp.name)
    return found[:MAX_MEASURES]


def group_columns(ctx: Context) -> list[str]:
    """Category columns that cut the rows into a few groups of many rows each."""
    schema = _whole(ctx).schema()
    found = []
    for cp in ctx.profile.columns:
        dtype = schema[cp.name] if cp.name in schema else None
        if dtype is None or not (dtype.is_string() or dtype.is_integer() or dtype.is_boolean()):
            continue
        d = cp.distinct or 0
        if not 2 <= d <= MAX_GROUPS or ctx.rows < MIN_GROUP_ROWS * d or cp.null_fraction > 0.5:
            continue
        found.append((not dtype.is_string(), d, cp.name))
    return [name for *_, name in sorted(found)][:MAX_GROUP_COLUMNS]


def _whole(ctx: Context) -> ibis.Table:
    return ctx.table if ctx.whole is None else ctx.whole


def _bin(v: ibis.NumericValue) -> ibis.IntegerValue:
    return (v.log10() * RESOLUTION).floor().cast("int64")


@dataclass
class Finding:
    rows: int
    examples: list[dict[str, Any]]
    factors: dict[str, int]
    values: list[float]


def analysis(ctx: Context) -> dict[str, dict[str, Finding]]:
    """{column: {"scale_errors" | "implausible_values": finding}}, computed once per table."""
    key = ("magnitudes", "")
    if key not in ctx.cache:
        ctx.cache[key] = _analyse(ctx)
    return ctx.cache[key]


Hists = dict[tuple[int, int, Any], dict[int, float]]  # (measure, view, group) -> {bin: rows}


def _analyse(ctx: Context) -> dict[str, dict[str, Finding]]:
    t = _whole(ctx)
    columns = measures(ctx)
    groups = group_columns(ctx)
    if not columns:
        return {}
    binned = _binned(ctx, t, columns, groups)
    if ctx.rows <= SAMPLE_ROWS:
        # a small table is read whole, once: its histograms and its rows apart are exact
        outside = binned.to_pyarrow()
        hists = _histograms(outside, columns, groups)
        unit = 1.0
    else:
        hists = _sampled_histograms(ctx, t, binned, columns, groups)
        # a sampled row's weight (its histogram's smallest count): the tail's scale is read over
        # the sample's last values, not over the rows one sampled value stands for
        unit = min((n for h in hists.values() for n in h.values()), default=1.0)
        bulks = {k: s for k, h in hists.items() if (s := shape(h)) is not None}
        read = _outside(t, binned, columns, groups, bulks)
        if read is None:
            return {}
        outside = read
        exact = _histograms(outside, columns, groups)
        # within a bulk the sample's (or the group-bys') counts stand; outside it, every row was read
        hists = {
            k: {
                **{b: n for b, n in hists[k].items() if s.normal(b)},
                **{b: n for b, n in exact.get(k, {}).items() if not s.normal(b)},
            }
            for k, s in bulks.items()
        }
    shapes = {k: s for k, h in hists.items() if (s := shape(h)) is not None}
    whole_shapes = {m: shapes[(mi, 0, "")] for mi, m in enumerate(columns) if (mi, 0, "") in shapes}
    corroboration = Corroboration(outside, columns, whole_shapes, unit)
    found: dict[str, dict[str, Finding]] = {}
    for mi, m in enumerate(columns):
        apart = {b for (i, vi, grp), s in shapes.items() if i == mi for b in hists[(i, vi, grp)] if s.apart(b)}
        if not apart:
            continue
        cp = next(c for c in ctx.profile.columns if c.name == m)
        result = _judge(
            ctx,
            t,
            m,
            groups,
            _cells(outside, mi, len(groups), apart),
            {(vi, grp): s for (i, vi, grp), s in shapes.items() if i == mi},
            low_side_judged(cp),
            {(vi, grp): h for (i, vi, grp), h in hists.items() if i == mi},
            corroboration,
        )
        if result:
            found[m] = result
    return found


def _usable(ctx: Context, v: ibis.NumericValue) -> ibis.BooleanValue:
    return v.notnull() & (v > 0) & (v < BIG) & not_nan(ctx, v)


def _binned(ctx: Context, t: ibis.Table, columns: list[str], groups: list[str]) -> ibis.Table:
    """Each measure's usable value `v<i>` and its bin `b<i>` (NULL where unusable), and each group
    column's value as text `g<j>`."""
    selected: dict[str, Any] = {}
    for mi, m in enumerate(columns):
        v = t[m].cast("float64")
        # the value is nulled before its logarithm: a CASE is no guard against log10(0) in DuckDB
        usable = ibis.ifelse(_usable(ctx, v), v, ibis.null("float64"))
        selected[f"v{mi}"] = usable
        selected[f"b{mi}"] = _bin(usable)
    selected.update({f"g{i}": t[g].cast("string") for i, g in enumerate(groups)})
    return t.select(**selected)


def _views(groups: int) -> list[tuple[int, Optional[str]]]:
    """(view, its group column `g<j>`): the whole column first."""
    return [(0, None)] + [(i + 1, f"g{i}") for i in range(groups)]


def _histograms(rows: pa.Table, columns: list[str], groups: list[str], weight: float = 1.0) -> Hists:
    """The rows' histograms per measure, view and group, each row counted `weight` times (a
    sample's rows stand for 1/fraction of the table's)."""
    hists: Hists = {}
    for mi in range(len(columns)):
        b = f"b{mi}"
        present = rows.filter(pc.is_valid(rows[b]))
        for vi, g in _views(len(groups)):
            counted = present.group_by([b] if g is None else [g, b]).aggregate([(b, "count")])
            for r in counted.to_pylist():
                n = r[f"{b}_count"]
                hists.setdefault((mi, vi, "" if g is None else r[g]), {})[int(r[b])] = n * weight if weight != 1 else n
    return hists


def _sampled_histograms(
    ctx: Context, t: ibis.Table, binned: ibis.Table, columns: list[str], groups: list[str]
) -> Hists:
    """A big table's histograms: from its seeded sample where the database draws one (read in one
    scan), else counted by the database (a group-by per measure and view)."""
    drawn = seeded_sample(ctx)
    if drawn is not None:
        sample, fraction = drawn
        rows = _binned(ctx, sample, columns, groups).to_pyarrow()
        return _histograms(rows, columns, groups, weight=1 / fraction)
    hists: Hists = {}
    # one query per view (the whole column, then each group column): a union mixing the text of
    # two columns fails where their collations differ (MySQL), and one view's branches share one
    for vi, g in _views(len(groups)):
        branches = []
        for mi in range(len(columns)):
            grp = ibis.literal("", type="string") if g is None else binned[g]
            part = binned.filter(binned[f"b{mi}"].notnull()).select(
                m=ibis.literal(mi, type="int64"), grp=grp, bin=binned[f"b{mi}"]
            )
            branches.append(part.group_by(["m", "grp", "bin"]).aggregate(n=part.count()))
        counted = ibis.union(*branches) if len(branches) > 1 else branches[0]
        for r in counted.to_pyarrow().to_pylist():
            hists.setdefault((r["m"], vi, r["grp"]), {})[int(r["bin"])] = int(r["n"])
    return hists


def _outside(
    t: ibis.Table, binned: ibis.Table, columns: list[str], groups: list[str], bulks: dict[tuple[int, int, Any], Shape]
) -> Optional[pa.Table]:
    """The rows whose value lies outside the bulk of one of its views (the whole column, its group
    of each group column), read exactly in one scan.  None when more than MAX_OUTSIDE rows are
    (a bulk this loose judges nothing)."""

    def bound(b: float, margin: float) -> ibis.Value:
        return ibis.literal(10 ** (b / RESOLUTION) * margin, type="float64")

    conditions = []
    for (mi, vi, grp), s in bulks.items():
        v = binned[f"v{mi}"]
        # a margin of a part in a thousand either way: the bins are the database's, read back
        far = (v < bound(s.low, 1.001)) | (v >= bound(s.high + 1, 0.999))
        if vi:
            key = binned[f"g{vi - 1}"]
            far = far & (key.isnull() if grp is None else key == grp)
        conditions.append(far)
    if not conditions:
        return binned.limit(0).to_pyarrow()
    anywhere = conditions[0]
    for c in conditions[1:]:
        anywhere = anywhere | c
    rows = binned.filter(anywhere).limit(MAX_OUTSIDE + 1).to_pyarrow()
    return None if rows.num_rows > MAX_OUTSIDE else rows


def _cells(rows: pa.Table, mi: int, groups: int, apart: set[int]) -> list[dict[str, Any]]:
    """One row per bin and groups among the bins apart, the rarest first: errors are rare, and a
    bin apart within some groups may be a whole population of others (enterprises among
    consumers)."""
    b, v = f"b{mi}", f"v{mi}"
    keys = [b, *(f"g{i}" for i in range(groups))]
    chosen = rows.filter(pc.is_in(rows[b], value_set=pa.array(sorted(apart), type=rows.schema.field(b).type)))
    counted = chosen.group_by(keys).aggregate([(v, "count"), (v, "min"), (v, "max")]).to_pylist()
    cells = [
        {
            "bin": int(c[b]),
            "n": c[f"{v}_count"],
            "lo": c[f"{v}_min"],
            "hi": c[f"{v}_max"],
            **{f"g{i}": c[f"g{i}"] for i in range(groups)},
        }
        for c in counted
    ]
    return sorted(cells, key=lambda c: (c["n"], c["bin"]))[:FETCHED]


@dataclass
class Corroboration:
    """What slips.py reads to tell a slip from a true extreme: the rows apart (they carry every
    measure's value `v<i>`), each measure's whole-column shape, and the weight of a histogram's row."""

    outside: pa.Table
    columns: list[str]
    shapes: dict[str, Shape]
    unit: float

    def rows(self, m: str, ranges: list[tuple[float, float]]) -> list[dict[str, Optional[float]]]:
        """The rows whose measure `m` lies in one of `ranges`, as {measure: value}."""
        v = self.outside[f"v{self.columns.index(m)}"]
        keep = None
        for lo, hi in ranges:
            one = pc.and_(pc.greater_equal(v, lo), pc.less_equal(v, hi))
            keep = one if keep is None else pc.or_(keep, one)
        if keep is None:
            return []
        picked = self.outside.filter(keep).select([f"v{i}" for i in range(len(self.columns))])
        return [{c: r[f"v{i}"] for i, c in enumerate(self.columns)} for r in picked.to_pylist()]


def _judge(
    ctx: Context,
    t: ibis.Table,
    m: str,
    groups: list[str],
    cells: list[dict[str, Any]],
    shapes: dict[tuple[int, Any], Shape],
    low_side: bool,
    hists: dict[tuple[int, Any], dict[int, float]],
    corroboration: Corroboration,
) -> dict[str, Finding]:
    whole = t.schema()[m].is_integer()
    whole_shape = shapes.get((0, ""))
    out: dict[str, list[tuple[dict, int, Optional[float]]]] = {"scale_errors": [], "implausible_values": []}
    for r in cells:
        b = int(r["bin"])
        lo, hi = float(r["lo"]), float(r["hi"])
        if whole and hi < SMALL_WHOLE:
            continue
        value = hi if whole_shape is None or b + 0.5 > whole_shape.median else lo
        views = [(0, "")] + [(i + 1, r[f"g{i}"]) for i in range(len(groups))]
        judged = [(vi, grp, shapes[(vi, grp)]) for vi, grp in views if (vi, grp) in shapes]
        if any(vi and s.normal(b) and telling(s, whole_shape) for vi, _, s in judged):
            continue  # normal within the group of a telling category: a real extreme of its kind
        far = [
            (vi, grp, s)
            for vi, grp, s in judged
            if s.apart(b) and (low_side or b > s.median) and (not vi or telling(s, whole_shape))
        ]
        if not far:
            continue
        high = b > far[0][2].median
        if not high and all(vi for vi, _, _ in far):
            continue  # small values have a long natural tail (tiny budgets, fog, taxiing): the
            # low side needs the whole column's view too
        far.sort(key=lambda x: x[0] == 0)  # a group's view says more than the whole column's
        # a unit slip is undone by one factor whichever peers the value is compared with
        fits = {fitting_factor(value, s) for _, _, s in far}
        if len(fits) == 1 and None not in fits:
            vi, grp, s = far[0]
            f = fits.pop()
            kind = "scale_errors"
            if not slips.cut_off(hists[(vi, grp)], b, s, corroboration.unit):
                continue  # the last value of a tail that thins out towards it: a true extreme
        else:
            vi, grp, s = far[0]
            f = None
            off = abs(b + 0.5 - s.median)
            if vi == 0 or not high or any(x == 0 for x, _, _ in far) or off < IMPLAUSIBLE_DECADES * RESOLUTION:
                continue
            kind = "implausible_values"
        ratio = value / s.median_value
        example = {
            "value": value,
            "ratio": ratio,
            "median": s.median_value,
            "group_size": s.rows,
            "rows": int(r["n"]),
            "values": sorted({lo, hi}),
        }
        if vi:
            example["group"] = {groups[vi - 1]: grp}
        if f:
            example["factor"] = f
            example["corrected"] = value / f if ratio > 1 else value * f
        out[kind].append((example, int(r["n"]), f))
    if out["scale_errors"]:
        # a real event moves the row's other measures with the value; a slip moves one cell
        # a scale error always has its factor
        cells_found = [(h[0]["values"][0], h[0]["values"][-1], float(h[2] or 0)) for h in out["scale_errors"]]
        rows = corroboration.rows(m, [(lo, hi) for lo, hi, _ in cells_found])
        dropped = slips.events(rows, m, cells_found, corroboration.shapes, RESOLUTION)
        out["scale_errors"] = [h for i, h in enumerate(out["scale_errors"]) if i not in dropped]
    result = {}
    for kind, hits in out.items():
        total = sum(n for _, n, _ in hits)
        if not total or total > max(3, MAX_COLUMN_SHARE * ctx.rows):
            continue
        factors: dict[str, int] = {}
        for _, n, f in hits:
            if f:
                factors[f"{f:g}"] = factors.get(f"{f:g}", 0) + n
        hits.sort(key=lambda h: -abs(math.log10(h[0]["ratio"])))
        result[kind] = Finding(
            total,
            [h[0] for h in hits[:5]],
            factors,
            sorted({v for h in hits for v in h[0]["values"]})[:MAX_VALUES_SHOWN],
        )
    return result


def _where(example: dict[str, Any]) -> str:
    if "group" not in example:
        return "the column's median"
    ((g, value),) = example["group"].items()
    return f"the median of its group ({g} = {value!r})"


def _rounded(x: float) -> str:
    """Three significant digits, with thousands separators: 1,940 rather than 1.94e+03."""
    digits = 2 - math.floor(math.log10(x))
    return f"{round(x, digits):,.{max(digits, 0)}f}"


def _times(ratio: float) -> str:
    return f"{_rounded(ratio)} times" if ratio >= 1 else f"1/{_rounded(1 / ratio)} of"


def scale_errors(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_numeric():
        return None
    found = analysis(ctx).get(cp.name, {}).get("scale_errors")
    if found is None:
        return None
    top = max(found.factors, key=found.factors.__getitem__)
    meaning = FACTORS[float(top)]
    first = found.examples[0]
    shown = ", ".join(
        f"{e['value']:g} (about {_times(e['ratio'])} {_where(e)}; /{e['factor']:g} -> {e['corrected']:.4g})"
        if e["ratio"] > 1
        else f"{e['value']:g} (about {_times(e['ratio'])} {_where(e)}; x{e['factor']:g} -> {e['corrected']:.4g})"
        for e in found.examples[:3]
    )
    return issue(
        ctx,
        "scale_errors",
        cp.name,
        severity="medium",
        category="smart_fixes",
        affectedRows=found.rows,
        description=f"{count(found.rows, 'value')} of {cp.name} {verb_for(found.rows, 'is')} off from "
        f"{'its peers' if found.rows == 1 else 'their peers'} by a unit factor, most by {meaning}: {shown}.",
        suggestedAction=f"Check the {count(found.rows, 'row')} of {cp.name} against their source; where the unit "
        f"slipped, store the corrected value (for example {first['value']:g} -> {first['corrected']:.4g}) "
        "and record the column's unit in its name or documentation.",
        details={
            "rows": found.rows,
            "factors": found.factors,
            "factor": float(top),
            "meaning": meaning,
            "examples": [e["value"] for e in found.examples],
            "flagged": found.examples,
            "values": found.values,
        },
    )


def implausible_values(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_numeric():
        return None
    found = analysis(ctx).get(cp.name, {}).get("implausible_values")
    if found is None:
        return None
    shown = ", ".join(f"{e['value']:g} (about {_times(e['ratio'])} {_where(e)})" for e in found.examples[:3])
    return issue(
        ctx,
        "implausible_values",
        cp.name,
        severity="medium",
        category="smart_fixes",
        affectedRows=found.rows,
        description=f"{count(found.rows, 'value')} of {cp.name} {verb_for(found.rows, 'is')} ten times or "
        f"more away from {'its' if found.rows == 1 else 'their'} group, with nothing in between, though "
        f"usual for the column as a whole: {shown}.",
        suggestedAction=f"Check the {count(found.rows, 'row')} of {cp.name} against their source: a value this far "
        "from every other of its group is usually an entry error; keep it if the source confirms it.",
        details={
            "rows": found.rows,
            "examples": [e["value"] for e in found.examples],
            "flagged": found.examples,
            "values": found.values,
        },
    )


def merge_outliers(issues: list[IssueModel]) -> list[IssueModel]:
    """One root cause, one issue: an outliers finding whose values are all among a column's scale
    errors or implausible values is that finding seen from the whole column; it is dropped."""
    flagged: dict[str, set[float]] = {}
    rows: dict[str, int] = {}
    for i in issues:
        if i.type in ("scale_errors", "implausible_values") and len(i.affectedColumns) == 1:
            flagged.setdefault(i.affectedColumns[0], set()).update(i.details.get("values", []))
            rows[i.affectedColumns[0]] = rows.get(i.affectedColumns[0], 0) + (i.affectedRows or 0)

    def covered(i: IssueModel) -> bool:
        column = i.affectedColumns[0] if len(i.affectedColumns) == 1 else None
        ends = [(i.details or {}).get(k) for k in ("min_outlier", "max_outlier")]
        return (
            column in flagged
            and (i.affectedRows or 0) <= rows[column]
            and all(e is not None and float(e) in flagged[column] for e in ends)
        )

    return [i for i in issues if not (i.type == "outliers" and covered(i))]
