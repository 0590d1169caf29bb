"""table_profile: column statistics pushed down to the database through ibis.

A table costs a fixed number of queries, cut in pieces of bounded width on
wide tables: one wide aggregate (counts, nulls, NaN, distinct, min/max/mean/std,
lengths, quantiles), one for the text patterns (the text columns' values stacked,
so that the pattern expressions are written once, not once per column), one
UNION query (top values and histogram buckets, which need the first query's
min/max, each branch on a view of its one column: portable.narrow), one for
the sample rows, and, when a column has NULLs, one for the NULL patterns
(core/profile/nulls.py).  A column whose
expression a backend cannot compile or run is dropped from that query (the
query is retried without it) and the error is noted on the column; extra
queries are only spent on that error path.

By concern: kinds.py (a column's kind, the column being profiled), patterns.py
(the text patterns and semantic types), runner.py (the backend's capabilities,
the queries sent and their failures isolated), aggregates.py (query 1 and the
exact pattern counts), distributions.py (query 2: top values, histograms, the
sample's quantiles and patterns), local.py (what the backend cannot compute,
computed in process), values.py (JSON-safe values, sample rows), nulls.py; this
module puts them together in a TableProfile.

Size modes (every approximation is noted on the column):

* up to `approx_distinct_above` rows (200,000): everything exact.
* above it: distinct counts by HyperLogLog and quantiles by t-digest;
  top values are skipped for nearly unique columns (approx distinct >= 80%
  of the values: they would all have count 1).
* above `sample_rows` (1,000,000) as well: query 1 keeps what must see every
  row (counts, nulls, NaN, distinct, min/max, mean/std, lengths); quantiles,
  top values, histograms and text-pattern counts are computed in query 2 on
  one seeded Bernoulli sample of about `sample_rows` rows, their counts
  scaled to the table (histograms sum exactly to the column's value count).
  Exact top values and patterns of a 10M-row table cost a hash table per
  column as large as the column and a regex per value; on the sample the
  profile runs in about SUMMARIZE's time and memory (BENCHMARKS.md).

Float statistics ignore NaN: NaN is counted in `nan_count` (and in `count`,
since NaN is not NULL) but excluded from distinct, min/max, mean, std,
quantiles, top values and the histogram.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from typing import Any, Callable

import ibis.expr.types as ir

from cataloger_dagster.core import portable
from cataloger_dagster.core.models import (
    NUMERIC_KINDS,
    TEMPORAL_KINDS,
    ColumnProfile,
    Degradation,
    Fingerprint,
    LengthStats,
    NullPattern,
    TableProfile,
    ValueCount,
)
from cataloger_dagster.core.profile import distributions as dist
from cataloger_dagster.core.profile.aggregates import QUANTILES, Aggregates, Figures, exact_patterns, first_query
from cataloger_dagster.core.profile.aggregates import reprofile_as_text
from cataloger_dagster.core.profile.kinds import Column, column_kind, profiled_columns
from cataloger_dagster.core.profile.local import local_figures
from cataloger_dagster.core.profile.nulls import null_patterns
from cataloger_dagster.core.profile.patterns import PATTERN_REGEX, SENTINELS, semantic_type
from cataloger_dagster.core.profile.runner import ProfileOptions, Runner, Scan, UnionRow, probe_capabilities
from cataloger_dagster.core.profile.values import iso, json_safe, from_text, sample_rows
from cataloger_dagster.core.sensitive import classifier as sensitive
from cataloger_dagster.core.shown import visible
from cataloger_dagster.core.values import finite_float

__all__ = [
    "PATTERN_REGEX",
    "QUANTILES",
    "SENTINELS",
    "ProfileOptions",
    "column_kind",
    "compute_profile",
    "json_safe",
]

log = logging.getLogger(__name__)


def compute_profile(
    table: ir.Table,
    *,
    database: str,
    table_name: str,
    fingerprint: Fingerprint,
    options: ProfileOptions | None = None,
    progress: Callable[[str], None] | None = None,
) -> TableProfile:
    """Profile `table` in a fixed number of queries (see the module docstring)."""
    started = time.perf_counter()
    options = options or ProfileOptions()
    say = progress or (lambda _msg: None)
    backend = table.get_backend()
    backend_name = getattr(backend, "name", type(backend).__module__)
    cols = profiled_columns(table, backend_name)
    runner = Runner(table, cols, backend_name)
    caps = probe_capabilities(table, backend, cols)
    approximate = fingerprint.row_count > options.approx_distinct_above
    # Above `sample_rows`, quantiles, top values, histograms and text patterns
    # come from a seeded sample: on every row they cost a t-digest, a hash
    # table as large as the column and a regex per value, the bulk of the
    # time and memory (BENCHMARKS.md).
    # Without a seeded sample (SQLite) every row is counted: slower, exact.
    sampled = approximate and fingerprint.row_count > options.sample_rows > 0 and caps.sample
    scan = Scan(runner, caps, options, approximate, sampled)

    say(f"{table_name}: aggregates over {len(cols)} columns")
    found = first_query(scan)
    reprofile_as_text(scan, found)
    exact_patterns(scan, found)

    say(f"{table_name}: top values, histograms" + (" and text patterns on a sample" if sampled else ""))
    query, rows = _second_query(scan, found)

    say(f"{table_name}: sample rows")
    # the rows the personal-data classifier looks at come with the sample rows, in their query
    looked = max(options.sample_size, sensitive.SAMPLE_VALUES if options.classify else 0)
    try:
        looked_at = sample_rows(table, cols, looked, runner)
    except Exception as exc:  # noqa: BLE001 - a value further down (a view's failing cast) spoils only the classifier's rows
        if looked == options.sample_size:
            raise
        log.warning(
            "%s: the classifier's %d rows could not be read (%s); it reads the shown rows",
            visible(table_name),
            looked,
            type(exc).__name__,  # not its message: it may quote a value of the table
        )
        looked_at = sample_rows(table, cols, options.sample_size, runner)
    sample = looked_at[: options.sample_size]

    distributions = dist.read_rows(scan, found, rows)
    local_figures(scan, found)
    dist.order_tops(distributions, options.top_k)
    if sampled:
        dist.scale_sampled(cols, found, distributions, distributions.sample_total or options.sample_rows)
    columns = [_finish(c, found, distributions, query.plans) for c in cols]
    if options.classify:
        kinds: dict[str, str] = {c.name: c.kind for c in columns}
        classes = sensitive.classify(sensitive.sample_columns(kinds, looked_at), table_name)
        for profiled in columns:
            profiled.sensitive = classes.get(profiled.name, [])
    say(f"{table_name}: NULL patterns")
    patterns, degradations = _null_patterns(table, columns, found.rows, runner)
    return TableProfile(
        database=database,
        table=table_name,
        row_count=found.rows,
        column_count=len(cols),
        columns=columns,
        sample_rows=sample,
        fingerprint=fingerprint,
        approximate=approximate,
        queries=runner.queries,
        duration_s=round(time.perf_counter() - started, 3),
        profiled_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        degradations=[d for c in cols for d in c.degradations] + degradations,
        null_patterns=patterns,
    )


def _second_query(scan: Scan, found: Aggregates) -> tuple[dist.SecondQuery, list[UnionRow]]:
    """Query 2 on the table, or on its seeded sample when sampled, and its rows."""
    if scan.sampled:
        source = dist.sample_of(scan.table, scan.cols, scan.options.sample_rows / max(found.rows, 1))
    else:
        source = dist.as_profiled(scan.table, scan.cols)
    query = dist.second_query(scan, found, source)
    return query, scan.runner.union(query.branches)


def _null_patterns(
    table: ir.Table, columns: list[ColumnProfile], row_count: int, runner: Runner
) -> tuple[list[NullPattern], list[Degradation]]:
    """The table's structural NULLs (core/profile/nulls.py): one more query, when there are NULLs."""
    if not any(c.nulls for c in columns):
        return [], []
    runner.queries += 1
    try:
        return null_patterns(table, columns, row_count), []
    except Exception as exc:  # the statistics stand without them: every NULL is then judged alone
        log.warning("NULL patterns skipped on %s: %s", runner.backend_name, type(exc).__name__)
        return [], [
            Degradation(
                stage="profile", reason=f"the NULL patterns could not be read ({type(exc).__name__} from the database)"
            )
        ]


