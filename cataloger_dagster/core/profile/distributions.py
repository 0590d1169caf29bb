"""Query 2, the distributions: top values, histogram buckets (which need query 1's min/max),
quantiles and text-pattern counts of a sampled table, in one UNION ALL query (cut in pieces on
wide tables), each branch on a view of its one column (portable.narrow) or on the table's
seeded sample; then the counts read back, scaled to the table when sampled, and the
quantiles and histograms a column profile holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import ibis
import ibis.expr.types as ir

from cataloger_dagster.core import portable
from cataloger_dagster.core.models import NUMERIC_KINDS, TEMPORAL_KINDS, Histogram
from cataloger_dagster.core.profile.aggregates import QUANTILES, Aggregates, Figures, epoch_of
from cataloger_dagster.core.profile.kinds import CONTAINER_KINDS, Column, column_view
from cataloger_dagster.core.profile.patterns import pattern_counts, pattern_counts_grouped, pattern_names
from cataloger_dagster.core.profile.runner import TABLE_LEVEL, Branch, Capabilities, Scan, UnionRow
from cataloger_dagster.core.profile.values import epoch_py, float_list, from_epoch
from cataloger_dagster.core.values import finite_float

NEAR_UNIQUE = 0.8  # approx distinct / values above which top values are skipped
PATTERNS_GROUPED_DISTINCT = 20_000
PATTERN_SAMPLE_ROWS = 200_000


class Tag:
    """What a row of query 2 holds (its k)."""

    TOP = "t"  # a top value and its count
    BUCKET = "h"  # a histogram bucket's index and count
    QUANTILES = "q"  # the sample's quantiles, as text
    SAMPLE = "s"  # the sample's row count
    PATTERNS = "p"  # pattern counts joined by commas, and the values counted


class HistogramPlan(NamedTuple):
    """An equal-width histogram from query 1's min/max (as numbers: seconds for dates)."""

    lo: float
    hi: float
    bins: int


def keep(x: ir.Column, c: Column, caps: Capabilities) -> ir.BooleanValue:
    """Values that take part in top values and histograms (no NULL, no NaN)."""
    if c.kind == "float" and caps.isnan:
        return x.notnull() & ~x.isnan()
    return x.notnull()


def tag(t: ir.Table, col: int, k: str) -> ir.Table:
    return t.select(
        c=ibis.literal(col, "int64"), k=ibis.literal(k), v=ibis._.v.cast("string"), n=ibis._.n.cast("int64")
    )


def as_profiled(table: ir.Table, cols: list[Column]) -> ir.Table:
    """The table with the columns profiled as text turned to text (query 2 reads it)."""
    if not any(c.text for c in cols):
        return table
    return table.select(**{c.name: c.expr for c in cols})


def sample_of(table: ir.Table, cols: list[Column], fraction: float) -> ir.Table:
    """A seeded Bernoulli sample of the columns query 2 reads.

    Every branch of query 2 reads it, so the database draws it once: DuckDB
    materialises the common table expression (the sample, not the table).
    Not block sampling: it is 10x cheaper to read in DuckDB, but on sorted
    or clustered columns its histograms came out 30-40% off per bin."""
    sample = table.sample(min(1.0, fraction), method="row", seed=0)
    return sample.select(
        **{c.name: portable.as_text(sample, c.name) if c.text else sample[c.name] for c in cols if c.counted}
    )


def counts(source: ir.Table, value: ir.Value, keep: ir.BooleanValue) -> ir.Table:
    # Unwanted values go to a NULL group that the caller drops, rather than
    # being filtered out first: a filtered table shared by two branches
    # becomes a common table expression that DuckDB materialises (a copy of
    # the table per column), and a filter on the group key is pushed below
    # the aggregate, where it evaluates the key expression a second time.
    return source.group_by(v=ibis.ifelse(keep, value, ibis.null(value.type()))).aggregate(n=ibis._.count())


@dataclass(frozen=True)
class TopValues:
    """The branch of a column's top values: its commonest `top_k` values (and the NULL group)."""

    source: ir.Table
    value: ir.Value
    keep: ir.BooleanValue
    col: int
    top_k: int

    def table(self) -> ir.Table:
        return self._of(self.value)

    def as_text(self) -> ir.Table:
        """The same on the values as text: a type that cannot be grouped (json and timetz on
        some backends) can be as text."""
        return self._of(self.value.cast("string"))

    def _of(self, v: ir.Value) -> ir.Table:  # + 1 for the NULL group
        ordered = counts(self.source, v, self.keep).order_by([ibis.desc("n"), "v"]).limit(self.top_k + 1)
        return tag(ordered, self.col, Tag.TOP)


