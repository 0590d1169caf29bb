"""Rules between columns, found from the data, and the rows that break them.

The profile proposes the rules worth testing (core/issues/rule_candidates.py: totals and their
parts, products and ratios, fixed multiples, orders such as min <= max); ONE aggregate query
counts, for every candidate, the rows where it applies (every column has a value), where it
holds (within the rounding of its columns) and where it says something (no part zero, no
tie).  A rule holds when it holds on MIN_SHARE of the rows it applies to, on MIN_SUPPORT rows
that say something; its exceptions are the finding, one per broken rule (rules broken by the
same number of rows through a shared column are one cause).  Every rule found, broken or not,
is kept as knowledge about the table (`ColumnRule`).

MIN_SUPPORT is 20: below 20 rows one exception is already more than 5%, so a rule with an
exception cannot be told apart from a coincidence; 19 rows of 20 ordered by chance between two
unrelated columns happen about twice in 100,000 tries, and an equality within rounding by
chance on 19 rows never does.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Optional

import ibis

from cataloger_dagster.core.grammar import verb_for
from cataloger_dagster.core.issues import rule_candidates as rc
from cataloger_dagster.core.issues.detectors.context import Context, count, issue, not_nan, one, pct, seeded_sample
from cataloger_dagster.core.models import ColumnRule, IssueModel, TableProfile
from cataloger_dagster.core.text import words

MIN_SUPPORT = 20
MIN_SHARE = 0.95
RELATIVE = 1e-6  # floating-point noise accepted on top of the rounding steps
EXAMPLES = 5
MAX_FINDINGS = 5  # broken rules reported per table (each reads its examples)
RULES_KEY = ("rules", "")
SAMPLE_JUDGES = 1000  # rows of a sample a candidate applies to, for the sample to rule it out
SAMPLE_SLACK = 0.05  # a candidate holding on less than MIN_SHARE less this share of them is out


BIG = 1e300  # |difference| - tolerance <= BIG: a number, neither NULL, NaN (above every number) nor infinite


def _terms(t: ibis.Table, cand: rc.Candidate, steps: dict[str, float]) -> tuple[Any, Any, Any]:
    """(difference, tolerance, says something) of an arithmetic candidate, per row, over `t`
    whose columns are already numbers of float64 (`_numbers`)."""
    c = t[cand.result]
    ops = [t[o] for o in cand.operands]
    half = {name: steps.get(name, 0.0) / 2 for name in cand.columns}
    if cand.kind == "sum":
        total = ops[0]
        for o in ops[1:]:
            total = total + o
        diff = c - total
        tol = sum(half.values()) + RELATIVE * (c.abs() + total.abs())
        return diff, tol, ibis.and_(*(o != 0 for o in ops))
    k = cand.factor
    if cand.kind == "multiple":
        a = ops[0]
        return c - a * k, half[cand.result] + k * half[cand.operands[0]] + RELATIVE * c.abs(), a != 0
    a, b = ops
    ha, hb = half[cand.operands[0]], half[cand.operands[1]]
    tol = half[cand.result] + k * ha * hb + (b.abs() * (k * ha) + a.abs() * (k * hb)) + RELATIVE * c.abs()
    return c - a * b * k, tol, (a != 0) & (b != 0) & (c != a) & (c != b)


def _numbers(t: ibis.Table, cands: list[rc.Candidate]) -> ibis.Table:
    """The candidates' columns, numbers as float64 (cast once for all the aggregates), dates as they are."""
    names = list(dict.fromkeys(c for cand in cands for c in cand.columns))
    return t.select(**{n: t[n].cast("float64") if t[n].type().is_numeric() else t[n] for n in names})


def _order_applies(ctx: Context, t: ibis.Table, cand: rc.Candidate) -> Any:
    conds = []
    for name in cand.columns:
        conds.append(t[name].notnull())
        if t[name].type().is_floating():
            conds.append(not_nan(ctx, t[name]))
    return ibis.and_(*conds)


def _counted(ctx: Context, cands: list[rc.Candidate], steps: list[dict[str, float]]) -> list[dict[str, int]]:
    """`_counts` of every candidate over the table.  A big table's candidates are first counted on
    its seeded sample: only those that may hold there are counted over the table (a rule holding
    on 95% of the rows holds on well over 90% of a sample of thousands)."""
    whole = ctx.table if ctx.whole is None else ctx.whole
    drawn = seeded_sample(ctx)
    if drawn is None:
        return _counts(ctx, whole, cands, steps)
    first = _counts(ctx, drawn[0], cands, steps)
    kept = [i for i, n in enumerate(first) if _may_hold(cands[i], n)]
    exact = _counts(ctx, whole, [cands[i] for i in kept], [steps[i] for i in kept]) if kept else []
    counted = [{"applies": 0, "first": 0, "second": 0} for _ in cands]
    for i, n in zip(kept, exact):
        counted[i] = n
    return counted


