"""Guardrails that pin a fact of the table's profile: its rows, each column's NULLs, its keys, the
values of its categories, the range of its numbers, the format of its texts, the rules between
its columns and its freshness."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional, Sequence

import ibis

from cataloger_dagster.core.guardrails import queries as q
from cataloger_dagster.core.guardrails import tolerance
from cataloger_dagster.core.guardrails.model import Guardrail
from cataloger_dagster.core.issues.detectors.context import is_identifier
from cataloger_dagster.core.issues.detectors.labels import FORMATS
from cataloger_dagster.core.models import NUMERIC_KINDS, ColumnProfile, ColumnRule, TableProfile

CATEGORY_MAX = 12  # distinct values a category may have to be pinned to them
CATEGORY_MIN_ROWS = 20  # rows a category needs before its values say what it may hold
RANGE_MIN_ROWS = 20


@dataclass
class Facts:
    """What the pins read: the table (bound or not), its dialect, its profile now and before."""

    table: ibis.Table
    dialect: Optional[str]
    profile: TableProfile
    history: Sequence[TableProfile] = field(default_factory=tuple)

    def earlier(self, column: str) -> list[ColumnProfile]:
        found = []
        for before in self.history:
            match = next((c for c in before.columns if c.name == column), None)
            if match is not None:
                found.append(match)
        return found

    def sql(self, expr: Any) -> str:
        return q.sql(expr, self.dialect)

    def on(self, *columns: Optional[str]) -> "Facts":
        """The same facts over a table of only `columns` (and one other, so that selecting all of
        them is never a `SELECT *` of the real table): the same SQL, compiled in time that does
        not grow with the table's width, which a table of a thousand columns makes quadratic."""
        wanted = [c for c in dict.fromkeys(columns) if c is not None and c in self.table.columns]
        if self.dialect is None or len(wanted) + 1 >= len(self.table.columns):
            return self
        other = next(c for c in self.table.columns if c not in wanted)
        schema = self.table.schema()
        kept = [c for c in self.table.columns if c in wanted or c == other]  # in the table's own order
        op = self.table.op()
        namespace = getattr(op, "namespace", None)
        if namespace is None:  # not a table of the database itself (a query over one): as it is
            return self
        narrow = ibis.table(
            {c: schema[c] for c in kept},
            name=op.name,  # type: ignore[attr-defined]
            catalog=namespace.catalog,
            database=namespace.database,
        )
        return Facts(narrow, self.dialect, self.profile, self.history)

    def keyed(self, condition: Any) -> Optional[str]:
        key = key_column(self.profile)
        return self.sql(q.keys_of(self.table, condition, [key])) if key else None


def key_column(profile: TableProfile) -> Optional[str]:
    """The column that identifies a row: every value distinct and present, named like a key."""
    for cp in profile.columns:
        if _is_key(profile, cp):
            return cp.name
    return None


def _is_key(profile: TableProfile, cp: ColumnProfile) -> bool:
    exact = not cp.distinct_approximate and cp.distinct == profile.row_count
    return exact and cp.nulls == 0 and profile.row_count > 1 and (is_identifier(cp.name) or cp.semantic_type == "uuid")


def row_count(f: Facts) -> Guardrail:
    low, high, said = tolerance.rows_band(f.profile.row_count, [p.row_count for p in f.history])
    return Guardrail(
        name="row_count",
        kind="row_count",
        sql=f.sql(q.row_count(f.table)),
        measure="count",
        low=low,
        high=high,
        why=f"The table held {f.profile.row_count:,} rows; the band is {said}.",
    )


def null_rate(f: Facts, cp: ColumnProfile) -> Guardrail:
    earlier = [c.null_fraction for c in f.earlier(cp.name)]
    never = cp.nulls == 0 and not any(earlier)
    low, high = (0.0, 0.0) if never else tolerance.share_band(cp.null_fraction, earlier)
    why = (
        f"{cp.name} has never been NULL in {len(earlier) + 1} runs."
        if never
        else f"{cp.name} is NULL on {cp.null_fraction:.1%} of the rows; the band is the range over "
        f"{len(earlier) + 1} runs, widened by itself (at least one point)."
    )
    return Guardrail(
        name=f"null_rate:{cp.name}",
        kind="null_rate",
        columns=[cp.name],
        sql=f.sql(q.null_share(f.table, cp.name)),
        measure="share",
        low=None if never or low == 0 else low,
        high=high,
        why=why,
    )