@dataclass
class SecondQuery:
    """Query 2's branches, and the histogram plans its buckets are read by."""

    source: ir.Table  # the table query 2 reads (with the columns profiled as text as text), or its sample
    branches: list[Branch] = field(default_factory=list)
    plans: dict[int, HistogramPlan] = field(default_factory=dict)
    wide_text: ir.Table | None = None  # the rows the many-valued text columns' patterns are matched on


def second_query(scan: Scan, found: Aggregates, source: ir.Table) -> SecondQuery:
    """Branches of query 2 over the table's columns (those profiled as text as text), or over
    `source`, their sample, when sampled."""
    query = SecondQuery(source)
    if scan.sampled:
        size = tag(source.aggregate(v=ibis.null("string"), n=ibis._.count()), TABLE_LEVEL, Tag.SAMPLE)
        query.branches.append(Branch(TABLE_LEVEL, "sample size", size))
    for c in scan.cols:
        if not c.counted:
            if c.kind not in CONTAINER_KINDS:
                c.skip("top values")
            continue
        try:
            # each column's branches read that column only (portable.narrow), but for the
            # sample that every branch shares
            src, x = (source, source[c.name]) if scan.sampled else column_view(scan.table, c)
            kept = keep(x, c, scan.caps)
        except Exception as exc:
            c.fail("top values/histogram", scan.backend, exc)
            continue
        _column_branches(scan, found, query, _Read(c, src, x, kept))
    return query


class _Read(NamedTuple):
    """A column as query 2 reads it: from `source`, as `value`, the values `kept`."""

    col: Column
    source: ir.Table
    value: ir.Value
    kept: ir.BooleanValue


def _column_branches(scan: Scan, found: Aggregates, query: SecondQuery, read: _Read) -> None:
    c, x = read.col, read.value
    figures = found.columns[c.index]
    _top_values(scan, figures, query, read)
    if c.kind in NUMERIC_KINDS + TEMPORAL_KINDS and scan.options.histogram_bins > 0:
        plan = histogram_plan(c, figures, scan.options.histogram_bins)
        if plan is None:
            return
        query.plans[c.index] = plan
        if plan.hi == plan.lo:
            return  # one bin holding everything, no query needed
        e = epoch_of(x, c) if c.kind in TEMPORAL_KINDS else x.cast("float64")
        bucket = ((e.cast("float64") - plan.lo) / ((plan.hi - plan.lo) / plan.bins)).floor().cast("int64")
        bucket = ibis.least(bucket, plan.bins - 1)
        g = counts(read.source, bucket, read.kept)
        query.branches.append(Branch(c.index, "histogram", tag(g, c.index, Tag.BUCKET)))
    if scan.sampled and c.kind in NUMERIC_KINDS + TEMPORAL_KINDS:
        e = epoch_of(x, c) if c.kind in TEMPORAL_KINDS else x
        e = ibis.ifelse(read.kept, e.cast("float64"), ibis.null("float64"))
        q = _sample_quantiles(c, e, scan.caps)
        if q is not None:
            g = read.source.aggregate(v=q.cast("string"), n=e.count())
            query.branches.append(Branch(c.index, "quantiles", tag(g, c.index, Tag.QUANTILES)))
    if scan.approximate and c.kind == "string":
        query.branches.append(Branch(c.index, "pattern counts", _pattern_branch(scan, found, query, read)))


def _top_values(scan: Scan, figures: Figures, query: SecondQuery, read: _Read) -> None:
    c, top_k = read.col, scan.options.top_k
    distinct, valid = figures.distinct_approx, figures.values()
    if top_k > 0 and scan.approximate and distinct is not None and valid > 0 and distinct >= NEAR_UNIQUE * valid:
        # Every value appears about once: the top values would be an
        # arbitrary list with count 1, and cost a hash table of the column.
        c.notes.append(
            f"top values: omitted, the column is nearly unique (~{int(distinct):,} distinct of {int(valid):,} values)"
        )
    elif top_k > 0:
        try:
            top = TopValues(read.source, read.value, read.kept, c.index, top_k)
            rebuilt = None if read.value.type().is_string() else top
            query.branches.append(Branch(c.index, "top values", top.table(), rebuilt))
        except Exception as exc:
            c.fail("top values", scan.backend, exc)


