"""Figures the backend cannot compute, from its values pulled into an in-process DuckDB:
quantiles where it has no quantile function and regex pattern counts where it has no
regular expressions (SQLite).  The notes say which and on how many rows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import ibis
import ibis.expr.types as ir

from cataloger_dagster.core.profile.aggregates import QUANTILES, Aggregates
from cataloger_dagster.core.profile.kinds import Column
from cataloger_dagster.core.profile.patterns import PATTERN_REGEX, PLAIN_PATTERNS, stacked_patterns
from cataloger_dagster.core.profile.runner import MAX_BRANCHES, Runner, Scan

LOCAL_VALUES = 4_000_000  # values pulled into the in-process DuckDB at most


class _Pulled(NamedTuple):
    """A column's value pulled for an in-process figure, under `key` in the pulled table."""

    key: str
    col: Column
    expr: ir.Value


def _wanted(cols: list[Column]) -> tuple[list[_Pulled], list[_Pulled]]:
    """The values pulled for quantiles and for pattern counts."""
    quantiles = [_Pulled(f"q{c.index}", c, c.local_quantiles) for c in cols if c.local_quantiles is not None]
    texts = [_Pulled(f"p{c.index}", c, c.local_text) for c in cols if c.local_text is not None]
    return quantiles, texts


def local_figures(scan: Scan, found: Aggregates) -> None:
    """Quantiles and regex pattern counts where the backend has no function for them (SQLite
    has no quantiles): the values, all of them or every k-th row, go into an in-process
    DuckDB that computes what the database would have.  The notes say which."""
    table, runner, row_count = scan.table, scan.runner, found.rows
    quantiles, texts = _wanted(scan.cols)
    wanted = sorted(quantiles + texts, key=lambda p: p.col.index)
    if not wanted or row_count == 0:
        return
    step = max(1, math.ceil(row_count * len(wanted) / LOCAL_VALUES))
    pulled = table.select(**{p.key: p.expr for p in wanted})
    if step > 1:  # the backend has no seeded sample (that is why we are here): every k-th row
        pulled = pulled.mutate(_row=ibis.row_number()).filter(ibis._._row % step == 0).drop("_row")
    try:
        runner.queries += 1
        values = pulled.to_pyarrow()
    except Exception as exc:
        for p in quantiles:
            p.col.fail("quantiles", runner.backend_name, exc)
        for p in texts:
            p.col.fail("pattern counts", runner.backend_name, exc)
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
        note = f"quantiles: computed {where}; {runner.backend_name} has no quantile function"
        _local_quantiles(m, quantiles, found, note, runner.backend_name)
        in_process = Runner(m, scan.cols, runner.backend_name)
        for start in range(0, len(texts), MAX_BRANCHES):
            chunk = texts[start : start + MAX_BRANCHES]
            patterns = _PulledPatterns(m, {p.col.index: p.key for p in chunk})
            for c, row in in_process.stacked([p.col for p in chunk], patterns):
                figures = found.columns[c.index]
                scale = 1 if step == 1 else (figures.count or 0) / max(1, int(row["n"] or 0))
                figures.patterns.update({k: round(int(row[k] or 0) * scale) for k in _REGEX})
                c.notes.append(
                    f"pattern counts: matched {where}"
                    + ("" if step == 1 else ", scaled to the column's values")
                    + f"; {runner.backend_name} has no regular expressions"
                )
    finally:
        local.disconnect()


_REGEX = [k for k in PATTERN_REGEX if k not in PLAIN_PATTERNS]


@dataclass(frozen=True)
class _PulledPatterns:
    """The regex pattern counts of some pulled text columns (their keys in `m` by index)."""

    m: ir.Table
    keys: dict[int, str]

    def __call__(self, part: list[Column]) -> ir.Table:
        return stacked_patterns([(c.index, self.m, self.m[self.keys[c.index]]) for c in part], _REGEX)


def _local_quantiles(m: ir.Table, wanted: list[_Pulled], found: Aggregates, note: str, backend: str) -> None:
    """The quantiles of the pulled columns, in one query (one per column on the error path)."""
    if not wanted:
        return
    try:
        _quantiles_of(m, wanted, found, note)
    except Exception:
        for one in wanted:
            try:
                _quantiles_of(m, [one], found, note)
            except Exception as exc:
                one.col.fail("quantiles", backend, exc)


def _quantiles_of(m: ir.Table, part: list[_Pulled], found: Aggregates, note: str) -> None:
    got = m.aggregate(**{p.key: m[p.key].quantile(list(QUANTILES.values())) for p in part}).execute()
    for p in part:
        found.columns[p.col.index].q = got[p.key].iloc[0]
        p.col.notes.append(note)
