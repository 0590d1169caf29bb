"""Query 1, the wide aggregate: each column's counts, NULLs, NaN, distinct values,
min/max, mean/std, lengths and quantiles in one query (cut in pieces on wide tables), the
columns whose statistics failed profiled again as their text, and the exact pattern counts
of the text columns of a table below the approximate threshold."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import ibis
import ibis.expr.types as ir

from cataloger_dagster.core import portable
from cataloger_dagster.core.models import NUMERIC_KINDS, TEMPORAL_KINDS
from cataloger_dagster.core.profile.kinds import CONTAINER_KINDS, Column, column_view
from cataloger_dagster.core.profile.patterns import ones, pattern_names, stacked_patterns
from cataloger_dagster.core.profile.runner import (
    MAX_BRANCHES,
    TABLE_LEVEL,
    Capabilities,
    Metric,
    Scan,
)

QUANTILES = {"p05": 0.05, "p25": 0.25, "p50": 0.5, "p75": 0.75, "p95": 0.95}


@dataclass
class Figures:
    """One column's figures as the database returned them (None: not computed)."""

    count: Any = None
    nan: Any = None
    distinct: Any = None
    distinct_approx: Any = None  # HyperLogLog
    true: Any = None
    min: Any = None
    max: Any = None
    mean: Any = None
    std: Any = None
    len_min: Any = None
    len_max: Any = None
    len_mean: Any = None
    q: Any = None  # the QUANTILES in one list, exact
    q_approx: Any = None  # the same by t-digest
    q_parts: dict[int, Any] = field(default_factory=dict)  # one QUANTILES entry a statistic
    q_sample: list[float | None] | None = None  # on the seeded sample (query 2)
    patterns: dict[str, Any] = field(default_factory=dict)  # pattern -> values matching it

    def put(self, stat: str, value: Any) -> None:
        """Keep the value of the metric `stat` (a field's name, or q0..q4 for q_parts)."""
        if stat[:1] == "q" and stat[1:].isdigit():
            self.q_parts[int(stat[1:])] = value
        elif stat in _SCALARS:
            setattr(self, stat, value)
        else:
            raise ValueError(f"no figure of a column is called {stat!r}")

    def values(self) -> int:
        """The non-null values that are not NaN (those top values and histograms count)."""
        return (self.count or 0) - (self.nan or 0)


_SCALARS = {f.name for f in fields(Figures)} - {"q_parts", "q_sample", "patterns"}


@dataclass
class Aggregates:
    """Query 1's results: the row count, SQLite's storage-class counts, each column's Figures."""

    rows: int
    storage: dict[str, Any]  # sc{i}_{class} -> values of that storage class (SQLite only)
    columns: list[Figures]

    def fold(self, results: list[tuple[Metric, Any]]) -> None:
        for metric, value in results:
            if metric.col == TABLE_LEVEL:
                if metric.stat == "rows":
                    self.rows = int(value)
                else:
                    self.storage[metric.stat] = value
            else:
                self.columns[metric.col].put(metric.stat, value)


def first_query(scan: Scan) -> Aggregates:
    """Query 1 over every column (a column whose expressions ibis cannot build is noted)."""
    table, cols = scan.table, scan.cols
    metrics = [Metric(TABLE_LEVEL, "rows", table.count())]
    for c in cols:
        try:
            metrics += column_metrics(c, scan.caps, scan.approximate, sampled=scan.sampled)
        except Exception as exc:  # an expression ibis cannot even build
            c.fail("statistics", scan.backend, exc)
    if scan.backend == "sqlite":
        metrics += [Metric(TABLE_LEVEL, k, e) for k, e in portable.sqlite_storage_metrics(table).items()]
    found = Aggregates(rows=0, storage={}, columns=[Figures() for _ in cols])
    found.fold(scan.runner.aggregate(metrics))
    return found


def epoch_of(x: ir.Column, c: Column) -> ir.NumericValue:
    """Seconds since 1970 of a date or timestamp expression of column `c`."""
    if c.kind == "date":
        return x.epoch_days().cast("int64") * 86400
    return x.epoch_seconds()


