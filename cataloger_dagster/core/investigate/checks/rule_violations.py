"""The check of rule_violations issues: a rule between the values of columns (a sum, a product, a
multiple, an order) or between their NULLs (kind "not_null_when")."""

from typing import TYPE_CHECKING

import ibis
from cataloger_dagster.core.investigate.checks.helpers import count, outcome, share

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import HOLDS_NAN, rows_of, t


# --- the block sent to the sandbox starts here ---
def not_null_rule(hypothesis, rule, result, operands):
    """The NULL rule (kind "not_null_when"): `result` holds a value wherever its one operand does."""
    x, y = t[result], t[operands[0]]
    # the rows where the operand has a value: there the result must have one too
    stats = (
        t.aggregate(
            applies=y.notnull().sum(),
            broken=(y.notnull() & x.isnull()).sum(),
            y_null=y.isnull().sum(),
            both_null=(y.isnull() & x.isnull()).sum(),
        )
        .to_pyarrow()
        .to_pylist()[0]
    )
    applied, broken, y_null, both = (int(stats[k] or 0) for k in ("applies", "broken", "y_null", "both_null"))
    holds = applied - broken
    examples = rows_of(t.filter(y.notnull() & x.isnull()).select(result, operands[0]))
    evidence = dict(
        rule=rule,
        applies=applied,
        holds=holds,
        exceptions=broken,
        null_together=both,
        operand_null=y_null,
        examples=examples,
    )
    if not applied:
        return outcome(hypothesis, "inconclusive", f"{operands[0]} holds no value on any row", 0, **evidence)
    if not broken:
        return outcome(
            hypothesis,
            "refuted",
            f"{result} holds a value on every one of the {count(applied, 'row')} where {operands[0]} does",
            0,
            **evidence,
        )
    if holds < 0.95 * applied:
        return outcome(
            hypothesis,
            "refuted",
            f"{rule} holds on only {share(holds, applied)} of the rows where "
            f"{operands[0]} has a value: it is no rule of this table",
            broken,
            **evidence,
        )
    # a rule of the data, not chance: where the operand is NULL, the result mostly is too
    if both < 0.5 * y_null:
        return outcome(
            hypothesis,
            "refuted",
            f"{result} is NULL on only {share(both, y_null)} of the rows where "
            f"{operands[0]} is: its NULLs do not follow {operands[0]}'s, so those few are no exceptions "
            "to a rule",
            broken,
            **evidence,
        )
    return outcome(
        hypothesis,
        "confirmed",
        f"{rule} holds on {share(holds, applied)} of the rows where "
        f"{operands[0]} has a value, and {result} is NULL on {share(both, y_null)} of those where it "
        f"has none; {count(broken, 'row')} break it",
        broken,
        **evidence,
    )


def check_rule_violations(rule, kind, result, operands, factor, divides, steps, relative):
    hypothesis = f"{rule} holds on nearly every row of the table, and the rows breaking it are errors"
    if kind == "not_null_when":
        return not_null_rule(hypothesis, rule, result, operands)
    columns = [result, *operands]
    if kind == "order":
        x, y = t[result], t[operands[0]]
        applies = ibis.and_(
            *(t[c].notnull() for c in columns),
            *(~t[c].isnan() for c in columns if HOLDS_NAN and t.schema()[c].is_floating()),
        )
        stats = t.aggregate(applies=applies.sum(), broken=(applies & (x > y)).sum()).to_pyarrow().to_pylist()[0]
        applied, broken = int(stats["applies"] or 0), int(stats["broken"] or 0)
        wider = broken  # an order has no rounding to widen
        examples = rows_of(t.filter(applies & (x > y)).select(*columns))
    else:
        if kind == "product" and divides:  # c = k * a / b is tested as a = c * b / k
            result, operands, factor = operands[0], [result, operands[1]], 1 / factor
        num = {c: t[c].cast("float64") for c in columns}
        c, ops = num[result], [num[o] for o in operands]

        def beyond(scale):
            """|difference| - tolerance per row, the rounding steps widened `scale` times."""
            half = {name: scale * steps.get(name, 0.0) / 2 for name in [result, *operands]}
            rel = relative * scale
            if kind == "sum":
                total = ops[0]
                for o in ops[1:]:
                    total = total + o
                return (c - total).abs() - (sum(half.values()) + rel * (c.abs() + total.abs()))
            if kind == "multiple":
                return (c - ops[0] * factor).abs() - (half[result] + factor * half[operands[0]] + rel * c.abs())
            a, b = ops
            ha, hb = half[operands[0]], half[operands[1]]
            tol = half[result] + factor * ha * hb + b.abs() * (factor * ha) + a.abs() * (factor * hb) + rel * c.abs()
            return (c - a * b * factor).abs() - tol

        exact, wide = beyond(1), beyond(10)
        stats = (
            t.aggregate(applies=(exact <= 1e300).sum(), broken=(exact > 0).sum(), wider=(wide > 0).sum())
            .to_pyarrow()
            .to_pylist()[0]
        )
        applied, broken, wider = (int(stats[k] or 0) for k in ("applies", "broken", "wider"))
        examples = rows_of(t.filter(exact > 0).select(*columns))
    holds = applied - broken
    evidence = dict(
        rule=rule,
        applies=applied,
        holds=holds,
        exceptions=broken,
        exceptions_with_wider_rounding=wider,
        examples=examples,
    )
    if not applied:
        return outcome(hypothesis, "inconclusive", f"no row has a value in every column of {rule}", 0, **evidence)
    if not broken:
        return outcome(hypothesis, "refuted", f"every one of the {count(applied, 'row')} follows {rule}", 0, **evidence)
    if holds < 0.95 * applied:
        return outcome(
            hypothesis,
            "refuted",
            f"{rule} holds on only {share(holds, applied)} of the rows: "
            "it is no rule of this table, and its exceptions are no errors",
            broken,
            **evidence,
        )
    if not wider:
        return outcome(
            hypothesis,
            "refuted",
            f"the {count(broken, 'row')} breaking {rule} follow it within ten "
            "times the rounding of its columns: rounding, not errors",
            broken,
            **evidence,
        )
    return outcome(
        hypothesis,
        "confirmed",
        f"{rule} holds on {share(holds, applied)} of the rows; "
        f"{count(wider, 'row')} break it by more than ten times the rounding of its columns",
        wider,
        **evidence,
    )
