"""Structural NULLs: where another column says why a column is NULL.

A hurricane's category is NULL exactly when its wind is below hurricane force; two measures
are NULL on every row before the year they began; in a chart, the week columns of an entry
are NULL from the week it left.  Such NULLs are the data's structure, not a defect: the
understanding says so once, and no missing-values issue is opened for them.  And a column
that holds a value whenever another does, but on a few rows, breaks a rule of the data.

Everything is mined in ONE aggregate query per table, from candidates the profile picks and
bounds (never a query per pair):

* for a column X with NULLs and a column Y without (a number or a date): the lowest and highest
  Y where X is NULL and where it is not.  X is NULL exactly when Y < t when every Y of a NULL X
  is below every Y of a present X;
* for a low-cardinality Y (its top values are all its values): the rows of each value, and
  those among them where X is NULL;
* for a column family (core/families.py): for each member, the rows where it is NULL and the
  next member is not (and the other way): none means each NULL set holds the one before;
* for two columns with NULLs: the rows where both are.

Every explanation is exact on every row: one row against it and it is not an explanation.
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass, field
from typing import Any

import ibis
import ibis.expr.types as ir

from cataloger_dagster.core.families import Family, column_families, family_by_member
from cataloger_dagster.core.models import NUMERIC_KINDS, TEMPORAL_KINDS, ColumnProfile, NullPattern, NullPatternKind

MIN_NULLS = 5  # fewer NULL rows than this, and a pattern could be chance
MAX_EXPLAINED = 16  # columns with NULLs whose NULLs are explained
MAX_THRESHOLD_BY = 6  # numbers and dates that may explain them
MAX_CATEGORY_BY = 4  # categories that may explain them
CATEGORY_VALUES = 8  # the most values a category may have
MAX_SET = 3  # the most values an explanation names
MAX_RULE_COLUMNS = 16  # columns with NULLs compared two by two for rules
MIN_RULE_ROWS = 10  # rows where both are NULL: a rule needs that many to stand
RULE_EXCEPTION_SHARE = 0.05  # the rule holds on at least 95% of the rows where Y has a value
RULE_FOLLOWS = 0.5  # and X is NULL on at least half of the rows where Y is NULL,
RULE_LIFT = 10  # ten times as often as where Y has a value: not chance
MAX_AGGREGATES = 800  # the query's width, whatever the table's

_THRESHOLD_KINDS = TEMPORAL_KINDS + NUMERIC_KINDS
_CATEGORY_KINDS = ("string", "boolean", "integer")


@dataclass
class _Plan:
    aggs: dict[str, ir.Scalar] = field(default_factory=dict)
    explained: list[ColumnProfile] = field(default_factory=list)
    thresholds: list[ColumnProfile] = field(default_factory=list)
    categories: list[tuple[ColumnProfile, list[Any]]] = field(default_factory=list)
    families: list[Family] = field(default_factory=list)
    rule_columns: list[ColumnProfile] = field(default_factory=list)

    def room(self, n: int) -> bool:
        return len(self.aggs) + n <= MAX_AGGREGATES


def null_patterns(table: ir.Table, columns: list[ColumnProfile], rows: int) -> list[NullPattern]:
    """What the other columns say of each column's NULLs, in one query (none when nothing is to explain)."""
    plan = _plan(table, columns, rows)
    if not plan.aggs:
        return []
    got = table.aggregate(**plan.aggs).to_pyarrow().to_pylist()[0]
    by_name = {c.name: c for c in columns}
    found = _monotone(plan, got, by_name)
    explained = {name for p in found for name in p.columns}
    for x in plan.explained:
        pattern = _threshold(plan, got, x) or _category(plan, got, x)
        if pattern is not None:
            found.append(pattern)
            explained.add(x.name)
    found = _grouped(found)
    return found + _rules(plan, got, explained, rows)


def _usable(c: ColumnProfile) -> bool:
    # a column read as its text has no comparisons of its own type
    return c.profiled_as_text is None