def _clean(v: Any) -> Any:
    """A figure, NaN read as not computed."""
    return None if v is None or (isinstance(v, float) and v != v) else v


def _finish(
    c: Column, found: Aggregates, distributions: dist.Distributions, plans: dict[int, dist.HistogramPlan]
) -> ColumnProfile:
    """The column's profile from its figures and distributions."""
    f = found.columns[c.index]
    count = int(_clean(f.count) or 0)
    nulls = found.rows - count if f.count is not None else 0
    p = ColumnProfile(
        name=c.name,
        dtype=_dtype_text(c),
        kind=c.kind,
        nullable=c.dtype.nullable,
        count=count,
        nulls=nulls,
        null_fraction=(nulls / found.rows) if found.rows else 0.0,
        notes=c.notes,
        storage_classes=c.storage_classes,
        profiled_as_text=c.text,
    )
    _summary(c, f, p)
    if c.kind in NUMERIC_KINDS + TEMPORAL_KINDS:
        p.quantiles = dist.quantiles(c, f)
    if _clean(f.len_min) is not None:
        p.length = LengthStats(
            min=int(_clean(f.len_min)), max=int(_clean(f.len_max)), mean=finite_float(_clean(f.len_mean))
        )
    if c.index in distributions.tops:
        p.top_values = [ValueCount(value=from_text(c.kind, v), count=n) for v, n in distributions.tops[c.index]]
    plan, buckets = plans.get(c.index), distributions.buckets.get(c.index)
    if plan is not None and (buckets is not None or plan.lo == plan.hi):
        p.histogram = dist.histogram(c, plan, buckets or {}, count - (p.nan_count or 0))
    if c.kind == "string":
        if f.patterns:
            p.pattern_counts = {name: int(v or 0) for name, v in f.patterns.items()}
        p.semantic_type = semantic_type(p)
    else:
        p.semantic_type = c.kind
    p.notes = list(c.notes)  # the model copied the list; take the late notes too
    return p