def _pattern_branch(scan: Scan, found: Aggregates, query: SecondQuery, read: _Read) -> ir.Table:
    c, regex = read.col, scan.caps.regex
    distinct = found.columns[c.index].distinct_approx
    if distinct is not None and distinct <= PATTERNS_GROUPED_DISTINCT:
        g = pattern_counts_grouped(read.source, read.value, c, regex)
    else:
        if query.wide_text is None:
            query.wide_text = _pattern_sample(scan, found, query.source)
        g = pattern_counts(query.wide_text, query.wide_text[c.name], c, regex)
    return tag(g, c.index, Tag.PATTERNS)


def _pattern_sample(scan: Scan, found: Aggregates, source: ir.Table) -> ir.Table:
    """The rows whose many-valued text columns get the pattern regexes: those
    cost microseconds per value, so a sample of PATTERN_SAMPLE_ROWS suffices
    for the shares the semantic type needs."""
    rows = min(found.rows, scan.options.sample_rows) if scan.sampled else found.rows
    if rows <= PATTERN_SAMPLE_ROWS or not scan.caps.subsample:
        return source
    names = [
        c.name
        for c in scan.cols
        if c.kind == "string" and (found.columns[c.index].distinct_approx or 0) > PATTERNS_GROUPED_DISTINCT
    ]
    return source.select(*names).sample(PATTERN_SAMPLE_ROWS / rows, method="row", seed=1)


def _sample_quantiles(c: Column, e: ir.FloatingValue, caps: Capabilities) -> ir.ArrayValue | None:
    qs = list(QUANTILES.values())
    if caps.approx_multi_quantile:
        return e.approx_quantile(qs)
    if caps.multi_quantile:
        return e.quantile(qs)
    c.skip("quantiles", "no multi-quantile function on this backend")
    return None


