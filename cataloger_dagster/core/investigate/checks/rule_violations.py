"""The check of rule_violations issues: here the NULL rules (kind "not_null_when": `result` holds a
value wherever its one operand does)."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import count, outcome, share

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import rows_of, t

# --- the block sent to the sandbox starts here ---
def check_rule_violations(rule, kind, result, operands, factor, divides, steps, relative):
    hypothesis = f"{rule} holds on nearly every row of the table, and the rows breaking it are errors"
    if kind != "not_null_when":
        return outcome(hypothesis, "inconclusive", f"no check is written for rules of kind {kind!r}", 0, rule=rule)
    x, y = t[result], t[operands[0]]
    # the rows where the operand has a value: there the result must have one too
    stats = t.aggregate(applies=y.notnull().sum(), broken=(y.notnull() & x.isnull()).sum(),
                        y_null=y.isnull().sum(), both_null=(y.isnull() & x.isnull()).sum()).to_pyarrow().to_pylist()[0]
    applied, broken, y_null, both = (int(stats[k] or 0) for k in ("applies", "broken", "y_null", "both_null"))
    holds = applied - broken
    examples = rows_of(t.filter(y.notnull() & x.isnull()).select(result, operands[0]))
    evidence = dict(rule=rule, applies=applied, holds=holds, exceptions=broken, null_together=both,
                    operand_null=y_null, examples=examples)
    if not applied:
        return outcome(hypothesis, "inconclusive", f"{operands[0]} holds no value on any row", 0, **evidence)
    if not broken:
        return outcome(hypothesis, "refuted", f"{result} holds a value on every one of the {count(applied, 'row')} "
                       f"where {operands[0]} does", 0, **evidence)
    if holds < 0.95 * applied:
        return outcome(hypothesis, "refuted", f"{rule} holds on only {share(holds, applied)} of the rows where "
                       f"{operands[0]} has a value: it is no rule of this table", broken, **evidence)
    # a rule of the data, not chance: where the operand is NULL, the result mostly is too
    if both < 0.5 * y_null:
        return outcome(hypothesis, "refuted", f"{result} is NULL on only {share(both, y_null)} of the rows where "
                       f"{operands[0]} is: its NULLs do not follow {operands[0]}'s, so those few are no exceptions "
                       "to a rule", broken, **evidence)
    return outcome(hypothesis, "confirmed", f"{rule} holds on {share(holds, applied)} of the rows where "
                   f"{operands[0]} has a value, and {result} is NULL on {share(both, y_null)} of those where it "
                   f"has none; {count(broken, 'row')} break it", broken, **evidence)
