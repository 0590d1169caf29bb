"""How the profile's queries reach the database: what the backend can do (`Capabilities`,
probed by compiling, nothing sent), and the `Runner` that sends the queries, counts them,
cuts the very wide ones in pieces and, when one fails, finds the guilty column and statistic
(the rest of the query is kept; the failure becomes a note on the column)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Protocol

import ibis
import ibis.expr.types as ir

from cataloger_dagster.core import portable
from cataloger_dagster.core.profile.kinds import Column, column_view, short

# A very wide table's queries are cut in pieces: PostgreSQL takes at most 1,664 expressions
# in a SELECT and SQLite 500 terms in a UNION, and DuckDB takes minutes to plan a UNION of
# a thousand branches that runs in a second as ten of a hundred.
MAX_AGGREGATES = 1500
MAX_BRANCHES = 100

TABLE_LEVEL = -1  # the column index of a table's own figures (its row count, its sample's size)


@dataclass(frozen=True)
class ProfileOptions:
    """How much a profile computes, and from which size it approximates."""

    approx_distinct_above: int = 200_000  # rows above which distinct counts and quantiles are approximate
    sample_rows: int = 500_000  # rows above which distributions are read on a seeded sample of about as many
    top_k: int = 10
    histogram_bins: int = 20
    sample_size: int = 5  # sample rows shown
    classify: bool = True  # classify each column's personal or secret data (core/sensitive)


@dataclass(frozen=True)
class Capabilities:
    """The optional operations a backend has (each probed by compiling one expression)."""

    multi_quantile: bool = False  # quantile([...]) in one aggregate
    quantile: bool = False  # quantile(q), one at a time
    approx_multi_quantile: bool = False  # t-digest
    approx_nunique: bool = False  # HyperLogLog
    isnan: bool = False
    nan_is_null: bool = False  # a float column cannot hold NaN (SQLite stores NULL, MySQL refuses it)
    regex: bool = False
    std: bool = False
    sample: bool = False  # a seeded sample of the table itself
    subsample: bool = False  # a seeded sample of a derived table


def probe_capabilities(table: ir.Table, backend: Any, cols: list[Column]) -> Capabilities:
    """Probe (compile only, nothing is sent) which optional operations exist."""
    # on one column's view: a probe of a wide table compiles against all of its columns
    num = next((column_view(table, c)[1] for c in cols if c.kind in ("float", "integer")), ibis.literal(1.5))
    txt = next((column_view(table, c)[1] for c in cols if c.kind == "string"), ibis.literal("a"))
    probes: dict[str, Callable[[], ir.Expr]] = {
        "multi_quantile": lambda: num.quantile([0.25, 0.75]),
        "quantile": lambda: num.quantile(0.5),
        "approx_multi_quantile": lambda: num.approx_quantile([0.25, 0.75]),
        "approx_nunique": lambda: num.approx_nunique(),
        "isnan": lambda: num.cast("float64").isnan().sum(),
        "regex": lambda: txt.re_search("^a$").sum(),
        "std": lambda: num.std(),
    }
    found = {name: _compiles(backend, make, as_table=True) for name, make in probes.items()}
    # SQLite stores a NaN as NULL and MySQL cannot store one: a float column there has no NaN
    # to count (and MySQL's compiled isnan() names a function it does not have)
    nan_is_null = getattr(backend, "name", "") in portable.NO_NAN_BACKENDS
    if nan_is_null:
        found["isnan"] = False
    # Seeded samples: of the table itself (PostgreSQL's TABLESAMPLE needs a
    # physical table) and of a derived one (DuckDB).
    first = next(iter(table.columns))
    found["sample"] = _compiles(backend, lambda: table.sample(0.5, method="row", seed=0).select(first))
    found["subsample"] = _compiles(backend, lambda: table.select(first).sample(0.5, method="row", seed=0))
    return Capabilities(nan_is_null=nan_is_null, **found)


def _compiles(backend: Any, make: Callable[[], ir.Expr], as_table: bool = False) -> bool:
    try:
        expr = make()
        return portable.compiles(backend, expr.name("x").as_table() if as_table else expr)
    except Exception:
        return False


class Metric(NamedTuple):
    """One statistic of one column (or of the table, at TABLE_LEVEL) in an aggregate query."""

    col: int
    stat: str
    expr: ir.Scalar

    @property
    def name(self) -> str:
        return f"m{self.col if self.col >= 0 else 'T'}_{self.stat}"


class UnionRow(NamedTuple):
    """A row of a UNION query: column index, what it holds (a Tag), a value and a count."""

    col: int
    tag: str
    value: Any
    n: int | None


class Rebuilt(Protocol):
    """A branch built again on the column's values as text (a type that cannot be grouped)."""

    def as_text(self) -> ir.Table: ...


class Branch(NamedTuple):
    """One branch of a UNION query: a table of columns c, k, v, n."""

    col: int
    stat: str  # what the branch counts, in the words of a note
    table: ir.Table
    rebuilt: Rebuilt | None = None  # tried when the branch fails alone


