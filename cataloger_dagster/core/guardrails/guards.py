"""Guardrails that guard a finding: one confirmed by its investigation or accepted by a reviewer
fails when the problem grows or comes back; one a reviewer marked expected pins the level they
accepted.  A dismissed or refuted finding guards nothing."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

import ibis

from cataloger_dagster.core.guardrails import queries as q
from cataloger_dagster.core.guardrails import tolerance
from cataloger_dagster.core.guardrails.model import Guardrail, Unguarded
from cataloger_dagster.core.guardrails.pins import Facts
from cataloger_dagster.core.models import ColumnRule, IssueModel

Tables = Mapping[str, ibis.Table]


def standing(issue: IssueModel, verdicts: Mapping[str, str]) -> Optional[str]:
    """How a finding is guarded: "finding" (confirmed or accepted), "expected", or None."""
    state = issue.review.state if issue.review else None
    if state in ("dismissed", "worse_since_dismissed") or verdicts.get(issue.id) == "refuted":
        return None
    if state in ("expected", "changed_since_expected"):
        return "expected"
    if state == "accepted" or verdicts.get(issue.id) == "confirmed":
        return "finding"
    return None


def guard(f: Facts, issue: IssueModel, pinned_by: str, tables: Tables) -> Guardrail | Unguarded:
    build = _BUILDERS.get(issue.type)
    made = build(f, issue, tables) if build else None
    if made is None:
        reason = "its detector gives no test of single rows" if build is None else "its details name no test"
        return Unguarded(finding=issue.id, type=issue.type, reason=reason)
    condition_sql, kind, measure, level = made
    rows = issue.review.rows_then if pinned_by == "expected" and issue.review else issue.affectedRows
    level = level if level is not None else rows
    allowed = tolerance.grown_share(level) if measure == "share" else tolerance.grown(int(level or 0))
    said = "the level a reviewer accepted" if pinned_by == "expected" else "the finding's level"
    columns = _guarded_columns(issue)
    return Guardrail(
        name=f"rule:{issue.details.get('rule')}" if kind == "rule" else f"{kind}:{','.join(columns)}",
        kind=kind,  # type: ignore[arg-type]
        columns=columns,
        sql=condition_sql[0],
        keys_sql=condition_sql[1],
        measure=measure,  # type: ignore[arg-type]
        high=allowed,
        guards=issue.id,
        pinned_by=pinned_by,  # type: ignore[arg-type]
        why=f"Guards the finding {issue.id!r} ({issue.type}): fails when it grows past {said}, {_level(measure, level)}.",
    )


def _repeated_key(issue: IssueModel) -> Optional[tuple[str, Any]]:
    """The one key a duplicate-rows finding folded in (the key repeats exactly where whole rows do),
    with what its own finding said; None for rows repeated with no key, or with several."""
    keys = (issue.details or {}).get("repeated_keys") if issue.type == "duplicate_rows" else None
    if not isinstance(keys, dict) or len(keys) != 1:
        return None
    ((column, seen),) = keys.items()
    return column, seen


def _guarded_columns(issue: IssueModel) -> list[str]:
    key = _repeated_key(issue)
    return [key[0]] if key else list(issue.affectedColumns)


def _level(measure: str, level: Any) -> str:
    amount = f"{float(level or 0):.1%} of the rows" if measure == "share" else f"{int(level or 0):,} rows"
    return f"{amount} (plus a tenth)"


Made = Optional[tuple[tuple[str, Optional[str]], str, str, Optional[float]]]


def _rows(f: Facts, condition: Any, kind: str) -> Made:
    return (f.sql(q.breaking_rows(f.table, condition)), f.keyed(condition)), kind, "rows", None


def _missing(f: Facts, issue: IssueModel, tables: Tables) -> Made:
    column = issue.affectedColumns[0] if issue.affectedColumns else ""
    if column not in f.table.columns:
        return None
    share = issue.details.get("fraction")
    return (f.sql(q.null_share(f.table, column)), None), "null_rate", "share", share


def _duplicate_keys(f: Facts, issue: IssueModel, tables: Tables) -> Made:
    if len(issue.affectedColumns) != 1:
        return None
    column = issue.affectedColumns[0]
    level = issue.details.get("duplicated_values")
    return (f.sql(q.repeated_values(f.table, column)), None), "unique", "rows", level


def _duplicate_rows(f: Facts, issue: IssueModel, tables: Tables) -> Made:
    """Whole rows repeated along with their key: guarded as the key's uniqueness, which is what the
    folded key finding was guarded by."""
    key = _repeated_key(issue)
    if key is None or key[0] not in f.table.columns:
        return None
    column, seen = key
    level = seen.get("duplicated_values") if isinstance(seen, dict) else None
    return (f.sql(q.repeated_values(f.table, column)), None), "unique", "rows", level


def _orphans(f: Facts, issue: IssueModel, tables: Tables) -> Made:
    target, column = issue.details.get("target_table"), issue.details.get("target_column")
    if issue.details.get("match") != "equal" or not isinstance(target, str) or target not in tables:
        return None
    if not issue.affectedColumns:
        return None
    expr = q.orphans(f.table, issue.affectedColumns[0], tables[target], str(column))
    return (f.sql(expr), None), "reference", "rows", None


def _rule(f: Facts, issue: IssueModel, tables: Tables) -> Made:
    fields = {k: v for k, v in issue.details.items() if k in ColumnRule.model_fields}
    try:
        rule = ColumnRule(formula=str(issue.details.get("rule", "")), **fields)
    except (TypeError, ValueError):
        return None
    return _rows(f, q.rule_broken(f.table, rule), "rule")


def _padding(f: Facts, issue: IssueModel, tables: Tables) -> Made:
    return _rows(f, q.padded(f.table, issue.affectedColumns[0]), "padding") if issue.affectedColumns else None


def _placeholders(f: Facts, issue: IssueModel, tables: Tables) -> Made:
    values = issue.details.get("values")
    if not isinstance(values, dict) or len(issue.affectedColumns) != 1:
        return None
    column = issue.affectedColumns[0]
    if column not in f.table.columns:
        return None
    shown = list(values)
    if f.table[column].type().is_numeric():
        shown = [float(v) for v in shown if _number(v)]
    return _rows(f, q.among(f.table, column, shown), "placeholder") if shown else None


def _number(text: Any) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def _bounds(f: Facts, issue: IssueModel, tables: Tables) -> Made:
    low, high = issue.details.get("fence_low"), issue.details.get("fence_high")
    if len(issue.affectedColumns) != 1 or not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
        return None
    return _rows(f, q.beyond(f.table, issue.affectedColumns[0], low, high), "range")


_BUILDERS: dict[str, Callable[[Facts, IssueModel, Tables], Made]] = {
    "missing_values": _missing,
    "duplicate_keys": _duplicate_keys,
    "duplicate_rows": _duplicate_rows,
    "orphan_references": _orphans,
    "rule_violations": _rule,
    "whitespace_values": _padding,
    "sentinel_values": _placeholders,
    "outliers": _bounds,
}