def histogram_plan(c: Column, figures: Figures, bins: int) -> HistogramPlan | None:
    """(lo, hi, bins) for an equal-width histogram, from query 1's min/max."""
    lo, hi = figures.min, figures.max
    if c.kind in TEMPORAL_KINDS:
        lo, hi = epoch_py(lo), epoch_py(hi)
    lo, hi = finite_float(lo), finite_float(hi)
    if lo is None or hi is None:
        return None
    # Fewer bins than distinct whole values would leave empty gaps.
    if c.kind == "integer":
        bins = max(1, min(bins, int(hi - lo) + 1))
    if c.kind == "date":
        bins = max(1, min(bins, int((hi - lo) // 86400) + 1))
    return HistogramPlan(lo, hi, bins)


# --------------------------------------------------------------------------
# the rows read back
# --------------------------------------------------------------------------


@dataclass
class Distributions:
    """Query 2's counts by column index: top values (value, count) and histogram buckets."""

    tops: dict[int, list[tuple[Any, int]]] = field(default_factory=dict)
    buckets: dict[int, dict[int, int]] = field(default_factory=dict)
    sample_total: int | None = None  # the rows of the seeded sample, when sampled


def read_rows(scan: Scan, found: Aggregates, rows: list[UnionRow]) -> Distributions:
    """Sort query 2's rows into top values and buckets; the sample's quantiles and pattern
    counts go to the columns' Figures (the pattern counts scaled to the column's values)."""
    out = Distributions()
    for row in rows:
        ci, k, v, n = int(row.col), row.tag, row.value, int(row.n or 0)
        if v is None and k in (Tag.TOP, Tag.BUCKET):
            continue  # the NULL / NaN group
        if k == Tag.TOP:
            out.tops.setdefault(ci, []).append((v, n))
        elif k == Tag.BUCKET:
            out.buckets.setdefault(ci, {})[int(v)] = n
        elif k == Tag.QUANTILES:
            found.columns[ci].q_sample = float_list(v)
        elif k == Tag.SAMPLE:
            out.sample_total = n
        elif k == Tag.PATTERNS and v is not None:  # n: the column's values in the sample
            _sampled_patterns(scan, found.columns[ci], scan.cols[ci], (v, n))
    return out


def _sampled_patterns(scan: Scan, figures: Figures, c: Column, counted: tuple[str, int]) -> None:
    joined, n = counted
    names = pattern_names(c, scan.caps.regex)
    count = int(figures.count or 0)
    scale = count / n if n else 0.0
    if n != count:
        c.notes.append(
            f"pattern counts: counted on a seeded random sample of {n:,} values, scaled to the column's {count:,} values"
        )
    figures.patterns.update({name: round(int(x) * scale) for name, x in zip(names, joined.split(","))})


def order_tops(dist: Distributions, top_k: int) -> None:
    for ci in dist.tops:  # the database's order does not survive the UNION
        dist.tops[ci] = sorted(dist.tops[ci], key=lambda vn: (-vn[1], str(vn[0])))[:top_k]


def scale_sampled(cols: list[Column], found: Aggregates, dist: Distributions, sample_total: int) -> None:
    """Turn sample counts into estimates for the whole table, and say so."""
    row_count = found.rows
    where = f"a seeded random sample of {sample_total:,} of the {row_count:,} rows"
    factor = row_count / sample_total if sample_total else 0.0
    for c in cols:
        if c.index in dist.tops and max(n for _, n in dist.tops[c.index]) <= 1:
            # HyperLogLog can be 10% off, so some nearly unique columns get
            # here: their "top values" would be arbitrary values seen once.
            del dist.tops[c.index]
            c.notes.append(f"top values: omitted, every value in {where} appears once (nearly unique column)")
        elif c.index in dist.tops:
            dist.tops[c.index] = [(v, round(n * factor)) for v, n in dist.tops[c.index]]
            c.notes.append(f"top values: counted in {where}; counts are scaled estimates")
        if c.index in dist.buckets:
            valid = found.columns[c.index].values()
            dist.buckets[c.index] = apportion(dist.buckets[c.index], int(valid))
            c.notes.append(f"histogram: shape from {where}; counts scaled to the {int(valid):,} values")


def apportion(counts: dict[int, int], total: int) -> dict[int, int]:
    """Scale counts to sum exactly to `total` (largest remainder)."""
    have = sum(counts.values())
    if not have:
        return counts
    exact = {k: n * total / have for k, n in counts.items()}
    out = {k: int(x) for k, x in exact.items()}
    for k in sorted(exact, key=lambda k: exact[k] - out[k], reverse=True)[: total - sum(out.values())]:
        out[k] += 1
    return out


# --------------------------------------------------------------------------
# the column profile's quantiles and histogram
# --------------------------------------------------------------------------


def _clean(v: Any) -> Any:
    return None if v is None or (isinstance(v, float) and v != v) else v


def quantiles(c: Column, figures: Figures) -> dict[str, Any] | None:
    """The column's QUANTILES from whichever query computed them (a note says how)."""
    values = _clean(figures.q_approx)
    if values is not None:
        c.notes.append("quantiles: approximate (t-digest) on this large table")
    elif figures.q_sample is not None:
        values = figures.q_sample
        c.notes.append("quantiles: approximate, estimated on the seeded sample (t-digest)")
    else:
        values = _clean(figures.q)
    if values is None and _clean(figures.q_parts.get(0)) is not None:
        values = [_clean(figures.q_parts.get(j)) for j in range(len(QUANTILES))]
    if values is None:
        return None
    values = [finite_float(v) for v in list(values)]
    if c.kind in TEMPORAL_KINDS:
        values = [from_epoch(v, c) for v in values]
    return dict(zip(QUANTILES, values))


def histogram(c: Column, plan: HistogramPlan, buckets: dict[int, int], nonnull: int) -> Histogram:
    lo, hi, bins = plan
    edges: list[Any]
    if hi == lo:
        edges, counts_ = [lo, hi], [nonnull]
    else:
        width = (hi - lo) / bins
        edges = [lo + j * width for j in range(bins)] + [hi]
        counts_ = [buckets.get(j, 0) for j in range(bins)]
    if c.kind in TEMPORAL_KINDS:
        edges = [from_epoch(e, c) for e in edges]
    elif c.kind == "integer" and all(float(e).is_integer() for e in edges):
        edges = [int(e) for e in edges]
    return Histogram(edges=edges, counts=counts_)