def _plan(table: ir.Table, columns: list[ColumnProfile], rows: int) -> _Plan:
    plan = _Plan()
    schema = table.schema()
    usable = [c for c in columns if c.name in schema and _usable(c)]
    families = column_families((c.name, c.dtype) for c in usable)
    member = family_by_member(families)
    t = table
    for fam in families:
        nulls = [next(c for c in usable if c.name == n).nulls for n in fam.members]
        if not any(nulls) or len(set(nulls)) == 1 or not plan.room(2 * (len(fam.members) - 1)):
            continue  # no NULL, or the same NULL count in every member: nothing grows
        plan.families.append(fam)
        for i, (a, b) in enumerate(zip(fam.members, fam.members[1:])):
            plan.aggs[f"f{len(plan.families) - 1}_up{i}"] = _rows(t[a].isnull() & t[b].notnull())
            plan.aggs[f"f{len(plan.families) - 1}_down{i}"] = _rows(t[b].isnull() & t[a].notnull())
    plan.explained = [c for c in usable if MIN_NULLS <= c.nulls <= rows - MIN_NULLS and c.name not in member][
        :MAX_EXPLAINED
    ]
    explained = {c.name for c in plan.explained}
    plan.thresholds = sorted(
        (
            c
            for c in usable
            if c.kind in _THRESHOLD_KINDS
            and c.nulls == 0
            and (c.distinct or 0) >= 3
            and c.name not in explained
            and not (c.kind == "integer" and c.distinct == rows)
        ),  # a row number
        key=lambda c: c.kind not in TEMPORAL_KINDS,
    )[:MAX_THRESHOLD_BY]
    plan.categories = [
        (c, [v.value for v in c.top_values])
        for c in usable
        if c.kind in _CATEGORY_KINDS
        and c.top_values
        and not c.distinct_approximate
        and 2 <= (c.distinct or 0) <= CATEGORY_VALUES
        and len(c.top_values) >= (c.distinct or 0)
        and c.name not in explained
    ][:MAX_CATEGORY_BY]
    for xi, x in enumerate(plan.explained):
        missing = t[x.name].isnull()
        for yi, y in enumerate(plan.thresholds):
            if not plan.room(4):
                break
            null, present = _where(missing, t[y.name]), _where(~missing, t[y.name])
            plan.aggs.update(
                {
                    f"x{xi}_t{yi}_nlo": null.min(),
                    f"x{xi}_t{yi}_nhi": null.max(),
                    f"x{xi}_t{yi}_plo": present.min(),
                    f"x{xi}_t{yi}_phi": present.max(),
                }
            )
    for yi, (y, values) in enumerate(plan.categories):
        if not plan.room(len(values) * (1 + len(plan.explained))):
            plan.categories = plan.categories[:yi]
            break
        for vi, value in enumerate(values):
            hit = t[y.name] == ibis.literal(value)
            plan.aggs[f"c{yi}_{vi}"] = _rows(hit)
            for xi, x in enumerate(plan.explained):
                plan.aggs[f"x{xi}_c{yi}_{vi}"] = _rows(hit & t[x.name].isnull())
    plan.rule_columns = [c for c in usable if 0 < c.nulls < rows and c.name not in member][:MAX_RULE_COLUMNS]
    pairs = [
        (a, b)
        for i, a in enumerate(plan.rule_columns)
        for b in plan.rule_columns[i + 1 :]
        if min(a.nulls, b.nulls) >= MIN_RULE_ROWS
    ]
    for first, second in pairs:
        if not plan.room(1):
            break
        plan.aggs[f"r_{_index(plan.rule_columns, first)}_{_index(plan.rule_columns, second)}"] = _rows(
            t[first.name].isnull() & t[second.name].isnull()
        )
    return plan


# CASE inside the aggregate, not an aggregate's FILTER: DuckDB runs hundreds of FILTER clauses
# twenty times slower than the same CASE expressions (a 340-column table, 384 min/max)
def _rows(flag: ir.BooleanValue) -> ir.IntegerScalar:
    """The rows where `flag` holds (0 on none)."""
    return ibis.cases((flag, 1), else_=0).sum()


def _where(flag: ir.BooleanValue, value: ir.Value) -> ir.Value:
    """`value` where `flag` holds, NULL elsewhere (which min() and max() pass over)."""
    return ibis.cases((flag, value), else_=ibis.null(value.type()))


def _index(columns: list[ColumnProfile], c: ColumnProfile) -> int:
    return next(i for i, other in enumerate(columns) if other.name == c.name)


def _monotone(plan: _Plan, got: dict, by_name: dict[str, ColumnProfile]) -> list[NullPattern]:
    found = []
    for fi, fam in enumerate(plan.families):
        steps = range(len(fam.members) - 1)
        nulls = [by_name[n].nulls for n in fam.members]
        for way, grows in (("up", nulls[-1] > nulls[0]), ("down", nulls[0] > nulls[-1])):
            if grows and all(int(got[f"f{fi}_{way}{i}"] or 0) == 0 for i in steps):
                first, last = fam.members[0], fam.members[-1]
                order = "the one before it" if way == "up" else "the one after it"
                found.append(
                    NullPattern(
                        kind="monotone",
                        columns=list(fam.members),
                        value=way,
                        rows=max(nulls),
                        sentence=f"{fam.described()} are one measure over several columns: each is NULL wherever "
                        f"{order} is, from {nulls[0]:,} NULL rows in {first} to {nulls[-1]:,} in {last}.",
                    )
                )
    return found


def _threshold(plan: _Plan, got: dict, x: ColumnProfile) -> NullPattern | None:
    xi = plan.explained.index(x)
    for yi, y in enumerate(plan.thresholds):
        key = f"x{xi}_t{yi}"
        if f"{key}_nlo" not in got:
            break
        nlo, nhi, plo, phi = (got[f"{key}_{s}"] for s in ("nlo", "nhi", "plo", "phi"))
        if None in (nlo, nhi, plo, phi):
            continue
        if nhi < plo:
            return _explained(x, "below", y.name, _plain(plo), f"{y.name} < {_shown(plo)}")
        if nlo > phi:
            return _explained(x, "above", y.name, _plain(phi), f"{y.name} > {_shown(phi)}")
    return None


