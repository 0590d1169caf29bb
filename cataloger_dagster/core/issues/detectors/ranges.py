"""Values outside their column's range: outliers, implausible values and constant columns.

Numbers and dates stored as text are judged on their parsed values (placeholders excluded),
the same way as typed columns.
"""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta, timezone
from typing import Any, Optional

import ibis
import ibis.expr.datatypes as dt

from cataloger_dagster.core.grammar import count_noun, noun_for, verb_for
from cataloger_dagster.core.issues.detectors.context import (
    Context,
    is_measure,
    issue,
    name_words,
    not_nan,
    numeric_sentinels,
    one,
    pct,
)
from cataloger_dagster.core.issues.text_values import weighted_quantile
from cataloger_dagster.core.models import ColumnProfile, IssueModel
from cataloger_dagster.core.values import finite_float

OUTLIER_K = 1.5  # fence = p95 + K * (p95 - p05), on a log scale for positive data
OUTLIER_MAX_RATE = 0.01  # more than this beyond the fence is a heavy tail, not outliers
# Names that must not be negative.  Matched as whole words of the column name.
NON_NEGATIVE = {
    "quantity",
    "qty",
    "price",
    "amount",
    "total",
    "count",
    "age",
    "weight",
    "duration",
    "length",
    "height",
    "width",
    "size",
    "stock",
    "salary",
    "cost",
    "fee",
    "distance",
    "population",
    "units",
    "revenue",
    "ms",
    "seconds",
    "minutes",
    "hours",
    "days",
    "kg",
    "gross",
    "budget",
    "sales",
    "mm",
    "g",
    "lbs",
    "votes",
    "km",
    "miles",
}
# Date columns whose values may legitimately lie in the future.
FUTURE_OK = (
    "expir",
    "due",
    "deliver",
    "expected",
    "schedul",
    "plan",
    "until",
    "valid",
    "end",
    "deadline",
    "forecast",
    "next",
    "renew",
    "start",
)
EARLIEST = datetime(1900, 1, 1)
# Coordinates have a known valid range; a value far from the others is a far-away place.
COORDINATES = {"lat", "latitude", "lon", "lng", "long", "longitude"}


def fence(p05: float, p95: float, p50: Optional[float] = None) -> tuple[float, float, bool]:
    """(low, high, logarithmic).  Positive measures that are skewed (amounts, durations) get
    their fence on a log scale; evenly spread ones (a wind speed of 1 to 43) keep a linear one,
    where a log fence would reach past any error.  The scale is the one in which the median
    sits nearer the middle of p05..p95."""
    log = p05 > 0
    if log and p50 is not None and p05 < p50 < p95:
        linear = abs((p95 - p50) / (p50 - p05) - 1)
        logged = abs((math.log(p95) - math.log(p50)) / (math.log(p50) - math.log(p05)) - 1)
        log = logged < linear
    if log:
        lp05, lp95 = math.log(p05), math.log(p95)
        return math.exp(lp05 - OUTLIER_K * (lp95 - lp05)), math.exp(lp95 + OUTLIER_K * (lp95 - lp05)), True
    return p05 - OUTLIER_K * (p95 - p05), p95 + OUTLIER_K * (p95 - p05), False


ISOLATION = 4.0  # an outlier's gap to the nearest usual value, in the widest step between usual values
ISOLATION_NEIGHBOURS = 10
# ... and in the scale of the usual values' tail (Hill's estimator: the nearest usual values' mean
# distance to the next one in).  On a tail falling off exponentially on its scale (a power law on
# a log scale) a gap that wide comes by chance about once in e**6 (0.25%) per side: an outlier has
# no other evidence than its gap, so the bar is higher than a scale error's (slips.TAIL_GAP).
TAIL_ISOLATION = 6.0


def _scale(v: float, log: bool) -> float:
    return math.log(v) if log else v


def isolated(beyond: float, inside: list[float], log: bool) -> bool:
    """Whether the outlier nearest the usual values (``beyond``) is far from them: its gap to the
    nearest usual value is ISOLATION times the widest step among the nearest usual values.  A tail
    that thins out step by step (storms, long delays, taxiing speeds) is not isolated; a wind speed
    of 1048 among speeds under 45, or a budget of $218 among millions, is.  The gap is also read
    against the tail's scale (TAIL_ISOLATION): the lowest of 300 values a factor 1.4 below the next,
    where the next ten thin out over a factor 1.15, is a tail's end, not an error."""
    inside = sorted({v for v in inside if not log or v > 0}, key=lambda v: abs(v - beyond))[: ISOLATION_NEIGHBOURS + 1]
    if len(inside) < 3 or (log and beyond <= 0):
        return False
    points = sorted(_scale(v, log) for v in inside)
    widest = max(b - a for a, b in zip(points, points[1:]))
    gap = min(abs(_scale(beyond, log) - p) for p in points)
    # nearest first: the tail's last values and the one next in from them
    tail = sorted(points, key=lambda p: abs(_scale(beyond, log) - p))
    scale = sum(abs(p - tail[-1]) for p in tail[:-1]) / (len(tail) - 1)
    return widest > 0 and gap >= ISOLATION * widest and gap >= TAIL_ISOLATION * scale


