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

import base64
import datetime as dt
import logging
import decimal
import math
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import ibis
import ibis.expr.datatypes as dt_
import ibis.expr.types as ir

from cataloger_dagster.core import portable, vocabulary
from cataloger_dagster.core.models import (
    AS_TEXT_NOTE,
    ColumnKind,
    ColumnProfile,
    Degradation,
    Fingerprint,
    Histogram,
    LengthStats,
    NUMERIC_KINDS,
    TEMPORAL_KINDS,
    NullPattern,
    TableProfile,
    ValueCount,
)
from cataloger_dagster.core.profile.nulls import null_patterns
from cataloger_dagster.core.sensitive import classifier as sensitive
from cataloger_dagster.core.values import finite_float

log = logging.getLogger(__name__)

QUANTILES = {"p05": 0.05, "p25": 0.25, "p50": 0.5, "p75": 0.75, "p95": 0.95}

# the values the "sentinel" pattern counts: the commonest placeholders, 'none' and the blank text too
SENTINELS = vocabulary.PROFILED_WORDS

# Full-match regexes, written in the subset shared by RE2 (DuckDB), POSIX ARE
# (PostgreSQL) and Python `re` (ibis's SQLite functions): no lookarounds.
_DATE_RE = (
    r"^([0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"([T ][0-9]{1,2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?"
    r"|[0-9]{4}/[0-9]{1,2}/[0-9]{1,2}"
    r"|[0-9]{1,2}[/.-][0-9]{1,2}[/.-]([0-9]{4}|[0-9]{2})"
    r"|[0-9]{1,2}[ -][A-Za-z]{3,9}[ -][0-9]{2,4}"
    r"|[A-Za-z]{3,9}\.? [0-9]{1,2}, [0-9]{4})$"
)
PATTERN_REGEX = {
    "email": r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$",
    "url": r"^((https?|ftp)://|www\.)[^ ]+$",
    "uuid": r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$",
    "phone": (
        r"^(\+?[0-9]{1,3}[ .-]?)?(\([0-9]{2,4}\)|[0-9]{2,4})[ .-]?[0-9]{3,4}"
        r"([ .-]?[0-9]{2,4})?$"
    ),
    "number": (
        r"^ *[-+]?(([0-9]{1,3}(,[0-9]{3})+|[0-9]+)(\.[0-9]*)?|\.[0-9]+)"
        r"([eE][-+]?[0-9]+)? *$"
    ),
    "date": _DATE_RE,
}
# When several patterns pass the threshold, the more specific one wins;
# plain digit strings are numbers, not phones.
_SEMANTIC_ORDER = ("uuid", "email", "url", "date", "number", "phone")
SEMANTIC_THRESHOLD = 0.8
CATEGORY_MAX_DISTINCT = 50
NEAR_UNIQUE = 0.8  # approx distinct / values above which top values are skipped
PATTERNS_GROUPED_DISTINCT = 20_000
PATTERN_SAMPLE_ROWS = 200_000

_TOP_KINDS = NUMERIC_KINDS + TEMPORAL_KINDS + ("string", "boolean", "time", "uuid", "json", "interval")


def column_kind(dtype: dt_.DataType) -> ColumnKind:
    if dtype.is_boolean():
        return "boolean"
    if dtype.is_integer():
        return "integer"
    if dtype.is_decimal():
        return "decimal"
    if dtype.is_floating():
        return "float"
    if dtype.is_string():
        return "string"
    if dtype.is_timestamp():
        return "timestamp"
    if dtype.is_date():
        return "date"
    if dtype.is_time():
        return "time"
    if dtype.is_uuid():
        return "uuid"
    if dtype.is_binary():
        return "binary"
    if dtype.is_interval():
        return "interval"
    if dtype.is_json():
        return "json"
    if dtype.is_nested():
        return "nested"
    return "other"


def _type_word(dtype: dt_.DataType, kind: str) -> str:
    if kind == "nested":
        return "array" if dtype.is_array() else "struct" if dtype.is_struct() else "map"
    return kind


@dataclass
class _Col:
    index: int
    name: str
    dtype: dt_.DataType
    kind: ColumnKind
    expr: ir.Column
    notes: list[str] = field(default_factory=list)
    text: str | None = None  # why the column is profiled as its text, if it is
    # figures the backend cannot compute, computed in process (_local_figures):
    # "q" -> the value quantiles are taken of, "p" -> the text the patterns are matched on
    local: dict[str, ir.Value] = field(default_factory=dict)
    storage_classes: dict[str, int] | None = None
    degradations: list[Degradation] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)  # counted by _exact_patterns

    @property
    def word(self) -> str:
        return portable.type_text(self.dtype) if self.kind == "other" else _type_word(self.dtype, self.kind)

    @property
    def counted(self) -> bool:
        """Whether its values get top values (and, for numbers and dates, histograms)."""
        return self.kind in _TOP_KINDS or self.text is not None

    def skip(self, stats: str, why: str | None = None) -> None:
        self.notes.append(f"{stats}: {why or f'not defined for {self.word}'}")

    def fail(self, stats: str, backend: str, exc: BaseException) -> None:
        """`stats` could not be computed: a note and a degradation, in words (the backend's
        error text, which may quote values, goes to the debug log only)."""
        log.debug("profile of %r: %s failed: %s", self.name, stats, _short(exc))
        stats = _stat_words(stats)
        reason = f"{stats} could not be computed on {backend} for this {self.word} column"
        if any(d.reason == reason for d in self.degradations):
            return
        self.notes.append(f"{stats}: could not be computed on {backend} for {self.word}")
        self.degradations.append(Degradation(stage="profile", column=self.name, reason=reason))


_STAT_WORDS = {
    "q": "quantiles",
    "pat": "pattern counts",
    "len": "lengths",
    "true": "true count",
    "distinct": "distinct count",
    "nan": "NaN count",
    "count": "non-null count",
}


def _stat_words(stat: str) -> str:
    """A query's statistic as the reader knows it: "q_approx" and "q3" are "quantiles"."""
    head = stat.split("_")[0].rstrip("0123456789")
    return _STAT_WORDS.get(head, stat.replace("_", " "))


@dataclass
class _Metric:
    col: int  # -1 for table-level metrics
    stat: str
    expr: ir.Scalar

    @property
    def name(self) -> str:
        return f"m{self.col if self.col >= 0 else 'T'}_{self.stat}"


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]