def _dtype_text(c: Column) -> str:
    return portable.type_text(c.dtype) if c.dtype.is_unknown() else str(c.dtype)


def _summary(c: Column, f: Figures, p: ColumnProfile) -> None:
    """NaN, distinct, min/max, mean and std, as the column's kind reads them."""
    count = p.count
    if c.kind == "float" and _clean(f.nan) is not None:
        p.nan_count = int(_clean(f.nan))
    if _clean(f.distinct_approx) is not None:
        p.distinct, p.distinct_approximate = int(_clean(f.distinct_approx)), True
    elif _clean(f.distinct) is not None:
        p.distinct = int(_clean(f.distinct))
    if c.kind == "boolean" and _clean(f.true) is not None:
        trues = int(_clean(f.true))
        p.min, p.max = (None, None) if count == 0 else (trues == count, trues > 0)
        p.mean = trues / count if count else None
    if c.kind in TEMPORAL_KINDS:
        p.min, p.max = iso(_clean(f.min), c.kind), iso(_clean(f.max), c.kind)
    elif c.kind != "boolean":
        p.min, p.max = json_safe(_clean(f.min)), json_safe(_clean(f.max))
    if c.kind in NUMERIC_KINDS:
        p.mean = finite_float(_clean(f.mean))
        p.std = finite_float(_clean(f.std))
