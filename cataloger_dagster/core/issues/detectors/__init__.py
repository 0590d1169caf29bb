"""Deterministic data-quality detectors: one `IssueModel` per root cause.

Every check is a small query pushed down through ibis, or a reading of a text column's
value counts on the host (``core/issues/text_values.py``), so that every backend gives
the same answer.  The profile decides which checks are worth a query at all.  A check
that fails on one column is recorded as a degradation and skipped: the other columns
are still checked, and the table's status says the findings are incomplete.

Severity and category (quick_fixes can be automated, smart_fixes need business judgement):

  missing_values           >50% high, 20-50% medium, else low (missing_severity)  quick
  sentinel_values          the same thresholds: a placeholder is a hidden missing  quick
                           (whole numbers heaped among fractions, codes written as
                           numbers, count as placeholders)
  duplicate_rows           high >10% of rows, medium >1%, else low               quick
                           (rows alike in every column but a row number, a surrogate
                           id or a load time count too; none where chance explains them,
                           chance reckoned with the profile's most frequent values)
  duplicate_keys           high for the table's own id, else medium              smart
                           (one column, or an entity and a time together)
  numeric_as_text,         medium: sums, sorts and comparisons go wrong          quick
  date_as_text             (the placeholders that forced the text type are part of it;
                           dates written as integers, 20011229, are one too)
  outliers                 medium                                                smart
  whitespace_values        medium when a padded value stands beside its trimmed   quick
                           twin (group-bys split), else low
  scale_errors             medium: values off by a unit factor (x1000, x2.54)    smart
                           (an outliers finding of the same values folds into it)
  implausible_values       medium: ten times or more from their group, usual     smart
                           for the column (the outliers check sees the column)
  mixed_units              medium: one quantity in several units or notations    quick (smart when some
                           (replaces numbers-as-text and the like on that column) values have no unit)
  inconsistent_categories  medium: group-bys split one value into several        quick
                           (letter case, spelling one or two edits apart, a code's
                           case against the column's, rare single letters among words;
                           spaces are whitespace_values')
  invalid_format           medium >=5% of values, else low                       quick
  constant_column          low: carries no information                           quick
  out_of_range             high >5% of rows, else medium                         smart
  orphan_references        high >5% of rows, else medium                         smart
  empty_table              medium: the table has no rows; the only finding then  smart
  rule_violations          medium: rows breaking a rule between columns that     smart
                           the other rows follow (a total and its parts, min <= max;
                           rule_kind "not_null_when": X holds a value wherever Y does)

NULLs another column explains (NULL exactly when wind < 64, before a year, monotone across a
column family) are structure, found with the profile (core/profile/nulls.py): no issue.
Issues of one type and cause on the members of a column family (core/families.py) are one
issue (families.merge_family_issues).
"""

from __future__ import annotations

import dataclasses
import logging
from functools import partial
from datetime import datetime, timezone
from typing import Any, Callable, Mapping, Optional

import ibis

from cataloger_dagster.core import portable
from cataloger_dagster.core.families import families_of
from cataloger_dagster.core.issues.detectors import (
    duplicates,
    folds,
    keys,
    labels,
    magnitudes,
    missing,
    null_rules,
    ranges,
    references,
    rules,
    types,
    units,
    whitespace,
)
from cataloger_dagster.core.issues.detectors.families import merge_family_issues
from cataloger_dagster.core.issues.detectors.empty import empty_table
from cataloger_dagster.core.issues.detectors.context import Context  # noqa: F401  (re-exported)
from cataloger_dagster.core.models import ColumnRule, Degradation, IssueModel, TableProfile
from cataloger_dagster.core.shown import visible

log = logging.getLogger(__name__)

COLUMN_CHECKS: list[tuple[str, Callable[..., Optional[IssueModel]]]] = [
    ("missing_values", missing.missing_values),
    ("sentinel_values", missing.sentinel_values),
    ("duplicate_keys", keys.duplicate_keys),
    ("stored_as_text", types.stored_as_text),
    ("date_as_integer", types.dates_as_integers),
    ("mixed_units", units.mixed_units),
    ("outliers", ranges.outliers),
    ("scale_errors", magnitudes.scale_errors),
    ("implausible_values", magnitudes.implausible_values),
    ("whitespace_values", whitespace.whitespace_values),
    ("inconsistent_categories", labels.inconsistent_categories),
    ("invalid_format", labels.invalid_format),
    ("constant_column", ranges.constant_column),
    ("out_of_range", ranges.out_of_range),
    ("orphan_references", references.orphan_references),
    ("rule_violations", null_rules.not_null_rule),
]
# a table check finds one issue, or several (one per broken rule)
TABLE_CHECKS: list[tuple[str, Callable[[Context], Optional[IssueModel] | list[IssueModel]]]] = [
    ("duplicate_rows", duplicates.duplicate_rows),
    ("composite_key", keys.composite_key),
    ("rule_violations", rules.rule_violations),
]