def unique(f: Facts, column: str) -> Guardrail:
    return Guardrail(
        name=f"unique:{column}",
        kind="unique",
        columns=[column],
        sql=f.sql(q.repeated_values(f.table, column)),
        high=0,
        why=f"Every row has its own {column}: it identifies the rows.",
    )


def accepted_values(f: Facts, cp: ColumnProfile) -> Optional[Guardrail]:
    top = cp.top_values or []
    if cp.kind != "string" or cp.count < CATEGORY_MIN_ROWS or not top or len(top) > CATEGORY_MAX:
        return None
    if sum(v.count for v in top) != cp.count or min(v.count for v in top) < 2:
        return None  # values the top list does not hold, or a value seen once: not a closed list
    values = sorted(str(v.value) for v in top)
    condition = q.outside(f.table, cp.name, values)
    return Guardrail(
        name=f"accepted_values:{cp.name}",
        kind="accepted_values",
        columns=[cp.name],
        sql=f.sql(q.breaking_rows(f.table, condition)),
        high=0,
        why=f"{cp.name} holds {len(values)} values, each on several rows: a new one is a new category or a typo.",
        keys_sql=f.keyed(condition),
    )


def value_range(f: Facts, cp: ColumnProfile) -> Optional[Guardrail]:
    if cp.kind not in NUMERIC_KINDS or cp.count < RANGE_MIN_ROWS or cp.profiled_as_text:
        return None
    if not isinstance(cp.min, (int, float)) or not isinstance(cp.max, (int, float)) or cp.min == cp.max:
        return None
    earlier = [
        (c.min, c.max)
        for c in f.earlier(cp.name)
        if isinstance(c.min, (int, float)) and isinstance(c.max, (int, float))
    ]
    low, high = tolerance.widened(float(cp.min), float(cp.max), earlier)
    condition = q.beyond(f.table, cp.name, low, high)
    return Guardrail(
        name=f"range:{cp.name}",
        kind="range",
        columns=[cp.name],
        sql=f.sql(q.breaking_rows(f.table, condition)),
        high=0,
        why=f"{cp.name} ran from {cp.min:g} to {cp.max:g} over {len(earlier) + 1} runs; the bounds are that span widened by a tenth.",
        keys_sql=f.keyed(condition),
    )


def pattern(f: Facts, cp: ColumnProfile) -> Optional[Guardrail]:
    if cp.semantic_type not in FORMATS or cp.kind != "string" or f.dialect == "sqlite":
        return None  # SQLite has no regular expressions of its own
    condition = q.unmatched(FORMATS[cp.semantic_type], f.table, cp.name)
    matched = (cp.pattern_counts or {}).get(cp.semantic_type)
    other = cp.count - matched if matched is not None else 0  # the values of another format now
    return Guardrail(
        name=f"pattern:{cp.name}",
        kind="pattern",
        columns=[cp.name],
        sql=f.sql(q.breaking_rows(f.table, condition)),
        high=tolerance.grown(other),
        why=f"{cp.name} holds {cp.semantic_type} values"
        + (
            f"; {other:,} of another format now, and more is a fault."
            if other
            else ": one of another format is a fault."
        ),
        keys_sql=f.keyed(condition),
    )


def rule(f: Facts, r: ColumnRule) -> Guardrail:
    condition = q.rule_broken(f.table, r)
    return Guardrail(
        name=f"rule:{r.formula}",
        kind="rule",
        columns=r.columns,
        sql=f.sql(q.breaking_rows(f.table, condition)),
        high=0,
        pinned_by="rule",
        why=f"Every row follows {r.formula} (within rounding): a row that breaks it is a fault.",
        keys_sql=f.keyed(condition),
    )


def freshness(f: Facts) -> Optional[Guardrail]:
    """The newest update may be at most twice the longest wait between the updates seen so far."""
    column = f.profile.fingerprint.update_column
    stamps = sorted({_when(p.fingerprint.max_updated) for p in [*f.history, f.profile]} - {None})
    if column is None or len(stamps) < 3:
        return None  # fewer than two waits between updates: no usual wait yet
    waits = [(b - a).total_seconds() for a, b in zip(stamps, stamps[1:])]
    return Guardrail(
        name=f"freshness:{column}",
        kind="freshness",
        columns=[column],
        sql=f.sql(q.newest(f.table, column)),
        measure="seconds",
        high=2 * max(waits),
        why=f"{column} moved on at most every {max(waits) / 3600:.3g} hours over {len(stamps)} updates; "
        "twice that wait without one means the loads stopped.",
    )


def _when(text: Optional[str]) -> Any:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