# A very wide table's queries are cut in pieces: PostgreSQL takes at most 1,664 expressions
# in a SELECT and SQLite 500 terms in a UNION, and DuckDB takes minutes to plan a UNION of
# a thousand branches that runs in a second as ten of a hundred.
MAX_AGGREGATES = 1500
MAX_BRANCHES = 100


class _Runner:
    """Sends the queries, counts them, and isolates failing columns."""

    def __init__(self, table: ir.Table, cols: list[_Col], backend_name: str):
        self.table = table
        self.cols = cols
        self.backend_name = backend_name
        self.queries = 0

    def _execute(self, expr: ir.Expr):
        self.queries += 1
        return expr.execute()

    def _note_failure(self, col: int, what: str, exc: BaseException) -> None:
        if col >= 0:
            self.cols[col].fail(what, self.backend_name, exc)
        else:
            raise RuntimeError(f"{what}: failed on {self.backend_name}: {_short(exc)}") from exc

    def aggregate(self, metrics: list[_Metric]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for start in range(0, len(metrics), MAX_AGGREGATES):
            out.update(self._aggregate(metrics[start : start + MAX_AGGREGATES]))
        return out

    def _aggregate(self, metrics: list[_Metric]) -> dict[str, Any]:
        if not metrics:
            return {}
        try:
            return self._agg(metrics)
        except Exception:
            pass
        # Error path: find the guilty columns, then the guilty statistics.
        out: dict[str, Any] = {}
        by_col: dict[int, list[_Metric]] = {}
        for m in metrics:
            by_col.setdefault(m.col, []).append(m)
        for col, ms in by_col.items():
            try:
                out.update(self._agg(ms))
                continue
            except Exception as exc:
                if len(ms) == 1:
                    self._note_failure(col, ms[0].stat, exc)
                    continue
            for m in ms:
                try:
                    out.update(self._agg([m]))
                except Exception as exc:
                    self._note_failure(col, m.stat, exc)
        return out

    def _agg(self, metrics: list[_Metric]) -> dict[str, Any]:
        expr = self.table.aggregate(**{m.name: m.expr for m in metrics})
        df = self._execute(expr)
        # column by column: a row of the frame would turn integers to floats beside a float
        return {m.name: df[m.name].iloc[0] for m in metrics}

    def stacked(self, cols: list[_Col], make: Callable[[list[_Col]], ir.Table]) -> list[tuple[_Col, dict]]:
        """Run `make(cols)`, a query of one row per column (its index in k); on failure, again
        for each column alone, and the column whose query fails gets a note."""
        if not cols:
            return []
        try:
            rows = self._execute(make(cols)).to_dict("records")
        except Exception as exc:
            if len(cols) == 1:
                cols[0].fail("pattern counts", self.backend_name, exc)
                return []
            return [found for c in cols for found in self.stacked([c], make)]
        by_index = {c.index: c for c in cols}
        return [(by_index[int(r["k"])], r) for r in rows]

    def union(self, branches: list[tuple]) -> list[tuple[int, str, Any, int]]:
        """Run (col, stat, table[c, k, v, n][, the same on the column's text]) branches as
        one UNION ALL query (per MAX_BRANCHES)."""
        rows: list = []
        for start in range(0, len(branches), MAX_BRANCHES):
            rows += self._union_all(branches[start : start + MAX_BRANCHES])
        return rows

    def _union_all(self, branches: list[tuple]) -> list[tuple[int, str, Any, int]]:
        if not branches:
            return []
        try:
            return self._union([b[2] for b in branches])
        except Exception:
            pass
        rows: list = []
        for col, stat, branch, *as_text in branches:
            # the same on the values as text: built only here, on the error path
            attempts = [lambda branch=branch: branch, *as_text]
            for n, attempt in enumerate(attempts):
                try:
                    rows.extend(self._union([attempt()]))
                    if n:
                        self.cols[col].notes.append(f"{stat}: counted on the values as text")
                    break
                except Exception as exc:
                    if col >= 0 and n == len(attempts) - 1:
                        self._note_failure(col, stat, exc)  # table-level branches have a fallback
        return rows

    def _union(self, tables: list[ir.Table]) -> list:
        expr = tables[0] if len(tables) == 1 else ibis.union(*tables)
        df = self._execute(expr)
        return list(zip(df["c"].tolist(), df["k"].tolist(), df["v"].tolist(), df["n"].tolist()))


def _capabilities(table: ir.Table, backend, cols: list[_Col]) -> dict[str, bool]:
    """Probe (compile only, nothing is sent) which optional operations exist."""
    # on one column's view: a probe of a wide table compiles against all of its columns
    num = next((_column_view(table, c)[1] for c in cols if c.kind in ("float", "integer")), ibis.literal(1.5))
    txt = next((_column_view(table, c)[1] for c in cols if c.kind == "string"), ibis.literal("a"))
    probes = {
        "multi_quantile": lambda: num.quantile([0.25, 0.75]),
        "quantile": lambda: num.quantile(0.5),
        "approx_multi_quantile": lambda: num.approx_quantile([0.25, 0.75]),
        "approx_nunique": lambda: num.approx_nunique(),
        "isnan": lambda: num.cast("float64").isnan().sum(),
        "regex": lambda: txt.re_search("^a$").sum(),
        "std": lambda: num.std(),
    }
    # SQLite stores a NaN as NULL and MySQL cannot store one: a float column there has no NaN
    # to count (and MySQL's compiled isnan() names a function it does not have)
    caps = {"nan_is_null": getattr(backend, "name", "") in portable.NO_NAN_BACKENDS}
    for name, make in probes.items():
        try:
            caps[name] = portable.compiles(backend, make().name("x").as_table())
        except Exception:
            caps[name] = False
    if caps["nan_is_null"]:
        caps["isnan"] = False
    # Seeded samples: of the table itself (PostgreSQL's TABLESAMPLE needs a
    # physical table) and of a derived one (DuckDB).
    first = next(iter(table.columns))
    for name, make in {
        "sample": lambda: table.sample(0.5, method="row", seed=0).select(first),
        "subsample": lambda: table.select(first).sample(0.5, method="row", seed=0),
    }.items():
        try:
            caps[name] = portable.compiles(backend, make())
        except Exception:
            caps[name] = False
    return caps


# --------------------------------------------------------------------------
# query 1: the wide aggregate
# --------------------------------------------------------------------------


def _epoch(c: _Col) -> ir.NumericValue:
    return _epoch_of(c.expr, c)


def _epoch_of(x: ir.Column, c: _Col) -> ir.NumericValue:
    if c.kind == "date":
        return x.epoch_days().cast("int64") * 86400
    return x.epoch_seconds()


_WS = [" ", "\t", "\n", "\r", "\v", "\f"]
_SENTINEL_START = sorted({w[:1] for w in SENTINELS if w} | {w[:1].upper() for w in SENTINELS if w})


def _pattern_exprs(s: ir.StringValue) -> dict[str, ir.BooleanValue]:
    # Cheap guards on the first/last character and the length come first:
    # backends evaluate CASE lazily, so the regexes (and the slow TRIM with a
    # character set) only run on values that could match.  This is most of
    # the speed on big text columns.
    # A guard may let through more values than its regex matches (the regex decides), never
    # fewer.  They are written with = and IN only: a table of 1,000 text columns holds them
    # 1,000 times, and DuckDB plans a range comparison (BETWEEN, <=) or a list of 52 letters
    # a hundred times slower than an equality, which made minutes.
    first, last, n = s.left(1), s.right(1), s.length()
    digit = list("0123456789")
    guards = {
        "email": s.contains("@"),
        "url": s.startswith("http") | s.startswith("ftp") | s.startswith("www."),
        "uuid": n == 36,
        "phone": first.isin(digit + ["+", "("]) & n.isin(range(7, 21)),
        "number": first.isin(digit + ["+", "-", ".", " "]),
        "date": n.isin(range(6, 33)) & (first.isin(digit) | s.contains(", ")),
    }
    exprs = {k: ibis.ifelse(guards[k], s.re_search(rx), False) for k, rx in PATTERN_REGEX.items()}
    edge_ws = first.isin(_WS) | last.isin(_WS)  # a regex here costs a scan per value
    exprs["sentinel"] = ibis.ifelse(
        (n == 0) | (n.isin(range(1, 13)) & first.isin(_SENTINEL_START + _WS)),
        s.strip().lower().isin(list(SENTINELS)),
        False,
    )
    exprs["blank"] = ibis.ifelse(n == 0, True, ibis.ifelse(edge_ws, s.strip() == "", False))
    exprs["padded"] = ibis.ifelse(edge_ws, s.strip() != "", False)
    return exprs


def _column_metrics(c: _Col, caps, approximate: bool, sampled: bool = False) -> list[_Metric]:
    """Query 1's statistics of one column.  Left to query 2: text patterns on
    large tables (grouped by value there), quantiles when `sampled`."""
    x, k, i = c.expr, c.kind, c.index
    ms = [_Metric(i, "count", x.count())]
    if k == "float" and caps["isnan"]:
        # NaN as NULL once, rather than a FILTER clause on every aggregate
        x = ibis.ifelse(x.isnan(), ibis.null("float64"), x)
    if k == "float":
        if caps["isnan"]:
            ms.append(_Metric(i, "nan", _ones(c.expr.isnan())))
        elif caps["nan_is_null"]:
            ms.append(_Metric(i, "nan", ibis.literal(0, "int64")))
        else:
            c.skip("nan_count", "isnan not available on this backend")
    if k in ("nested", "binary", "json"):
        c.skip("distinct/min/max/mean/std/quantiles/histogram" + ("" if k == "json" else "/top values"))
        if k == "nested" and c.dtype.is_array():
            ms += [
                _Metric(i, "len_min", x.length().min()),
                _Metric(i, "len_max", x.length().max()),
                _Metric(i, "len_mean", x.length().mean()),
            ]
        return ms
    if approximate and caps["approx_nunique"]:
        ms.append(_Metric(i, "distinct_approx", x.approx_nunique()))
        c.notes.append("distinct: approximate (HyperLogLog) on this large table")
    else:
        if approximate:
            c.notes.append("distinct: exact (approx_nunique not available on this backend)")
        ms.append(_Metric(i, "distinct", x.nunique()))
    if k == "boolean":
        ms.append(_Metric(i, "true", _ones(x)))
        c.skip("std/quantiles/histogram")
        c.notes.append("mean: fraction of true values")
        return ms
    if k == "interval":  # no portable Python form: the database's own text
        ms += [_Metric(i, "min", x.min().cast("string")), _Metric(i, "max", x.max().cast("string"))]
    elif k in NUMERIC_KINDS + TEMPORAL_KINDS + ("string", "time"):
        ms += [_Metric(i, "min", x.min()), _Metric(i, "max", x.max())]
    else:
        c.skip("min/max")
    if k in NUMERIC_KINDS:
        v = x.cast("float64") if k == "decimal" else x
        ms.append(_Metric(i, "mean", v.mean()))
        if caps["std"]:
            ms.append(_Metric(i, "std", v.std()))
        else:
            c.skip("std", "not available on this backend")
        if not sampled:
            ms += _quantile_metrics(c, v, caps, approximate)
    elif k in TEMPORAL_KINDS:
        c.skip("mean/std")
        if not sampled:
            ms += _quantile_metrics(c, _epoch(c).cast("float64"), caps, approximate)
    else:
        c.skip("mean/std/quantiles/histogram")
    if k == "string":
        n = x.length()
        ms += [_Metric(i, "len_min", n.min()), _Metric(i, "len_max", n.max()), _Metric(i, "len_mean", n.mean())]
        if not approximate:
            c.patterns = _pattern_names(c, caps)
    return ms


def _stacked_patterns(columns: list[tuple[int, ir.Table, ir.StringValue]], names: list[str]) -> ir.Table:
    """The pattern counts of several text columns in one query: their values stacked (a UNION
    ALL of one column each, k telling which) and the pattern expressions written once.  Per
    column they would be written once each: a table of 500 text columns held 4,500 of them,
    whose compiling and planning took most of a minute.  One row per column: k, n (its values)
    and a count per pattern in `names`."""
    parts = [t.select(k=ibis.literal(i, "int64"), s=x) for i, t, x in columns]
    stacked = parts[0] if len(parts) == 1 else ibis.union(*parts)
    exprs = _pattern_exprs(stacked.s)
    return stacked.group_by("k").aggregate(n=stacked.s.count(), **{p: _ones(exprs[p]) for p in names})


def _exact_patterns(table: ir.Table, cols: list[_Col], res: dict, runner: "_Runner") -> None:
    """The pattern counts of the text columns of a table profiled exactly (the approximate
    path counts them on a sample in query 2), MAX_BRANCHES columns a query."""
    wanted = [c for c in cols if c.patterns]
    for c in wanted:  # no rows: no group, and every count is 0
        res.update({f"m{c.index}_pat_{p}": 0 for p in c.patterns})
    for start in range(0, len(wanted), MAX_BRANCHES):
        for c, row in runner.stacked(
            wanted[start : start + MAX_BRANCHES],
            lambda chunk: _stacked_patterns([(c.index, *_column_view(table, c)) for c in chunk], chunk[0].patterns),
        ):
            res.update({f"m{c.index}_pat_{p}": int(row[p] or 0) for p in c.patterns})


def _column_view(table: ir.Table, c: _Col) -> tuple[ir.Table, ir.Value]:
    """The table narrowed to column `c` (portable.narrow), and `c` as profiled on it."""
    view = portable.narrow(table, [c.name])
    return view, portable.as_text(view, c.name) if c.text else view[c.name]


def _ones(flag: ir.BooleanValue) -> ir.IntegerValue:
    """How many rows `flag` holds for.  Not `flag.cast("int64").sum()`: PostgreSQL has no
    cast from boolean to bigint, and that failed every text column's pattern counts."""
    return ibis.ifelse(flag, 1, 0).sum()


def _patterns(c: _Col, x: ir.StringValue, caps, note: bool = True) -> dict[str, ir.BooleanValue]:
    pats = _pattern_exprs(x)
    return {p: pats[p] for p in _pattern_names(c, caps)}


def _pattern_names(c: _Col, caps) -> list[str]:
    """The patterns the backend counts; without regular expressions, the plain ones (and
    the others are matched in process)."""
    if not caps["regex"]:
        c.local["p"] = c.expr
        return list(_PLAIN_PATTERNS)
    return [*PATTERN_REGEX, *_PLAIN_PATTERNS]


def _quantile_metrics(c, v, caps, approximate) -> list[_Metric]:
    qs = list(QUANTILES.values())
    if approximate and caps["approx_multi_quantile"]:
        return [_Metric(c.index, "q_approx", v.approx_quantile(qs))]
    if caps["multi_quantile"]:
        return [_Metric(c.index, "q", v.quantile(qs))]
    if caps["quantile"]:
        return [_Metric(c.index, f"q{j}", v.quantile(q)) for j, q in enumerate(qs)]
    c.local["q"] = v  # no quantile function (SQLite): computed in process
    return []


# --------------------------------------------------------------------------
# figures the backend cannot compute, from its values pulled into DuckDB
# --------------------------------------------------------------------------

LOCAL_VALUES = 4_000_000  # values pulled into the in-process DuckDB at most
_PLAIN_PATTERNS = ("sentinel", "blank", "padded")


def _local_figures(table: ir.Table, cols: list[_Col], res: dict, row_count: int, runner: _Runner) -> None:
    """Quantiles and regex pattern counts where the backend has no function for them (SQLite
    has no quantiles): the values, all of them or every k-th row, go into an in-process
    DuckDB that computes what the database would have.  The notes say which."""
    wanted = {f"{stat}{c.index}": (c, stat, e) for c in cols for stat, e in c.local.items()}
    if not wanted or row_count == 0:
        return
    step = max(1, math.ceil(row_count * len(wanted) / LOCAL_VALUES))
    pulled = table.select(**{k: e for k, (_, _, e) in wanted.items()})
    if step > 1:  # the backend has no seeded sample (that is why we are here): every k-th row
        pulled = pulled.mutate(_row=ibis.row_number()).filter(ibis._._row % step == 0).drop("_row")
    try:
        runner.queries += 1
        values = pulled.to_pyarrow()
    except Exception as exc:
        for c, stat, _ in wanted.values():
            c.fail("quantiles" if stat == "q" else "pattern counts", runner.backend_name, exc)
        return
    where = (
        f"in process (DuckDB) on all {values.num_rows:,} rows"
        if step == 1
        else f"in process (DuckDB) on a systematic sample of every {step:,}th row "
        f"({values.num_rows:,} of {row_count:,})"
    )
    local = ibis.duckdb.connect()
    try:
        m = local.create_table("local_values", values)
        _local_quantiles(
            m,
            [(key, c) for key, (c, stat, _) in wanted.items() if stat == "q"],
            res,
            f"quantiles: computed {where}; {runner.backend_name} has no quantile function",
            runner.backend_name,
        )
        texts = [(key, c) for key, (c, stat, _) in wanted.items() if stat == "p"]
        regex = [k for k in PATTERN_REGEX if k not in _PLAIN_PATTERNS]
        in_process = _Runner(m, cols, runner.backend_name)
        for start in range(0, len(texts), MAX_BRANCHES):
            chunk = dict(texts[start : start + MAX_BRANCHES])
            keys = {c.index: key for key, c in chunk.items()}

            def patterns(part: list[_Col], keys: dict[int, str] = keys) -> ir.Table:
                return _stacked_patterns([(c.index, m, m[keys[c.index]]) for c in part], regex)

            for c, row in in_process.stacked(list(chunk.values()), patterns):
                scale = 1 if step == 1 else (res.get(f"m{c.index}_count") or 0) / max(1, int(row["n"] or 0))
                res.update({f"m{c.index}_pat_{k}": round(int(row[k] or 0) * scale) for k in regex})
                c.notes.append(
                    f"pattern counts: matched {where}"
                    + ("" if step == 1 else ", scaled to the column's values")
                    + f"; {runner.backend_name} has no regular expressions"
                )
    finally:
        local.disconnect()


def _local_quantiles(m: ir.Table, wanted: list[tuple[str, _Col]], res: dict, note: str, backend: str) -> None:
    """The quantiles of the pulled columns, in one query (one per column on the error path)."""

    def run(part: list[tuple[str, _Col]]) -> None:
        got = m.aggregate(**{key: m[key].quantile(list(QUANTILES.values())) for key, _ in part}).execute()
        for key, c in part:
            res[f"m{c.index}_q"] = got[key].iloc[0]
            c.notes.append(note)

    if not wanted:
        return
    try:
        run(wanted)
    except Exception:
        for one in wanted:
            try:
                run([one])
            except Exception as exc:
                one[1].fail("quantiles", backend, exc)


# --------------------------------------------------------------------------
# query 2: top values and histograms in one UNION ALL
# --------------------------------------------------------------------------


def _keep(x: ir.Column, c: _Col, caps) -> ir.BooleanValue:
    """Values that take part in top values and histograms (no NULL, no NaN)."""
    if c.kind == "float" and caps["isnan"]:
        return x.notnull() & ~x.isnan()
    return x.notnull()


def _tag(t: ir.Table, col: int, stat: str) -> ir.Table:
    return t.select(
        c=ibis.literal(col, "int64"), k=ibis.literal(stat), v=ibis._.v.cast("string"), n=ibis._.n.cast("int64")
    )


def _sample_of(table: ir.Table, cols: list[_Col], fraction: float) -> ir.Table:
    """A seeded Bernoulli sample of the columns query 2 reads.

    Every branch of query 2 reads it, so the database draws it once: DuckDB
    materialises the common table expression (the sample, not the table).
    Not block sampling: it is 10x cheaper to read in DuckDB, but on sorted
    or clustered columns its histograms came out 30-40% off per bin."""
    sample = table.sample(min(1.0, fraction), method="row", seed=0)
    return sample.select(
        **{c.name: portable.as_text(sample, c.name) if c.text else sample[c.name] for c in cols if c.counted}
    )


def _counts(source: ir.Table, value: ir.Value, keep: ir.BooleanValue) -> ir.Table:
    # Unwanted values go to a NULL group that the caller drops, rather than
    # being filtered out first: a filtered table shared by two branches
    # becomes a common table expression that DuckDB materialises (a copy of
    # the table per column), and a filter on the group key is pushed below
    # the aggregate, where it evaluates the key expression a second time.
    return source.group_by(v=ibis.ifelse(keep, value, ibis.null(value.type()))).aggregate(n=ibis._.count())


def _second_query(
    table: ir.Table,
    source: ir.Table,
    cols: list[_Col],
    res: dict,
    caps,
    plans: dict,
    *,
    top_k: int,
    bins: int,
    approximate: bool,
    sampled: bool,
    source_rows: int,
    backend: str,
) -> list:
    """Branches of query 2 over `table`'s columns (those profiled as text as text), or over
    `source`, their sample, when `sampled`."""
    branches: list = []
    wide_text = None
    if sampled:
        branches.append((-1, "sample size", _tag(source.aggregate(v=ibis.null("string"), n=ibis._.count()), -1, "s")))
    for c in cols:
        if not c.counted:
            if c.kind not in ("nested", "binary", "json"):
                c.skip("top values")
            continue
        try:
            # each column's branches read that column only (portable.narrow), but for the
            # sample that every branch shares
            src, x = (source, source[c.name]) if sampled else _column_view(table, c)
            keep = _keep(x, c, caps)
        except Exception as exc:
            c.fail("top values/histogram", backend, exc)
            continue
        distinct = res.get(f"m{c.index}_distinct_approx")
        valid = (res.get(f"m{c.index}_count") or 0) - (res.get(f"m{c.index}_nan") or 0)
        if top_k > 0 and approximate and distinct is not None and valid > 0 and distinct >= NEAR_UNIQUE * valid:
            # Every value appears about once: the top values would be an
            # arbitrary list with count 1, and cost a hash table of the column.
            c.notes.append(
                f"top values: omitted, the column is nearly unique "
                f"(~{int(distinct):,} distinct of {int(valid):,} values)"
            )
        elif top_k > 0:
            try:

                def top(v: ir.Value, src=src, keep=keep, c=c) -> ir.Table:  # + 1 for the NULL group
                    return _tag(_counts(src, v, keep).order_by([ibis.desc("n"), "v"]).limit(top_k + 1), c.index, "t")

                # if the type cannot be grouped (json and timetz on some backends), the same on
                # the values as text
                branches.append(
                    (
                        c.index,
                        "top values",
                        top(x),
                        *([] if x.type().is_string() else [lambda x=x, top=top: top(x.cast("string"))]),
                    )
                )
            except Exception as exc:
                c.fail("top values", backend, exc)
        if c.kind in NUMERIC_KINDS + TEMPORAL_KINDS and bins > 0:
            plan = _histogram_plan(c, res, bins)
            if plan is None:
                continue
            lo, hi, nbins = plans[c.index] = plan
            if hi == lo:
                continue  # one bin holding everything, no query needed
            e = _epoch_of(x, c) if c.kind in TEMPORAL_KINDS else x.cast("float64")
            bucket = ((e.cast("float64") - lo) / ((hi - lo) / nbins)).floor().cast("int64")
            bucket = ibis.least(bucket, nbins - 1)
            g = _counts(src, bucket, keep)
            branches.append((c.index, "histogram", _tag(g, c.index, "h")))
        if sampled and c.kind in NUMERIC_KINDS + TEMPORAL_KINDS:
            e = _epoch_of(x, c) if c.kind in TEMPORAL_KINDS else x
            e = ibis.ifelse(keep, e.cast("float64"), ibis.null("float64"))
            q = _sample_quantiles(c, e, caps)
            if q is not None:
                g = src.aggregate(v=q.cast("string"), n=e.count())
                branches.append((c.index, "quantiles", _tag(g, c.index, "q")))
        if approximate and c.kind == "string":
            if distinct is not None and distinct <= PATTERNS_GROUPED_DISTINCT:
                g = _pattern_counts_grouped(src, x, c, caps)
            else:
                if wide_text is None:
                    wide_text = _pattern_sample(source, cols, res, source_rows, caps)
                g = _pattern_counts(wide_text, wide_text[c.name], c, caps)
            branches.append((c.index, "pattern counts", _tag(g, c.index, "p")))
    return branches


def _pattern_sample(source: ir.Table, cols, res, source_rows: int, caps) -> ir.Table:
    """The rows whose many-valued text columns get the pattern regexes: those
    cost microseconds per value, so a sample of PATTERN_SAMPLE_ROWS suffices
    for the shares the semantic type needs."""
    if source_rows <= PATTERN_SAMPLE_ROWS or not caps["subsample"]:
        return source
    names = [
        c.name
        for c in cols
        if c.kind == "string" and (res.get(f"m{c.index}_distinct_approx") or 0) > PATTERNS_GROUPED_DISTINCT
    ]
    return source.select(*names).sample(PATTERN_SAMPLE_ROWS / source_rows, method="row", seed=1)


def _sample_quantiles(c: _Col, e: ir.FloatingValue, caps) -> ir.ArrayValue | None:
    qs = list(QUANTILES.values())
    if caps["approx_multi_quantile"]:
        return e.approx_quantile(qs)
    if caps["multi_quantile"]:
        return e.quantile(qs)
    c.skip("quantiles", "no multi-quantile function on this backend")
    return None


def _pattern_counts_grouped(source: ir.Table, x: ir.StringValue, c: _Col, caps) -> ir.Table:
    """_pattern_counts for few distinct values: the regexes run once per value."""
    g = source.group_by(v=x).aggregate(w=ibis._.count())
    pats = [
        ibis.ifelse(e, g.w, 0).sum().fill_null(0).cast("string") for e in _patterns(c, g.v, caps, note=False).values()
    ]
    return g.aggregate(v=ibis.literal(",").join(pats), n=ibis.ifelse(g.v.notnull(), g.w, 0).sum())


def _pattern_counts(source: ir.Table, x: ir.StringValue, c: _Col, caps) -> ir.Table:
    """One row: v = the pattern counts joined by commas, n = values counted."""
    pats = [_ones(e).fill_null(0).cast("string") for e in _patterns(c, x, caps, note=False).values()]
    return source.aggregate(v=ibis.literal(",").join(pats), n=x.count())


def _scale_sampled(cols, res, tops, hist, row_count: int, sample_total: int) -> None:
    """Turn sample counts into estimates for the whole table, and say so."""
    where = f"a seeded random sample of {sample_total:,} of the {row_count:,} rows"
    factor = row_count / sample_total if sample_total else 0.0
    for c in cols:
        if c.index in tops and max(n for _, n in tops[c.index]) <= 1:
            # HyperLogLog can be 10% off, so some nearly unique columns get
            # here: their "top values" would be arbitrary values seen once.
            del tops[c.index]
            c.notes.append(f"top values: omitted, every value in {where} appears once (nearly unique column)")
        elif c.index in tops:
            tops[c.index] = [(v, round(n * factor)) for v, n in tops[c.index]]
            c.notes.append(f"top values: counted in {where}; counts are scaled estimates")
        if c.index in hist:
            valid = (res.get(f"m{c.index}_count") or 0) - (res.get(f"m{c.index}_nan") or 0)
            hist[c.index] = _apportion(hist[c.index], int(valid))
            c.notes.append(f"histogram: shape from {where}; counts scaled to the {int(valid):,} values")


def _apportion(counts: dict[int, int], total: int) -> dict[int, int]:
    """Scale counts to sum exactly to `total` (largest remainder)."""
    have = sum(counts.values())
    if not have:
        return counts
    exact = {k: n * total / have for k, n in counts.items()}
    out = {k: int(x) for k, x in exact.items()}
    for k in sorted(exact, key=lambda k: exact[k] - out[k], reverse=True)[: total - sum(out.values())]:
        out[k] += 1
    return out


def _histogram_plan(c: _Col, res: dict, bins: int):
    """(lo, hi, bins) for an equal-width histogram, from query 1's min/max."""
    lo, hi = res.get(f"m{c.index}_min"), res.get(f"m{c.index}_max")
    if c.kind in TEMPORAL_KINDS:
        lo, hi = _epoch_py(lo), _epoch_py(hi)
    lo, hi = finite_float(lo), finite_float(hi)
    if lo is None or hi is None:
        return None
    # Fewer bins than distinct whole values would leave empty gaps.
    if c.kind == "integer":
        bins = max(1, min(bins, int(hi - lo) + 1))
    if c.kind == "date":
        bins = max(1, min(bins, int((hi - lo) // 86400) + 1))
    return lo, hi, bins


# --------------------------------------------------------------------------
# JSON-safe values
# --------------------------------------------------------------------------


def json_safe(v: Any) -> Any:
    """Turn a database value into something json.dumps accepts, NaN -> None."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(v, str):
        return v
    if isinstance(v, decimal.Decimal):
        exponent = v.as_tuple().exponent  # a letter for NaN and infinity, which is_finite() sets aside
        return (
            None
            if not v.is_finite()
            else (int(v) if v == v.to_integral_value() and isinstance(exponent, int) and exponent >= 0 else float(v))
        )
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        if hasattr(v, "to_pydatetime") and str(v) == "NaT":
            return None
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return str(v)
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "base64:" + base64.b64encode(bytes(v)).decode()
    if isinstance(v, dict):
        return {str(k): json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [json_safe(x) for x in v]
    if hasattr(v, "tolist"):  # numpy scalars and arrays
        return json_safe(v.tolist())
    if type(v).__name__ in ("NaTType", "NAType"):
        return None
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def _from_text(kind: str, s: Any) -> Any:
    """Top values come back as text (one UNION for all types): restore the type."""
    if s is None:
        return None
    try:
        if kind == "integer":
            return int(s)
        if kind in ("float", "decimal"):
            return json_safe(float(s))
        if kind == "boolean":
            return str(s).lower() in ("true", "1", "t")
        if kind in TEMPORAL_KINDS:
            return _iso(s, kind)
    except (TypeError, ValueError):
        pass
    return str(s)


def _iso(v: Any, kind: str) -> str | None:
    import pandas as pd

    if v is None:
        return None
    ts = pd.Timestamp(v)
    if ts is pd.NaT:
        return None
    return ts.date().isoformat() if kind == "date" else ts.isoformat()


def _float_list(text: str | None) -> list[float | None] | None:
    """A list the database cast to text, e.g. '[1.5, 2.0, NULL]'."""
    if text is None:
        return None
    out: list[float | None] = []
    for part in text.strip("[] ").split(","):
        try:
            out.append(float(part))
        except ValueError:
            out.append(None)
    return out


def _epoch_py(v: Any) -> float | None:
    """Seconds since 1970 of a date or timestamp (naive ones read as UTC, as
    the database's epoch functions do)."""
    import pandas as pd

    if v is None:
        return None
    try:
        ts = pd.Timestamp(v)
    except (TypeError, ValueError):
        return None
    if ts is pd.NaT:
        return None
    return (ts if ts.tzinfo else ts.tz_localize("UTC")).timestamp()


def _from_epoch(seconds: float | None, c: _Col) -> str | None:
    if seconds is None:
        return None
    moment = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=seconds)
    if c.kind == "date":
        return moment.date().isoformat()
    if c.dtype.timezone is None:
        moment = moment.replace(tzinfo=None)
    return moment.isoformat()


# --------------------------------------------------------------------------
# the entry point
# --------------------------------------------------------------------------


def compute_profile(
    table: ir.Table,
    *,
    database: str,
    table_name: str,
    fingerprint: Fingerprint,
    approx_distinct_above: int = 200_000,
    sample_rows: int = 500_000,
    top_k: int = 10,
    histogram_bins: int = 20,
    sample_size: int = 5,
    progress: Callable[[str], None] | None = None,
    classify: bool = True,
) -> TableProfile:
    """Profile `table` in a fixed number of queries (see the module docstring)."""
    started = time.perf_counter()
    say = progress or (lambda _msg: None)
    backend = table.get_backend()
    backend_name = getattr(backend, "name", type(backend).__module__)
    cols = _columns(table, backend_name)
    runner = _Runner(table, cols, backend_name)
    caps = _capabilities(table, backend, cols)
    approximate = fingerprint.row_count > approx_distinct_above
    # Above `sample_rows`, quantiles, top values, histograms and text patterns
    # come from a seeded sample: on every row they cost a t-digest, a hash
    # table as large as the column and a regex per value, the bulk of the
    # time and memory (BENCHMARKS.md).
    # Without a seeded sample (SQLite) every row is counted: slower, exact.
    sampled = approximate and fingerprint.row_count > sample_rows > 0 and caps["sample"]

    say(f"{table_name}: aggregates over {len(cols)} columns")
    metrics = [_Metric(-1, "rows", table.count())]
    for c in cols:
        try:
            metrics += _column_metrics(c, caps, approximate, sampled=sampled)
        except Exception as exc:  # an expression ibis cannot even build
            c.fail("statistics", backend_name, exc)
    if backend_name == "sqlite":
        metrics += [_Metric(-1, k, e) for k, e in portable.sqlite_storage_metrics(table).items()]
    res = runner.aggregate(metrics)
    row_count = int(res["mT_rows"])
    _reprofile_as_text(table, cols, res, runner, caps, approximate, sampled)
    _exact_patterns(table, cols, res, runner)

    say(f"{table_name}: top values, histograms" + (" and text patterns on a sample" if sampled else ""))
    source = _sample_of(table, cols, sample_rows / max(row_count, 1)) if sampled else _as_profiled(table, cols)
    plans: dict[int, tuple] = {}
    branches = _second_query(
        table,
        source,
        cols,
        res,
        caps,
        plans,
        top_k=top_k,
        bins=histogram_bins,
        approximate=approximate,
        sampled=sampled,
        source_rows=min(row_count, sample_rows) if sampled else row_count,
        backend=backend_name,
    )
    rows = runner.union(branches)

    say(f"{table_name}: sample rows")
    # the rows the personal-data classifier looks at come with the sample rows, in their query
    looked_at = _sample(table, cols, max(sample_size, sensitive.SAMPLE_VALUES if classify else 0), runner)
    sample = looked_at[:sample_size]

    tops: dict[int, list] = {}
    hist: dict[int, dict[int, int]] = {}
    sample_total = None
    for ci, k, v, n in rows:
        ci, n = int(ci), int(n or 0)
        if v is None and k in "th":
            continue  # the NULL / NaN group
        if k == "t":
            tops.setdefault(ci, []).append((v, n))
        elif k == "h":
            hist.setdefault(ci, {})[int(v)] = n
        elif k == "q":
            res[f"m{ci}_q_sample"] = _float_list(v)
        elif k == "s":
            sample_total = n
        elif k == "p" and v is not None:  # n: the column's values in the sample
            names = _pattern_names(cols[ci], caps)
            count = int(res.get(f"m{ci}_count") or 0)
            scale = count / n if n else 0.0
            if n != count:
                cols[ci].notes.append(
                    f"pattern counts: counted on a seeded random sample of {n:,} "
                    f"values, scaled to the column's {count:,} values"
                )
            res.update({f"m{ci}_pat_{name}": round(int(x) * scale) for name, x in zip(names, v.split(","))})
    _local_figures(table, cols, res, row_count, runner)
    for ci in tops:  # the database's order does not survive the UNION
        tops[ci] = sorted(tops[ci], key=lambda vn: (-vn[1], str(vn[0])))[:top_k]
    if sampled:
        _scale_sampled(cols, res, tops, hist, row_count, sample_total or sample_rows)
    pats: dict[int, dict[str, int]] = {}  # one pass: a lookup per column would be quadratic
    for key, v in res.items():
        index, sep, name = key[1:].partition("_pat_")
        if sep and index.isdigit():
            pats.setdefault(int(index), {})[name] = int(v or 0)
    columns = [_finish(c, res, row_count, approximate, tops, hist, plans, pats.get(c.index)) for c in cols]
    if classify:
        found = sensitive.classify(sensitive.sample_columns({c.name: c.kind for c in columns}, looked_at), table_name)
        for profiled in columns:
            profiled.sensitive = found.get(profiled.name, [])
    say(f"{table_name}: NULL patterns")
    patterns, degradations = _null_patterns(table, columns, row_count, runner, backend_name)
    return TableProfile(
        database=database,
        table=table_name,
        row_count=row_count,
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


def _null_patterns(
    table: ir.Table, columns: list[ColumnProfile], row_count: int, runner: "_Runner", backend: str
) -> tuple[list[NullPattern], list[Degradation]]:
    """The table's structural NULLs (core/profile/nulls.py): one more query, when there are NULLs."""
    if not any(c.nulls for c in columns):
        return [], []
    runner.queries += 1
    try:
        return null_patterns(table, columns, row_count), []
    except Exception as exc:  # the statistics stand without them: every NULL is then judged alone
        log.warning("NULL patterns skipped on %s: %s", backend, type(exc).__name__)
        return [], [
            Degradation(
                stage="profile", reason=f"the NULL patterns could not be read ({type(exc).__name__} from the database)"
            )
        ]


def _columns(table: ir.Table, backend_name: str) -> list[_Col]:
    """The columns to profile.  A type the backend's functions and Arrow do not take is
    profiled as its text (counts, distinct values, top values); see also _reprofile_as_text."""
    cols = []
    for i, (name, dtype) in enumerate(table.schema().items()):
        c = _Col(i, name, dtype, column_kind(dtype), table[name])
        if c.kind == "other" and (why := portable.text_reason(dtype, backend_name)):
            c.text = why
        if c.text:
            c.expr = portable.as_text(table, name)
            c.notes.append(f"{AS_TEXT_NOTE}{c.text}")
        cols.append(c)
    return cols


def _reprofile_as_text(table, cols, res, runner, caps, approximate, sampled) -> None:
    """Columns profiled again as their text, in one more query (only when there are some):

    * a column whose statistics failed in query 1: PostgreSQL's money comes as '$1.50' where
      ibis expects a decimal, its enums have no length(), its oid no avg();
    * a SQLite column whose values are of several storage classes (counted in query 1):
      integers, reals, text and blobs in one column are text in effect, so a string column."""
    mixed = (
        portable.sqlite_mixed(table, {k[len("mT_") :]: v for k, v in res.items() if k.startswith("mT_sc")})
        if runner.backend_name == "sqlite"
        else {}
    )
    redo = {
        c.index: f"{runner.backend_name} could not compute the statistics of its type ({c.word})"
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
        for key in [k for k in res if k.startswith(f"m{c.index}_")]:
            del res[key]
        c.text = redo[c.index]
        c.kind = "string" if c.kind == "string" or c.storage_classes else "other"
        c.expr, c.degradations, c.local, c.patterns = portable.as_text(table, c.name), [], {}, []
        c.notes = [f"{AS_TEXT_NOTE}{c.text}"]
        try:
            metrics += _column_metrics(c, caps, approximate, sampled=sampled)
        except Exception as exc:
            c.fail("statistics", runner.backend_name, exc)
    res.update(runner.aggregate(metrics))


def _as_profiled(table: ir.Table, cols: list[_Col]) -> ir.Table:
    """The table with the columns profiled as text turned to text (query 2 reads it)."""
    if not any(c.text for c in cols):
        return table
    return table.select(**{c.name: c.expr for c in cols})


def _sample(table: ir.Table, cols: list[_Col], size: int, runner: _Runner) -> list[dict[str, Any]]:
    if size <= 0:
        return []
    runner.queries += 1
    known = {c.name: c.text for c in cols if c.storage_classes and c.text is not None}
    data, reasons = portable.read_arrow(table, limit=size, known=known)
    for c in cols:
        why = reasons.get(c.name)
        if why == portable.LEFT_OUT:
            c.degradations.append(Degradation(stage="profile", column=c.name, reason=f"sample rows: {why}"))
            c.notes.append(f"sample rows: {why}")
        elif why and not c.text:
            c.notes.append(f"sample rows: shown as text, {why}")
    rows = data.to_pylist()
    text = {name for name, why in reasons.items() if why}
    maps = {name for name, dtype in table.schema().items() if dtype.is_map() and name not in text}
    for r in rows:
        for name in maps:  # Arrow gives maps as (key, value) pairs
            if isinstance(r[name], list):
                r[name] = {str(k): v for k, v in r[name]}
    return [{k: json_safe(v) for k, v in r.items()} for r in rows]


def _finish(c: _Col, res, row_count, approximate, tops, hist, plans, pats) -> ColumnProfile:
    def get(stat):
        v = res.get(f"m{c.index}_{stat}")
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    count = int(get("count") or 0)
    nulls = row_count - count if f"m{c.index}_count" in res else 0
    p = ColumnProfile(
        name=c.name,
        dtype=portable.type_text(c.dtype) if c.dtype.is_unknown() else str(c.dtype),
        kind=c.kind,
        nullable=c.dtype.nullable,
        count=count,
        nulls=nulls,
        null_fraction=(nulls / row_count) if row_count else 0.0,
        notes=c.notes,
        storage_classes=c.storage_classes,
        profiled_as_text=c.text,
    )
    if c.kind == "float" and get("nan") is not None:
        p.nan_count = int(get("nan"))
    if get("distinct_approx") is not None:
        p.distinct, p.distinct_approximate = int(get("distinct_approx")), True
    elif get("distinct") is not None:
        p.distinct = int(get("distinct"))
    if c.kind == "boolean" and get("true") is not None:
        trues = int(get("true"))
        p.min, p.max = (None, None) if count == 0 else (trues == count, trues > 0)
        p.mean = trues / count if count else None
    if c.kind in TEMPORAL_KINDS:
        p.min, p.max = _iso(get("min"), c.kind), _iso(get("max"), c.kind)
    elif c.kind != "boolean":
        p.min, p.max = json_safe(get("min")), json_safe(get("max"))
    if c.kind in NUMERIC_KINDS:
        p.mean = finite_float(get("mean"))
        p.std = finite_float(get("std"))
    if c.kind in NUMERIC_KINDS + TEMPORAL_KINDS:
        p.quantiles = _quantiles(c, get, approximate)
    if get("len_min") is not None:
        p.length = LengthStats(min=int(get("len_min")), max=int(get("len_max")), mean=finite_float(get("len_mean")))
    if c.index in tops:
        p.top_values = [ValueCount(value=_from_text(c.kind, v), count=n) for v, n in tops[c.index]]
    if c.index in plans and (c.index in hist or plans[c.index][0] == plans[c.index][1]):
        p.histogram = _histogram(c, plans[c.index], hist.get(c.index, {}), count - (p.nan_count or 0))
    if c.kind == "string":
        if pats:
            p.pattern_counts = pats
        p.semantic_type = _semantic(p)
    else:
        p.semantic_type = c.kind
    p.notes = list(c.notes)  # the model copied the list; take the late notes too
    return p


def _quantiles(c: _Col, get, approximate) -> dict[str, Any] | None:
    values = get("q_approx")
    if values is not None:
        c.notes.append("quantiles: approximate (t-digest) on this large table")
    elif get("q_sample") is not None:
        values = get("q_sample")
        c.notes.append("quantiles: approximate, estimated on the seeded sample (t-digest)")
    else:
        values = get("q")
    if values is None and get("q0") is not None:
        values = [get(f"q{j}") for j in range(len(QUANTILES))]
    if values is None:
        return None
    values = [finite_float(v) for v in list(values)]
    if c.kind in TEMPORAL_KINDS:
        values = [_from_epoch(v, c) for v in values]
    return dict(zip(QUANTILES, values))


def _histogram(c: _Col, plan, buckets: dict[int, int], nonnull: int) -> Histogram:
    lo, hi, bins = plan
    if hi == lo:
        edges, counts = [lo, hi], [nonnull]
    else:
        width = (hi - lo) / bins
        edges = [lo + j * width for j in range(bins)] + [hi]
        counts = [buckets.get(j, 0) for j in range(bins)]
    if c.kind in TEMPORAL_KINDS:
        edges = [_from_epoch(e, c) for e in edges]
    elif c.kind == "integer" and all(float(e).is_integer() for e in edges):
        edges = [int(e) for e in edges]
    return Histogram(edges=edges, counts=counts)


def _semantic(p: ColumnProfile) -> str:
    pats = p.pattern_counts or {}
    base = p.count - pats.get("sentinel", 0)
    if base > 0:
        for name in _SEMANTIC_ORDER:
            if pats.get(name, 0) >= SEMANTIC_THRESHOLD * base:
                return name
    if p.distinct is not None and p.count and p.distinct <= CATEGORY_MAX_DISTINCT and p.distinct <= 0.5 * p.count:
        return "category"
    return "text"