def _outlier_issue(
    ctx: Context,
    cp: ColumnProfile,
    n: int,
    low: float,
    high: float,
    p05: float,
    p95: float,
    lo: float,
    hi: float,
    examples: list,
    parsed: bool,
) -> Optional[IssueModel]:
    if n == 0 or n > OUTLIER_MAX_RATE * ctx.rows:
        return None
    values = noun_for(n, "value")
    lies = verb_for(n, "lies")
    return issue(
        ctx,
        "outliers",
        cp.name,
        severity="medium",
        category="smart_fixes",
        affectedRows=n,
        description=f"{n:,} {values} of {cp.name}{' (read as numbers)' if parsed else ''} {lies} far outside "
        f"its usual range ({p05:g} to {p95:g} for the middle 90%), from {low:g} to {high:g}, "
        "well apart from every usual value.",
        suggestedAction=f"Check the {count_noun(n, 'row', zero=None)} of {cp.name} outside [{lo:.4g}, {hi:.4g}] "
        "against their source; correct entry errors and keep true extremes.",
        details={
            "rows": n,
            "fence_low": lo,
            "fence_high": hi,
            "p05": p05,
            "p95": p95,
            "min_outlier": low,
            "max_outlier": high,
            "examples": examples,
            "parsed_from_text": parsed,
        },
    )


def _text_outliers(ctx: Context, cp: ColumnProfile, pairs: list[tuple[float, int]]) -> Optional[IssueModel]:
    if len(pairs) < 10:
        return None
    p05, p50, p95 = (weighted_quantile(pairs, q) for q in (0.05, 0.5, 0.95))
    if p95 <= p05:
        return None
    lo, hi, log = fence(p05, p95, p50)
    inside = [v for v, _ in pairs if lo <= v <= hi]
    high = [(v, n) for v, n in pairs if v > hi]
    low = [(v, n) for v, n in pairs if v < lo and (v > 0 or not log)]
    hits = (high if high and isolated(high[0][0], inside, log) else []) + (
        low if low and isolated(low[-1][0], inside, log) else []
    )
    if not hits:
        return None
    hits.sort()
    return _outlier_issue(
        ctx,
        cp,
        sum(n for _, n in hits),
        hits[0][0],
        hits[-1][0],
        p05,
        p95,
        lo,
        hi,
        [v for v, _ in sorted(hits, reverse=True)[:5]],
        True,
    )