def _may_hold(cand: rc.Candidate, n: dict[str, int]) -> bool:
    if n["applies"] < SAMPLE_JUDGES:
        return True  # too few rows of the sample to tell
    holds = n["applies"] - min(n["first"], n["second"]) if cand.kind == "order" else n["first"]
    return holds >= (MIN_SHARE - SAMPLE_SLACK) * n["applies"]


def _counts(
    ctx: Context, table: ibis.Table, cands: list[rc.Candidate], steps: list[dict[str, float]]
) -> list[dict[str, int]]:
    """For every candidate, in one query over `table`: the rows it applies to, then (arithmetic)
    the rows where it holds and where it holds and says something, or (orders) the rows below and
    above.  Each row's distance beyond the tolerance is figured once, in a projection the counts
    read."""
    t = _numbers(table, cands)
    ordered = list(dict.fromkeys(c for cand in cands if cand.kind == "order" for c in cand.columns))
    # the projection's own names never meet a column of the table (a table may have a column d1)
    p = "_rule_"
    while any(c.startswith(p) for c in t.columns):
        p = "_" + p
    beyond: dict[str, Any] = {}
    for i, cand in enumerate(cands):
        if cand.kind != "order":
            diff, tol, telling = _terms(t, cand, steps[i])
            beyond[f"{p}d{i}"], beyond[f"{p}t{i}"] = diff.abs() - tol, telling
    m = t.select(*ordered, **beyond)
    aggs: dict[str, Any] = {}
    for i, cand in enumerate(cands):
        if cand.kind == "order":
            applies = _order_applies(ctx, m, cand)
            x, y = m[cand.result], m[cand.operands[0]]
            aggs[f"a{i}"], aggs[f"h{i}"], aggs[f"n{i}"] = (
                applies.sum(),
                (applies & (x < y)).sum(),
                (applies & (x > y)).sum(),
            )
        else:
            d = m[f"{p}d{i}"]
            # NULL (a column without a value) and NaN pass no comparison with a number
            aggs[f"a{i}"], aggs[f"h{i}"], aggs[f"n{i}"] = (
                (d <= BIG).sum(),
                (d <= 0).sum(),
                ((d <= 0) & m[f"{p}t{i}"]).sum(),
            )
    got = one(m, **aggs)
    return [
        {"applies": int(got[f"a{i}"] or 0), "first": int(got[f"h{i}"] or 0), "second": int(got[f"n{i}"] or 0)}
        for i in range(len(cands))
    ]


def _named(name: str, vocabulary: set[str]) -> bool:
    return bool(set(words(name)) & vocabulary)


def _apart(profile: TableProfile, small: str, large: str) -> bool:
    low, high = profile.column(small).max, profile.column(large).min
    try:
        return low is not None and high is not None and low <= high
    except TypeError:  # values the profile holds as text of another kind: not comparable here
        return False


def _as_rule(
    profile: TableProfile, cand: rc.Candidate, n: dict[str, int], steps: dict[str, float]
) -> Optional[ColumnRule]:
    applies = n["applies"]
    if applies < MIN_SUPPORT:
        return None
    if cand.kind == "order":
        below, above = n["first"], n["second"]
        small, large = (cand.result, cand.operands[0]) if below >= above else (cand.operands[0], cand.result)
        telling, broken = max(below, above), min(below, above)
        holds = applies - broken
        if not broken and _apart(profile, small, large):
            return None  # every value of one is below every value of the other: no rule between rows
        rule = ColumnRule(
            kind="order", formula=f"{small} <= {large}", result=small, operands=[large], holds=holds, applies=applies
        )
    else:
        holds, telling = n["first"], n["second"]
        rule = _arithmetic_rule(cand, holds, applies, steps)
    if telling < MIN_SUPPORT or holds < MIN_SHARE * applies:
        return None
    return rule