def detect_issues(
    table: ibis.Table,
    profile: TableProfile,
    *,
    catalog: Mapping[str, ibis.Table] | None = None,
    profiles: Mapping[str, TableProfile] | None = None,
    now: datetime | None = None,
    degradations: list[Degradation] | None = None,
    found_rules: list[ColumnRule] | None = None,
    shared: dict | None = None,
) -> list[IssueModel]:
    """Run every detector on `table`.  `catalog` holds the database's other tables by name,
    `profiles` their latest stored profiles (optional: they spare the reference search a query
    per table).  A detector that fails is appended to `degradations` (when given) and logged;
    the rules between columns the rows follow are appended to `found_rules` (when given).
    `shared` (`Context.shared`): the facts about the other tables (their keys), read once for
    all the tables checked with the same dict, not once per table."""
    now = now or datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    # the columns the profile could read only as text (an enum, a point, a mixed SQLite column)
    # are checked as text too: the same view of the table for every stage
    as_text = {cp.name: "profiled as text" for cp in profile.columns if cp.profiled_as_text is not None}
    original = table.schema()

    def view(names: list[str]) -> ibis.Table:
        # some columns only: a query costs the same in a table of 1,000 columns as in one of ten
        return portable.portable(portable.narrow(table, names), {n: as_text[n] for n in names if n in as_text})[0]

    # `is None`, not `or`: the truth of a lazy mapping would open every table or read every profile
    ctx = Context(
        portable.portable(table, as_text)[0],
        profile,
        {} if catalog is None else catalog,
        now,
        {} if profiles is None else profiles,
        carried_as_text={n for n in as_text if not original[n].is_string()},
        shared={} if shared is None else shared,
    )
    ctx.whole = ctx.table
    failed = degradations if degradations is not None else []
    issues: list[IssueModel] = []
    if profile.row_count == 0:  # nothing else can be judged of a table without rows
        return [empty_table(ctx)]
    for type_, check in TABLE_CHECKS:
        _run(issues, failed, ctx, type_, None, partial(check, ctx))
    if found_rules is not None:
        found_rules.extend(rules.discovered(ctx))
    schema = ctx.table.schema()
    for col in profile.columns:
        if col.name not in schema:
            log.warning("table %s: profiled column %r is not in the table; skipped", visible(ctx.name), col.name)
            continue
        dtype = schema[col.name]
        one = dataclasses.replace(ctx, table=view([col.name]))  # a column's checks read that column
        for type_, check in COLUMN_CHECKS:
            _run(issues, failed, one, type_, col.name, partial(check, one, col, dtype))
    # one root cause, one issue: a column's own causes first (a unit mix, a scale error), then the
    # causes several columns share (a placeholder convention, a column family)
    issues = units.merge_mixed_units(magnitudes.merge_outliers(issues))
    issues = folds.fold_outliers_into_ranges(folds.fold_placeholder_magnitudes(issues))
    issues = folds.fold_key_repeats_into_duplicate_rows(issues)
    issues = merge_family_issues(
        ctx.name, merge_shared_placeholders(ctx.name, merge_placeholder_text(ctx.name, issues)), families_of(profile)
    )
    # columns NULL on the same rows: one missing record (a family's members were merged above)
    folded: list[IssueModel] = []
    _run(folded, failed, ctx, "missing_values", None, partial(missing.merge_missing_together, ctx, issues))
    # rows empty but for a row number repeat each other: the missing records, not duplicates
    return folds.fold_empty_repeats_into_missing(folded or issues)


def _merge_alike(
    issues: list[IssueModel],
    mark: Callable[[IssueModel], Optional[frozenset]],
    merge: Callable[[frozenset, list[IssueModel]], dict[str, Any]],
) -> list[IssueModel]:
    """Issues with the same `mark` (None: not merged), two or more of them, become one: the first
    one's issue (its id the same from one run to the next) updated with `merge(mark, group)`."""
    groups: dict[frozenset, list[IssueModel]] = {}
    for i in issues:
        if (found := mark(i)) is not None:
            groups.setdefault(found, []).append(i)
    merged: dict[str, IssueModel] = {}
    drop: set[str] = set()
    for marks, group in groups.items():
        if len(group) > 1:
            merged[group[0].id] = group[0].model_copy(update=merge(marks, group))
            drop.update(i.id for i in group[1:])
    return [merged.get(i.id, i) for i in issues if i.id not in drop]