class Runner:
    """Sends the queries, counts them, and isolates failing columns."""

    def __init__(self, table: ir.Table, cols: list[Column], backend_name: str):
        self.table = table
        self.cols = cols
        self.backend_name = backend_name
        self.queries = 0

    def execute(self, expr: ir.Expr):
        self.queries += 1
        return expr.execute()

    def _note_failure(self, col: int, what: str, exc: BaseException) -> None:
        if col >= 0:
            self.cols[col].fail(what, self.backend_name, exc)
        else:
            raise RuntimeError(f"{what}: failed on {self.backend_name}: {short(exc)}") from exc

    def aggregate(self, metrics: list[Metric]) -> list[tuple[Metric, Any]]:
        """Each metric with its value; a metric that fails is left out and noted on its column."""
        out: list[tuple[Metric, Any]] = []
        for start in range(0, len(metrics), MAX_AGGREGATES):
            out += self._aggregate(metrics[start : start + MAX_AGGREGATES])
        return out

    def _aggregate(self, metrics: list[Metric]) -> list[tuple[Metric, Any]]:
        if not metrics:
            return []
        try:
            return self._agg(metrics)
        except Exception:
            pass
        # Error path: find the guilty columns, then the guilty statistics.
        out: list[tuple[Metric, Any]] = []
        by_col: dict[int, list[Metric]] = {}
        for m in metrics:
            by_col.setdefault(m.col, []).append(m)
        for col, ms in by_col.items():
            try:
                out += self._agg(ms)
                continue
            except Exception as exc:
                if len(ms) == 1:
                    self._note_failure(col, ms[0].stat, exc)
                    continue
            for m in ms:
                try:
                    out += self._agg([m])
                except Exception as exc:
                    self._note_failure(col, m.stat, exc)
        return out

    def _agg(self, metrics: list[Metric]) -> list[tuple[Metric, Any]]:
        expr = self.table.aggregate(**{m.name: m.expr for m in metrics})
        df = self.execute(expr)
        # column by column: a row of the frame would turn integers to floats beside a float
        return [(m, df[m.name].iloc[0]) for m in metrics]

    def stacked(
        self, cols: list[Column], make: Callable[[list[Column]], ir.Table]
    ) -> list[tuple[Column, dict[str, Any]]]:
        """Run `make(cols)`, a query of one row per column (its index in k); on failure, again
        for each column alone, and the column whose query fails gets a note."""
        if not cols:
            return []
        try:
            rows = self.execute(make(cols)).to_dict("records")
        except Exception as exc:
            if len(cols) == 1:
                cols[0].fail("pattern counts", self.backend_name, exc)
                return []
            return [found for c in cols for found in self.stacked([c], make)]
        by_index = {c.index: c for c in cols}
        return [(by_index[int(r["k"])], r) for r in rows]

    def union(self, branches: list[Branch]) -> list[UnionRow]:
        """Run the branches as one UNION ALL query (per MAX_BRANCHES)."""
        rows: list[UnionRow] = []
        for start in range(0, len(branches), MAX_BRANCHES):
            rows += self._union_all(branches[start : start + MAX_BRANCHES])
        return rows

    def _union_all(self, branches: list[Branch]) -> list[UnionRow]:
        if not branches:
            return []
        try:
            return self._union([b.table for b in branches])
        except Exception:
            pass
        rows: list[UnionRow] = []
        for branch in branches:
            rows += self._alone(branch)
        return rows

    def _alone(self, branch: Branch) -> list[UnionRow]:
        """A branch on its own, then, if it fails and can be, rebuilt on the values as text
        (built only here, on the error path)."""
        try:
            return self._union([branch.table])
        except Exception as exc:
            if branch.rebuilt is None:
                if branch.col >= 0:  # table-level branches have a fallback
                    self._note_failure(branch.col, branch.stat, exc)
                return []
        try:
            rows = self._union([branch.rebuilt.as_text()])
        except Exception as exc:
            if branch.col >= 0:
                self._note_failure(branch.col, branch.stat, exc)
            return []
        self.cols[branch.col].notes.append(f"{branch.stat}: counted on the values as text")
        return rows

    def _union(self, tables: list[ir.Table]) -> list[UnionRow]:
        expr = tables[0] if len(tables) == 1 else ibis.union(*tables)
        df = self.execute(expr)
        return [UnionRow(*row) for row in zip(df["c"].tolist(), df["k"].tolist(), df["v"].tolist(), df["n"].tolist())]


@dataclass(frozen=True)
class Scan:
    """What every query of one profile shares: the runner (the table, its columns, the
    backend), what the backend can do, the options, and the size mode they give the table
    (approximate above `approx_distinct_above` rows; `sampled` above `sample_rows` too)."""

    runner: Runner
    caps: Capabilities
    options: ProfileOptions
    approximate: bool
    sampled: bool

    @property
    def table(self) -> ir.Table:
        return self.runner.table

    @property
    def cols(self) -> list[Column]:
        return self.runner.cols

    @property
    def backend(self) -> str:
        return self.runner.backend_name