def outliers(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if name_words(cp.name) & COORDINATES:
        return None
    reading = ctx.reading(cp) if dtype.is_string() else None
    if reading is not None and reading.kind == "number":
        return _text_outliers(ctx, cp, [(float(v), n) for v, n in reading.weighted() if not isinstance(v, datetime)])
    if not is_measure(cp, dtype):
        return None
    q = cp.quantiles or {}
    p05, p95 = finite_float(q.get("p05")), finite_float(q.get("p95"))
    if p05 is None or p95 is None or p95 <= p05 or (cp.distinct or 0) < 10:
        return None
    c = ctx.table[cp.name].cast("float64")
    lo, hi, log = fence(p05, p95, finite_float(q.get("p50")))
    usable = c.notnull()
    sentinels = numeric_sentinels(cp)
    if sentinels:
        usable = usable & ~ctx.table[cp.name].isin(sentinels)
    if dtype.is_floating():
        usable = usable & not_nan(ctx, c)
    above, below = usable & (c > hi), usable & (c < lo) & ((c > 0) if log else True)
    stats = one(
        ctx.table, n_high=above.sum(), n_low=below.sum(), first_high=c.min(where=above), last_low=c.max(where=below)
    )
    t = ctx.table.filter(usable & (c >= lo) & (c <= hi))
    sides = []
    for side, beyond, nearest in (("high", stats["first_high"], ibis.desc("v")), ("low", stats["last_low"], "v")):
        if beyond is None or not int(stats[f"n_{side}"] or 0):
            continue
        inside = t.select(v=c).distinct().order_by(nearest).limit(ISOLATION_NEIGHBOURS + 1)
        if isolated(float(beyond), [float(v) for v in inside.to_pyarrow().column("v").to_pylist()], log):
            sides.append(above if side == "high" else below)
    if not sides:
        return None
    beyond = sides[0] if len(sides) == 1 else sides[0] | sides[1]
    hits = ctx.table.filter(beyond)
    found = one(hits, n=hits.count(), low=c.min(), high=c.max())
    n = int(found["n"])
    examples = [r["v"] for r in hits.select(v=c).order_by(ibis.desc("v")).limit(5).to_pyarrow().to_pylist()]
    return _outlier_issue(ctx, cp, n, found["low"], found["high"], p05, p95, lo, hi, examples, False)


def _number_rules(cp: ColumnProfile) -> dict[str, Any]:
    """label -> predicate on a float, for what a column's name says its values cannot be."""
    words = name_words(cp.name)
    rules: dict[str, Any] = {}
    if words & NON_NEGATIVE:
        rules["negative"] = lambda v: v < 0
    if words & {"percent", "pct", "percentage"}:
        rules["outside 0-100"] = lambda v: v < 0 or v > 100
    if "age" in words:
        rules["age above 130"] = lambda v: v > 130
    return rules


def _date_bounds(ctx: Context, cp: ColumnProfile) -> dict[str, Any]:
    future = (ctx.now + timedelta(days=1)).astimezone(timezone.utc).replace(tzinfo=None)
    rules: dict[str, Any] = {"before 1900": lambda v: v < EARLIEST}
    if not any(word in cp.name.lower() for word in FUTURE_OK):
        rules["in the future"] = lambda v: v > future
    return rules


def _range_issue(ctx: Context, cp: ColumnProfile, found: dict[str, int], parsed: Optional[str]) -> Optional[IssueModel]:
    """`parsed`: what a text column was read as ("number", "date"), None for a typed column."""
    total = sum(found.values())
    if not total:
        return None
    frac = total / ctx.rows
    what = ", ".join(f"{n:,} {label}" for label, n in found.items())
    return issue(
        ctx,
        "out_of_range",
        cp.name,
        severity="high" if frac > 0.05 else "medium",
        category="smart_fixes",
        affectedRows=total,
        description=f"{cp.name}{' (read as ' + ('dates' if parsed == 'date' else 'numbers') + ')' if parsed else ''} "
        f"has implausible values: {what} ({pct(total, ctx.rows)} of rows).",
        suggestedAction=f"Correct the {total:,} implausible {cp.name} values from the source (sign "
        "errors, mistyped or two-digit years) and add a CHECK constraint for the valid range.",
        details={"counts": found, "rows": total, "fraction": frac, "now": ctx.now.isoformat()},
    )


def out_of_range(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    reading = ctx.reading(cp) if dtype.is_string() else None
    if reading is not None and reading.kind:
        rules = _number_rules(cp) if reading.kind == "number" else _date_bounds(ctx, cp)
        found = {}
        for label, broken in rules.items():
            n = sum(
                k for v, k in reading.weighted() if broken(v.replace(tzinfo=None) if isinstance(v, datetime) else v)
            )
            if n:
                found[label] = n
        return _range_issue(ctx, cp, found, reading.kind)
    c = ctx.table[cp.name]
    checks: dict[str, Any] = {}
    if is_measure(cp, dtype):
        sentinel = c.isin(numeric_sentinels(cp)) if numeric_sentinels(cp) else ibis.literal(False)
        words = name_words(cp.name)
        if words & NON_NEGATIVE and (finite_float(cp.min) is None or finite_float(cp.min) < 0):
            checks["negative"] = (c < 0) & ~sentinel
        if words & {"percent", "pct", "percentage"}:
            checks["outside 0-100"] = ((c < 0) | (c > 100)) & ~sentinel
        if "age" in words:
            checks["age above 130"] = (c > 130) & ~sentinel
    elif dtype.is_date() or dtype.is_timestamp():
        name = cp.name.lower()
        if dtype.is_date():
            future, past = ibis.date((ctx.now + timedelta(days=1)).date()), ibis.date(date(1900, 1, 1))
        else:
            stamp = ctx.now + timedelta(days=1)
            if dtype.timezone is None:
                stamp = stamp.astimezone(timezone.utc).replace(tzinfo=None)
            future = ibis.literal(stamp, type=dtype)
            past = ibis.literal(datetime(1900, 1, 1, tzinfo=stamp.tzinfo), type=dtype)
        if not any(word in name for word in FUTURE_OK):
            checks["in the future"] = c > future
        checks["before 1900"] = c < past
    if not checks:
        return None
    counts = one(ctx.table, **{f"c{i}": e.sum() for i, e in enumerate(checks.values())})
    found = {label: int(counts[f"c{i}"] or 0) for i, label in enumerate(checks) if counts[f"c{i}"]}
    return _range_issue(ctx, cp, found, None)


def constant_column(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if ctx.rows < 5 or cp.nulls or cp.distinct != 1:
        return None
    c = ctx.table[cp.name]
    if cp.distinct_approximate:
        if int(c.nunique().execute()) != 1:
            return None
    value = cp.top_values[0].value if cp.top_values else c.max().execute()
    return issue(
        ctx,
        "constant_column",
        cp.name,
        severity="low",
        category="quick_fixes",
        affectedRows=ctx.rows,
        description=f"{cp.name} holds the same value ({value!r}) on all {ctx.rows:,} rows.",
        suggestedAction=f"Drop {cp.name} or move it to table-level metadata; if it should vary, "
        "check the load that fills it.",
        details={"value": str(value), "rows": ctx.rows},
    )
