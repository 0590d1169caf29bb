"""A column family (core/families.py) is judged as one unit: the issues of one type and one
cause on its members are one issue naming the members, with each member's count, not one
issue per column (64 missing-values issues for 64 week columns)."""

from __future__ import annotations

from typing import Any

from cataloger_dagster.core.families import Family, family_by_member
from cataloger_dagster.core.models import SEVERITIES, IssueModel

SHOWN_MEMBERS = 6


def _cause(issue: IssueModel) -> Any:
    """What sets one issue of a type apart from another of the same type: the placeholders,
    the format, the referenced column...; most types have one cause per type."""
    d = issue.details or {}
    if issue.type == "sentinel_values":
        return tuple(sorted(map(str, d.get("values", {}))))
    if issue.type in ("numeric_as_text", "date_as_text"):
        return tuple(sorted(map(str, d.get("placeholders", {}))))
    if issue.type == "invalid_format":
        return str(d.get("format") or d.get("pattern") or "")
    if issue.type == "orphan_references":
        return repr(d.get("references") or d.get("reference") or "")
    if issue.type == "out_of_range":
        return tuple(sorted(map(str, d.get("counts", {}))))
    return ""


def merge_family_issues(table: str, issues: list[IssueModel], families: list[Family]) -> list[IssueModel]:
    """One issue per family, type and cause, in place of the first member's; the others go."""
    member = family_by_member(families)
    groups: dict[tuple, list[IssueModel]] = {}
    for i in issues:
        if len(i.affectedColumns) == 1 and i.affectedColumns[0] in member:
            groups.setdefault(
                (member[i.affectedColumns[0]].key, member[i.affectedColumns[0]].dtype, i.type, _cause(i)), []
            ).append(i)
    merged: dict[str, IssueModel] = {}
    drop: set[str] = set()
    for group in groups.values():
        if len(group) < 2:
            continue
        fam = member[group[0].affectedColumns[0]]
        merged[group[0].id] = _merged(table, fam, group)
        drop.update(i.id for i in group[1:])
    return [merged.get(i.id, i) for i in issues if i.id not in drop]


def _merged(table: str, fam: Family, group: list[IssueModel]) -> IssueModel:
    order = {name: n for n, name in enumerate(fam.members)}
    group = sorted(group, key=lambda i: order[i.affectedColumns[0]])
    first = group[0]
    columns = [i.affectedColumns[0] for i in group]
    rows = {i.affectedColumns[0]: i.affectedRows or 0 for i in group}
    shown = ", ".join(f"{c} ({n:,})" for c, n in list(rows.items())[:SHOWN_MEMBERS])
    more = f" and {len(rows) - SHOWN_MEMBERS} more" if len(rows) > SHOWN_MEMBERS else ""
    low, high = min(rows.values()), max(rows.values())
    span = f"{low:,} rows each" if low == high else f"{low:,} to {high:,} rows each"
    what = first.type.replace("_", " ")
    severity = min((i.severity for i in group), key=SEVERITIES.index)
    return first.model_copy(
        update={
            "id": f"{table}_{first.type}_{fam.stem}",
            "severity": severity,
            "affectedColumns": columns,
            "affectedRows": high,
            "description": f"{what.capitalize()} in {len(columns)} of the {len(fam.members)} columns of the family "
            f"{fam.label}, judged as one: {span} ({shown}{more}). "
            f"In {first.affectedColumns[0]}: {first.description}",
            "suggestedAction": f"Treat {fam.label} as one measure: {first.suggestedAction}",
            "details": {
                **(first.details or {}),
                "family": {
                    "label": fam.label,
                    "stem": fam.stem,
                    "members": list(fam.members),
                    "count": len(fam.members),
                },
                "members": rows,
                "member_details": {i.affectedColumns[0]: i.details for i in group},
            },
        }
    )