def _arithmetic_rule(cand: rc.Candidate, holds: int, applies: int, steps: dict[str, float]) -> ColumnRule:
    used = {c: steps.get(c, 0.0) for c in cand.columns}
    common: dict[str, Any] = dict(holds=holds, applies=applies, steps=used, relative=RELATIVE)
    c, ops = cand.result, list(cand.operands)
    if cand.kind == "sum":
        diffs = [o for o in ops if _named(o, rc.DIFFERENCE_WORDS)]
        if diffs and not _named(c, rc.DIFFERENCE_WORDS):
            d = diffs[0]
            formula = f"{d} = {c} - " + " - ".join(o for o in ops if o != d)
        else:
            formula = f"{c} = " + " + ".join(ops)
        return ColumnRule(kind="sum", formula=formula, result=c, operands=ops, **common)
    k = cand.factor
    if cand.kind == "multiple":
        return ColumnRule(
            kind="multiple", formula=f"{c} = {k:g} * {ops[0]}", result=c, operands=ops, factor=k, **common
        )
    ratio = [o for o in ops if _named(o, rc.RATIO_WORDS)]
    if ratio and not _named(c, rc.RATIO_WORDS):
        # c = k * a * b  <=>  a = (1 / k) * c / b: the ratio column is the derived one
        a = ratio[0]
        b = next(o for o in ops if o != a)
        scale = 1 / k
        shown = f"{scale:g} * " if scale != 1 else ""
        return ColumnRule(
            kind="product",
            formula=f"{a} = {shown}{c} / {b}",
            result=a,
            operands=[c, b],
            factor=scale,
            divides=True,
            **common,
        )
    shown = f"{k:g} * " if k != 1 else ""
    return ColumnRule(
        kind="product", formula=f"{c} = {shown}{ops[0]} * {ops[1]}", result=c, operands=ops, factor=k, **common
    )


def as_candidate(rule: ColumnRule) -> rc.Candidate:
    """The rule in the form it is tested in: a quotient c = k * a / b as a = (1 / k) * c * b."""
    if rule.kind == "product" and rule.divides:
        a, b = rule.operands
        return rc.Candidate("product", a, (rule.result, b), factor=1 / rule.factor)
    return rc.Candidate(rule.kind, rule.result, tuple(rule.operands), factor=rule.factor)


class _AsNumbers:
    """A table's columns as `_terms` reads them (numbers as float64), on the table itself, so that
    the condition built from them filters that table."""

    def __init__(self, table: ibis.Table):
        self._table = table

    def __getitem__(self, name: str) -> Any:
        column = self._table[name]
        return column.cast("float64") if column.type().is_numeric() else column


def breaking(table: ibis.Table, rule: ColumnRule) -> Any:
    """The rows of `table` that break `rule`, as a condition on it: beyond the rule's rounding
    tolerance, or (an order) the smaller column above the larger.  A row without a value in one of
    the rule's columns breaks nothing."""
    cand = as_candidate(rule)
    if cand.kind == "order":
        small, large = table[cand.result], table[cand.operands[0]]
        return small.notnull() & large.notnull() & (small > large)
    diff, tol, _ = _terms(_AsNumbers(table), cand, rule.steps)  # type: ignore[arg-type]
    distance = diff.abs() - tol
    return (distance > 0) & (distance <= BIG)


def _shown(value: Any) -> Any:
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _examples(ctx: Context, rule: ColumnRule) -> list[dict[str, Any]]:
    t = ctx.whole if ctx.whole is not None else ctx.table
    cand = as_candidate(rule)
    if rule.kind != "order":  # an order's values are shown as they are, dates as dates, integers as integers
        t = _numbers(t, [cand])
    if rule.kind == "order":
        broken = _order_applies(ctx, t, cand) & (t[rule.result] > t[rule.operands[0]])
    else:
        diff, tol, _ = _terms(t, cand, rule.steps)
        broken = (diff.abs() > tol) & (diff.abs() <= BIG)
    rows = t.filter(broken).select(*rule.columns).order_by(list(rule.columns)).limit(EXAMPLES)
    return [{k: _shown(v) for k, v in r.items()} for r in rows.to_pyarrow().to_pylist()]


def _computed(rule: ColumnRule, row: dict[str, Any]) -> Optional[float]:
    """What the formula gives for the example row's operands."""
    try:
        xs = [float(row[o]) for o in rule.operands]
    except (TypeError, ValueError):
        return None
    if rule.kind == "sum":
        return sum(xs)
    if rule.kind == "multiple":
        return rule.factor * xs[0]
    if rule.divides:
        return rule.factor * xs[0] / xs[1] if xs[1] else None
    return rule.factor * xs[0] * xs[1]


def _example_text(rule: ColumnRule, row: dict[str, Any]) -> str:
    if rule.kind == "order":
        return f"{rule.result} {row[rule.result]} and {rule.operands[0]} {row[rule.operands[0]]}"
    got = _computed(rule, row)
    ops, k = rule.operands, f"{rule.factor:g} * " if rule.factor != 1 else ""
    rhs = (
        " + ".join(ops)
        if rule.kind == "sum"
        else f"{k}{ops[0]}"
        if rule.kind == "multiple"
        else f"{k}{ops[0]} / {ops[1]}"
        if rule.divides
        else f"{k}{ops[0]} * {ops[1]}"
    )
    return f"{rule.result} is {row[rule.result]:g} where {rhs} gives {got:.6g}" if got is not None else str(row)