def merge_placeholder_text(table: str, issues: list[IssueModel]) -> list[IssueModel]:
    """One root cause, one issue: columns that the same placeholders ('NA') made text are one
    issue (a load that did not read 'NA' as NULL), not one per column."""

    def mark(i: IssueModel) -> Optional[frozenset]:
        placeholders = (i.details or {}).get("placeholders")
        return frozenset(placeholders) if i.type in ("numeric_as_text", "date_as_text") and placeholders else None

    def merge(marks: frozenset, group: list[IssueModel]) -> dict[str, Any]:
        shown = ", ".join(repr(m) for m in sorted(marks))
        placeholder_rows = {i.affectedColumns[0]: sum(i.details["placeholders"].values()) for i in group}
        return {
            "affectedColumns": [c for i in group for c in i.affectedColumns],
            "affectedRows": max(i.affectedRows or 0 for i in group),
            "description": f"{len(group)} columns of {table} write missing values as {shown}: "
            f"{', '.join(i.affectedColumns[0] for i in group)} are stored as text because of it"
            f" ({sum(placeholder_rows.values()):,} placeholders in all).",
            "suggestedAction": f"Load the table again reading {shown} as NULL (for example nullstr / na_values), "
            "so that these columns get their numeric or date types back.",
            "details": {
                "placeholders": sorted(marks),
                "placeholder_rows": placeholder_rows,
                "columns": {i.affectedColumns[0]: i.details for i in group},
            },
        }

    return _merge_alike(issues, mark, merge)


def merge_shared_placeholders(table: str, issues: list[IssueModel]) -> list[IssueModel]:
    """One root cause, one issue: placeholders written the same way in several columns ('NA' for
    every unanswered question of a survey) are one convention of the table, so one issue naming
    the columns, not one per column.  Columns with placeholders of their own stay apart."""

    def mark(i: IssueModel) -> Optional[frozenset]:
        values = (i.details or {}).get("values")
        return frozenset(values) if i.type == "sentinel_values" and values else None

    alike = _merge_alike(issues, mark, _merged_placeholders(table))
    return _merge_alike(alike, _numeric_code, _merged_placeholders(table))


def _numeric_code(i: IssueModel) -> Optional[frozenset]:
    """A numeric placeholder finding's commonest value: columns that write "not applicable" as the
    same number (-2 in every rear-seat measure, some with a -1 or -3 of their own besides) follow
    one convention.  Text placeholders merge only when all are alike (merge_shared_placeholders)."""
    values = (i.details or {}).get("values")
    if i.type != "sentinel_values" or not isinstance(values, dict) or not values:
        return None
    try:
        [float(v) for v in values]
    except ValueError:
        return None
    return frozenset({max(values, key=lambda v: (values[v], v))})


def _merged_placeholders(table: str) -> Callable[[frozenset, list[IssueModel]], dict[str, Any]]:
    def merge(_marks: frozenset, group: list[IssueModel]) -> dict[str, Any]:
        per_column = {c: n for i in group for c, n in _column_rows(i).items()}
        totals: dict[str, int] = {}
        for i in group:
            for v, n in i.details["values"].items():
                totals[v] = totals.get(v, 0) + n
        marks = sorted(totals)
        shown = ", ".join(repr(m) for m in marks)
        rank = {"low": 0, "medium": 1, "high": 2}
        return {
            "affectedColumns": [c for i in group for c in i.affectedColumns],
            "severity": max((i.severity for i in group), key=lambda s: rank.get(s, 0)),
            "affectedRows": max(i.affectedRows or 0 for i in group),
            "description": f"{len(per_column)} columns of {table} write unknown values as {shown}: "
            + ", ".join(f"{c} ({n:,})" for c, n in per_column.items())
            + ".",
            "suggestedAction": f"Store {shown} as NULL in these columns (or load the table again reading "
            f"{shown} as NULL), so that counts and averages treat them as unknown.",
            "details": {
                **group[0].details,
                "columns": per_column,
                "values": {m: totals[m] for m in marks},
            },
        }

    return merge


def _column_rows(i: IssueModel) -> dict[str, int]:
    """Rows per column of a placeholder finding (one merged before names its columns)."""
    columns = (i.details or {}).get("columns")
    if isinstance(columns, dict) and len(i.affectedColumns) > 1:
        return {str(c): int(n) for c, n in columns.items()}
    return {i.affectedColumns[0]: sum(i.details["values"].values())}


def _run(
    issues: list[IssueModel],
    failed: list[Degradation],
    ctx: Context,
    type_: str,
    column: Optional[str],
    fn: Callable[[], Any],
) -> None:
    try:
        found = fn()
    except Exception as exc:  # one bad column or backend quirk must not stop the rest
        where = f"{ctx.name}.{column}" if column else ctx.name
        # the error's text may quote the table's values: the log gets its kind only
        log.warning("detector %s skipped on %s: %s", type_, visible(where), type(exc).__name__)
        why = str(exc) if isinstance(exc, references.UnreadableTable) else f"{type(exc).__name__} from the database"
        failed.append(
            Degradation(
                stage="detectors", column=column, reason=f"the {type_.replace('_', ' ')} check could not run ({why})"
            )
        )
        return
    if isinstance(found, list):
        issues.extend(found)
    elif found is not None:
        issues.append(found)