def _category(plan: _Plan, got: dict, x: ColumnProfile) -> NullPattern | None:
    xi = plan.explained.index(x)
    for yi, (y, values) in enumerate(plan.categories):
        rows = [int(got[f"c{yi}_{vi}"] or 0) for vi in range(len(values))]
        null = [int(got[f"x{xi}_c{yi}_{vi}"] or 0) for vi in range(len(values))]
        among = [v for v, n, m in zip(values, rows, null) if n and m == n]
        if among and sum(n for v, n in zip(values, rows) if v in among) == x.nulls:
            others = [v for v, n in zip(values, rows) if n and v not in among]
            if len(among) <= MAX_SET and (len(among) <= len(others) or y.nulls or len(others) > MAX_SET):
                return _explained(x, "among", y.name, [_plain(v) for v in among], f"{y.name} is {_either(among)}")
            # every value is counted (no NULL in y): the few values where x is present say it shorter
            shown = f"not {_shown(others[0])}" if len(others) == 1 else f"none of {_all(others)}"
            return _explained(x, "not_among", y.name, [_plain(v) for v in others], f"{y.name} is {shown}")
    return None


def _explained(x: ColumnProfile, kind: NullPatternKind, by: str, value: Any, condition: str) -> NullPattern:
    return NullPattern(
        kind=kind,
        columns=[x.name],
        by=by,
        value=value,
        rows=x.nulls,
        sentence=f"{x.name} is NULL exactly when {condition}.",
    )


def _grouped(found: list[NullPattern]) -> list[NullPattern]:
    """Columns explained by one condition are one sentence."""
    out: dict[tuple, NullPattern] = {}
    for p in found:
        key = (p.kind, p.by, repr(p.value)) if p.by else (id(p),)
        if key in out:
            merged = out[key].columns + p.columns
            condition = p.sentence.split(" exactly when ", 1)[1]
            out[key] = out[key].model_copy(
                update={
                    "columns": merged,
                    "rows": max(out[key].rows, p.rows),
                    "sentence": f"{', '.join(merged[:-1])} and {merged[-1]} are NULL exactly when {condition}",
                }
            )
        else:
            out[key] = p
    return list(out.values())


def _rules(plan: _Plan, got: dict, explained: set[str], rows: int) -> list[NullPattern]:
    """X holds a value wherever Y does, but on a few rows: X's NULLs are Y's, bar those."""
    best: dict[str, tuple[int, int, ColumnProfile]] = {}
    cols = plan.rule_columns
    for i, a in enumerate(cols):
        for j in range(i + 1, len(cols)):
            key = f"r_{i}_{j}"
            if key not in got:
                continue
            both = int(got[key] or 0)
            b = cols[j]
            # of the two ways round that hold, the one with fewer exceptions: one pair, one rule
            ways = sorted(
                (
                    (x.nulls - both, x, y)
                    for x, y in ((a, b), (b, a))
                    if x.name not in explained and _rule_holds(x.nulls - both, both, y.nulls, rows)
                ),
                key=lambda w: w[0],
            )
            for exceptions, x, y in ways[:1]:
                if x.name not in best or (exceptions, -both) < (best[x.name][0], -best[x.name][1]):
                    best[x.name] = (exceptions, both, y)
    return [
        NullPattern(
            kind="not_null_when",
            columns=[x],
            by=y.name,
            rows=both,
            exceptions=exceptions,
            sentence=f"{x} holds a value wherever {y.name} does, but on {exceptions:,} "
            f"{'row' if exceptions == 1 else 'rows'}.",
        )
        for x, (exceptions, both, y) in best.items()
    ]


def _rule_holds(exceptions: int, both: int, y_nulls: int, rows: int) -> bool:
    """X holds a value wherever Y does, but on `exceptions` rows: a rule of the data when it holds
    on 95% of the rows where Y has a value, and X's NULLs follow Y's far beyond chance."""
    with_y = rows - y_nulls
    if exceptions < 1 or both < MIN_RULE_ROWS or with_y <= 0:
        return False
    against, follows = exceptions / with_y, both / y_nulls
    return against <= RULE_EXCEPTION_SHARE and follows >= RULE_FOLLOWS and follows >= RULE_LIFT * against


def _plain(v: Any) -> Any:
    """A JSON value: a date as ISO text, a decimal as a number."""
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _shown(v: Any) -> str:
    v = _plain(v)
    return repr(v) if isinstance(v, str) and not _looks_like_date(v) else str(v)


def _looks_like_date(s: str) -> bool:
    try:
        dt.datetime.fromisoformat(s)
        return len(s) >= 10 and s[4] == "-"
    except ValueError:
        return False


def _either(values: list[Any]) -> str:
    return " or ".join(_shown(v) for v in values)


def _all(values: list[Any]) -> str:
    return ", ".join(_shown(v) for v in values)


STRUCTURAL_KINDS = ("below", "above", "among", "not_among", "monotone")


def structural_nulls(patterns: list[NullPattern]) -> dict[str, NullPattern]:
    """The columns whose every NULL another column explains, with the explanation."""
    return {name: p for p in patterns if p.kind in STRUCTURAL_KINDS for name in p.columns}