def _rule_steps(cand: rc.Candidate, steps: dict[str, float], schema: dict[str, Any]) -> dict[str, float]:
    """The rounding steps of the rule's columns.  The integers of a product or a multiple are
    counts, exact (a quantity of 3 is no 2.5 rounded up); in a sum they may be rounded parts."""
    exact = cand.kind in ("product", "multiple")
    return {
        c: 0.0 if exact and schema[c].is_integer() else steps.get(c, 0.0) for c in cand.columns if cand.kind != "order"
    }


def rule_violations(ctx: Context) -> list[IssueModel]:
    schema = dict((ctx.whole if ctx.whole is not None else ctx.table).schema().items())
    cands = rc.candidates(ctx.profile, schema)
    ctx.cache[RULES_KEY] = []
    if not cands or ctx.rows < MIN_SUPPORT:
        return []
    used = {c for cand in cands for c in cand.columns}
    column_steps = {
        cp.name: rc.rounding_step(cp, schema[cp.name], ctx.profile.sample_rows)
        for cp in ctx.profile.columns
        if cp.name in used
    }
    steps = [_rule_steps(cand, column_steps, schema) for cand in cands]
    found: list[ColumnRule] = []
    seen: set[frozenset] = set()
    for cand, n, own in zip(cands, _counted(ctx, cands, steps), steps):
        rule = _as_rule(ctx.profile, cand, n, own)
        if rule is not None and frozenset(rule.columns) not in seen:
            seen.add(frozenset(rule.columns))
            found.append(rule)
    ctx.cache[RULES_KEY] = found
    broken = sorted((r for r in found if r.holds < r.applies), key=lambda r: (-r.holds / r.applies, r.formula))
    return _findings(ctx, broken)


def _findings(ctx: Context, broken: list[ColumnRule]) -> list[IssueModel]:
    """One finding per broken rule; rules broken on as many rows through a shared column are
    one cause (a wrong total breaks every rule it takes part in)."""
    groups: list[list[ColumnRule]] = []
    for rule in broken:
        home = next(
            (
                g
                for g in groups
                if g[0].applies - g[0].holds == rule.applies - rule.holds and set(g[0].columns) & set(rule.columns)
            ),
            None,
        )
        if home is None:
            groups.append([rule])
        else:
            home.append(rule)
    found: list[IssueModel] = []
    for group in groups[:MAX_FINDINGS]:
        found.append(_finding(ctx, group, named_by_all=any(i.affectedColumns[0] == group[0].result for i in found)))
    return found


def _finding(ctx: Context, group: list[ColumnRule], named_by_all: bool = False) -> IssueModel:
    """The issue of a broken rule (and of the rules its rows break with it), named by its first
    column as every issue is, or by all of them when another broken rule begins with that column."""
    rule, also = group[0], group[1:]
    bad = rule.applies - rule.holds
    examples = _examples(ctx, rule)
    columns = list(dict.fromkeys(c for r in group for c in r.columns))
    shown = f" (for example {_example_text(rule, examples[0])})" if examples else ""
    if rule.kind == "order":
        small, large = rule.result, rule.operands[0]
        broken = f"{count(bad, 'row')} {verb_for(bad, 'has')} {small} above {large}"
        action = (
            f"Check the {count(bad, 'row')} against their source (values swapped between {small} and {large}, "
            f"typos), correct them, then add a CHECK ({small} <= {large})."
        )
    else:
        broken = f"{count(bad, 'row')} {verb_for(bad, 'breaks')} it"
        action = (
            f"Recompute {rule.result} on the {count(bad, 'row')} (or correct the value that was mistyped) "
            f"and make the load derive it, or add a CHECK ({rule.formula})."
        )
    more = f" The same rows break {', '.join(r.formula for r in also)}." if also else ""
    return issue(
        ctx,
        "rule_violations",
        " ".join(columns) if named_by_all else columns[0],
        columns=columns,
        severity="medium",
        category="smart_fixes",
        affectedRows=bad,
        description=f"In {ctx.name}, {rule.formula} holds on {rule.holds:,} of {rule.applies:,} rows "
        f"({pct(rule.holds, rule.applies)}), but {broken}{shown}.{more}",
        suggestedAction=action,
        details={
            "rule": rule.formula,
            **rule.model_dump(exclude={"formula"}),
            "exceptions": bad,
            "support": rule.holds / rule.applies,
            "examples": examples,
            "same_rows": [r.formula for r in also],
        },
    )


def discovered(ctx: Context) -> list[ColumnRule]:
    """The rules the table's rows follow, as the last run of `rule_violations` found them."""
    return list(ctx.cache.get(RULES_KEY, []))
