"""Rules about NULLs the data keeps almost everywhere: a column holds a value wherever another
does ('unit' whenever 'dose'), but on a few rows.  Those rows are a finding (rule_violations,
rule_kind "not_null_when"); the rule itself is mined with the table's other NULL patterns in
the profile's one query (core/profile/nulls.py)."""

from __future__ import annotations

from typing import Any, Optional

import ibis.expr.datatypes as dt

from cataloger_dagster.core.issues.detectors.context import Context, count, issue, pct
from cataloger_dagster.core.models import ColumnProfile, IssueModel

EXAMPLES = 5


def not_null_rule(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    rule = next((p for p in ctx.profile.null_patterns if p.kind == "not_null_when" and p.columns == [cp.name]), None)
    if rule is None or rule.by is None:
        return None
    x, y = cp.name, rule.by
    kept = rule.rows + rule.exceptions
    return issue(
        ctx,
        "rule_violations",
        x,
        columns=[x, y],
        severity="medium",
        category="smart_fixes",
        affectedRows=rule.exceptions,
        description=f"{x} holds a value wherever {y} does, but on {count(rule.exceptions, 'row')}: "
        f"{x} is NULL on {count(kept, 'row')}, {rule.rows:,} of them where {y} is NULL too "
        f"({y}'s own missing values) and {rule.exceptions:,} where {y} has a value "
        f"({pct(rule.exceptions, kept)}).",
        suggestedAction=f"Fill {x} on the {count(rule.exceptions, 'row')} where {y} is set, "
        f"or find out why these rows break the rule.",
        details={
            **rule_details(x, y),
            "rows": rule.rows,
            "exceptions": rule.exceptions,
            "when_examples": _examples(ctx, x, y),
        },
    )


def rule_details(x: str, y: str) -> dict[str, Any]:
    """What the rule_violations check reads of a NULL rule: its kind, and the two columns in the
    check's words too (the rule's `result` must hold a value wherever its one operand does)."""
    return {
        "rule_kind": "not_null_when",
        "kind": "not_null_when",
        "rule": f"{x} IS NOT NULL WHEN {y} IS NOT NULL",
        "column": x,
        "when_column": y,
        "result": x,
        "operands": [y],
    }


def _examples(ctx: Context, x: str, y: str) -> list[Any]:
    """A few values of `y` on the rows that break the rule."""
    whole = ctx.whole if ctx.whole is not None else ctx.table
    broken = whole.filter(whole[x].isnull() & whole[y].notnull()).select(value=whole[y]).limit(EXAMPLES)
    return [
        v if isinstance(v, (int, float, str, bool)) or v is None else str(v)
        for v in broken.to_pyarrow().column("value").to_pylist()
    ]