def column_metrics(c: Column, caps: Capabilities, approximate: bool, sampled: bool = False) -> list[Metric]:
    """Query 1's statistics of one column.  Left to query 2: text patterns on
    large tables (grouped by value there), quantiles when `sampled`."""
    x, k, i = c.expr, c.kind, c.index
    ms = [Metric(i, "count", x.count())]
    if k == "float" and caps.isnan:
        # NaN as NULL once, rather than a FILTER clause on every aggregate
        x = ibis.ifelse(x.isnan(), ibis.null("float64"), x)
    if k == "float":
        if caps.isnan:
            ms.append(Metric(i, "nan", ones(c.expr.isnan())))
        elif caps.nan_is_null:
            ms.append(Metric(i, "nan", ibis.literal(0, "int64")))
        else:
            c.skip("nan_count", "isnan not available on this backend")
    if k in CONTAINER_KINDS:
        c.skip("distinct/min/max/mean/std/quantiles/histogram" + ("" if k == "json" else "/top values"))
        if k == "nested" and c.dtype.is_array():
            ms += [
                Metric(i, "len_min", x.length().min()),
                Metric(i, "len_max", x.length().max()),
                Metric(i, "len_mean", x.length().mean()),
            ]
        return ms
    if approximate and caps.approx_nunique:
        ms.append(Metric(i, "distinct_approx", x.approx_nunique()))
        c.notes.append("distinct: approximate (HyperLogLog) on this large table")
    else:
        if approximate:
            c.notes.append("distinct: exact (approx_nunique not available on this backend)")
        ms.append(Metric(i, "distinct", x.nunique()))
    if k == "boolean":
        ms.append(Metric(i, "true", ones(x)))
        c.skip("std/quantiles/histogram")
        c.notes.append("mean: fraction of true values")
        return ms
    if k == "interval":  # no portable Python form: the database's own text
        ms += [Metric(i, "min", x.min().cast("string")), Metric(i, "max", x.max().cast("string"))]
    elif k in NUMERIC_KINDS + TEMPORAL_KINDS + ("string", "time"):
        ms += [Metric(i, "min", x.min()), Metric(i, "max", x.max())]
    else:
        c.skip("min/max")
    if k in NUMERIC_KINDS:
        v = x.cast("float64") if k == "decimal" else x
        ms.append(Metric(i, "mean", v.mean()))
        if caps.std:
            ms.append(Metric(i, "std", v.std()))
        else:
            c.skip("std", "not available on this backend")
        if not sampled:
            ms += quantile_metrics(c, v, caps, approximate)
    elif k in TEMPORAL_KINDS:
        c.skip("mean/std")
        if not sampled:
            ms += quantile_metrics(c, epoch_of(c.expr, c).cast("float64"), caps, approximate)
    else:
        c.skip("mean/std/quantiles/histogram")
    if k == "string":
        n = x.length()
        ms += [Metric(i, "len_min", n.min()), Metric(i, "len_max", n.max()), Metric(i, "len_mean", n.mean())]
        if not approximate:
            c.patterns = pattern_names(c, caps.regex)
    return ms


def quantile_metrics(c: Column, v: ir.NumericValue, caps: Capabilities, approximate: bool) -> list[Metric]:
    qs = list(QUANTILES.values())
    if approximate and caps.approx_multi_quantile:
        return [Metric(c.index, "q_approx", v.approx_quantile(qs))]
    if caps.multi_quantile:
        return [Metric(c.index, "q", v.quantile(qs))]
    if caps.quantile:
        return [Metric(c.index, f"q{j}", v.quantile(q)) for j, q in enumerate(qs)]
    c.local_quantiles = v  # no quantile function (SQLite): computed in process
    return []


def reprofile_as_text(scan: Scan, found: Aggregates) -> None:
    """Columns profiled again as their text, in one more query (only when there are some):

    * a column whose statistics failed in query 1: PostgreSQL's money comes as '$1.50' where
      ibis expects a decimal, its enums have no length(), its oid no avg();
    * a SQLite column whose values are of several storage classes (counted in query 1):
      integers, reals, text and blobs in one column are text in effect, so a string column."""
    table, cols, backend = scan.table, scan.cols, scan.backend
    mixed = portable.sqlite_mixed(table, found.storage) if backend == "sqlite" else {}
    redo = {
        c.index: f"{backend} could not compute the statistics of its type ({c.word})"
        for c in cols
        if c.degradations and not c.text
    }
    for c in cols:
        if c.name in mixed:
            c.storage_classes = mixed[c.name]
            redo[c.index] = portable.mixed_reason(c.dtype, mixed[c.name])
    if not redo:
        return
    metrics = []
    for c in (cols[i] for i in redo):
        found.columns[c.index] = Figures()
        c.restart_as_text(table, redo[c.index])
        try:
            metrics += column_metrics(c, scan.caps, scan.approximate, sampled=scan.sampled)
        except Exception as exc:
            c.fail("statistics", backend, exc)
    found.fold(scan.runner.aggregate(metrics))


def exact_patterns(scan: Scan, found: Aggregates) -> None:
    """The pattern counts of the text columns of a table profiled exactly (the approximate
    path counts them on a sample in query 2), MAX_BRANCHES columns a query."""
    table = scan.table
    wanted = [c for c in scan.cols if c.patterns]
    for c in wanted:  # no rows: no group, and every count is 0
        found.columns[c.index].patterns = {p: 0 for p in c.patterns}
    for start in range(0, len(wanted), MAX_BRANCHES):
        for c, row in scan.runner.stacked(wanted[start : start + MAX_BRANCHES], _StackedPatterns(table)):
            found.columns[c.index].patterns.update({p: int(row[p] or 0) for p in c.patterns})


@dataclass(frozen=True)
class _StackedPatterns:
    """The query of the pattern counts of some text columns of `table` (stacked_patterns)."""

    table: ir.Table

    def __call__(self, chunk: list[Column]) -> ir.Table:
        return stacked_patterns([(c.index, *column_view(self.table, c)) for c in chunk], chunk[0].patterns)
