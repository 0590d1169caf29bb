"""One root cause, one issue: two detectors that saw the same rows from two sides fold into the
stronger finding, which keeps the other's evidence.

- A placeholder (9999, -999, a 0 that stands for unknown) is far from the column's values, so
  the magnitude checks (outliers, scale errors, implausible values) see it too.  What the values
  are is the placeholder finding's to say; the magnitude finding is dropped when every value it
  flags is one of the column's placeholders, and so is a "negative" range finding whose
  negative rows are all a negative code's.
- A value that breaks the column's range (a share above 100, a negative count) is usually far
  from the others as well: an outliers finding whose extremes all break the range, on no more
  rows, is the range finding seen from the values' spread; dropped.
- Rows empty in every compared column (NULL or a placeholder such as 'NA', but for a row
  number) are alike, so they "repeat" each other: when the repeats are such empty rows (and no
  more others than chance gives), they are the missing records that the missing-values (or placeholder) finding reports; the
  duplicate-rows finding is dropped.
- Rows repeated whole repeat their key too.  When every repeat of a key column is a repeated
  row (as many extra rows on the key as there are duplicate rows, the key among the columns
  compared), the duplicate-key finding is the duplicate rows seen from one column: dropped.
"""

from __future__ import annotations

from typing import Any, Optional

from cataloger_dagster.core.issues import text_values
from cataloger_dagster.core.models import IssueModel
from cataloger_dagster.core.values import finite_float

MAGNITUDE_TYPES = ("outliers", "scale_errors", "implausible_values")


def _number(value: Any) -> Optional[float]:
    """A number, or the text of one (a placeholder finding names its values as text: '9999')."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    return finite_float(value)


def _numbers(values: Any) -> set[float]:
    items = values.keys() if isinstance(values, dict) else values if isinstance(values, (list, tuple)) else [values]
    return {f for f in (_number(v) for v in items) if f is not None}


def _flagged(i: IssueModel) -> set[float]:
    """The values a magnitude finding flags: its values, or its most extreme outliers."""
    details = i.details or {}
    if i.type == "outliers":
        return _numbers([details.get("min_outlier"), details.get("max_outlier")])
    return _numbers(details.get("values") or details.get("examples") or [])


def _one_column(i: IssueModel) -> Optional[str]:
    return i.affectedColumns[0] if len(i.affectedColumns) == 1 else None


def fold_placeholder_magnitudes(issues: list[IssueModel]) -> list[IssueModel]:
    placeholders: dict[str, IssueModel] = {}
    for i in issues:
        column = _one_column(i)
        if i.type == "sentinel_values" and column is not None and _numbers((i.details or {}).get("values") or {}):
            placeholders[column] = i
    if not placeholders:
        return issues
    folded: dict[str, list[IssueModel]] = {}
    kept: list[IssueModel] = []
    for i in issues:
        column = _one_column(i)
        host = placeholders.get(column) if i.type in MAGNITUDE_TYPES and column is not None else None
        flagged = _flagged(i) if host is not None else set()
        within = (i.affectedRows or 0) <= (host.affectedRows or 0) if host is not None else False
        if host is not None and flagged and within and flagged <= _numbers(host.details["values"]):
            folded.setdefault(host.id, []).append(i)
            continue
        if i.type == "out_of_range" and column in placeholders and _negatives_are_codes(i, placeholders[column]):
            folded.setdefault(placeholders[column].id, []).append(i)
            continue
        kept.append(i)
    if not folded:
        return issues
    return [_with_seen_as(i, folded[i.id]) if i.id in folded else i for i in kept]


def _negatives_are_codes(range_issue: IssueModel, host: IssueModel) -> bool:
    """The range finding says only "negative", and its negative rows are the placeholder's (-2
    written for "none" in a length): the rule is broken by the code alone."""
    counts = (range_issue.details or {}).get("counts") or {}
    coded = sum(n for v, n in host.details["values"].items() if (x := _number(v)) is not None and x < 0)
    return set(counts) == {"negative"} and coded > 0 and counts["negative"] == coded


def _with_seen_as(host: IssueModel, others: list[IssueModel]) -> IssueModel:
    """The stronger finding, with what the folded ones said of the same values."""
    seen = {o.type: {"rows": o.affectedRows, "description": o.description} for o in others}
    return host.model_copy(update={"details": {**(host.details or {}), "also_seen_as": seen}})


def fold_key_repeats_into_duplicate_rows(issues: list[IssueModel]) -> list[IssueModel]:
    rows_issue = next((i for i in issues if i.type == "duplicate_rows"), None)
    if rows_issue is None:
        return issues
    details = rows_issue.details or {}
    repeated, compared = details.get("duplicate_rows"), set(details.get("compared_columns") or ())

    def explained(i: IssueModel) -> bool:
        column = _one_column(i)
        d = i.details or {}
        extra = (d.get("rows") or 0) - (d.get("duplicated_values") or 0)  # rows beyond one per value
        return i.type == "duplicate_keys" and column in compared and bool(repeated) and extra == repeated

    keys = [i for i in issues if explained(i)]
    if not keys:
        return issues
    seen = {
        k.affectedColumns[0]: {"duplicated_values": k.details.get("duplicated_values"), "rows": k.affectedRows}
        for k in keys
    }
    rank = {"low": 0, "medium": 1, "high": 2}
    severity = max([rows_issue, *keys], key=lambda i: rank.get(i.severity, 0)).severity  # a repeated id weighs
    merged = rows_issue.model_copy(update={"severity": severity, "details": {**details, "repeated_keys": seen}})
    dropped = {k.id for k in keys}
    return [merged if i.id == rows_issue.id else i for i in issues if i.id not in dropped]


# the range rules of the out-of-range check (its labels), as tests on one value
RANGE_BREAKS = {
    "negative": lambda v: v < 0,
    "outside 0-100": lambda v: v < 0 or v > 100,
    "age above 130": lambda v: v > 130,
}


def fold_outliers_into_ranges(issues: list[IssueModel]) -> list[IssueModel]:
    ranges = {
        column: i
        for i in issues
        if i.type == "out_of_range" and (column := _one_column(i)) is not None and (i.details or {}).get("counts")
    }
    if not ranges:
        return issues

    def host(i: IssueModel) -> Optional[IssueModel]:
        found = ranges.get(_one_column(i) or "") if i.type == "outliers" else None
        if found is None or (i.affectedRows or 0) > (found.affectedRows or 0):
            return None
        rules = [RANGE_BREAKS[label] for label in found.details["counts"] if label in RANGE_BREAKS]
        flagged = _flagged(i)
        return found if flagged and rules and all(any(r(v) for r in rules) for v in flagged) else None

    folded: dict[str, list[IssueModel]] = {}
    kept = []
    for i in issues:
        if (h := host(i)) is not None:
            folded.setdefault(h.id, []).append(i)
        else:
            kept.append(i)
    return [_with_seen_as(i, folded[i.id]) if i.id in folded else i for i in kept]


# the findings that say values are missing: NULLs, or placeholders ('NA') standing for them
MISSING_TYPES = ("missing_values", "sentinel_values", "numeric_as_text", "date_as_text")


def _empty(value: Any, column: str) -> bool:
    return value is None or (isinstance(value, str) and text_values.is_placeholder(value, column, typed=True))


def fold_empty_repeats_into_missing(issues: list[IssueModel]) -> list[IssueModel]:
    rows_issue = next((i for i in issues if i.type == "duplicate_rows"), None)
    if rows_issue is None:
        return issues
    details = rows_issue.details or {}
    compared = list(details.get("compared_columns") or ())
    empty = [
        e
        for e in details.get("example_rows") or ()
        if compared and all(_empty(e.get(c), c) for c in compared) and isinstance(e.get("copies"), int)
    ]
    # the repeats left once the empty rows are set aside are no more than chance gives
    left = (details.get("duplicate_rows") or 0) - sum(e["copies"] - 1 for e in empty)
    if not empty or left > (details.get("chance_repeats") or 0):
        return issues
    missing = next(
        (
            i
            for i in issues
            if i.type in MISSING_TYPES and i.affectedColumns and set(i.affectedColumns) <= set(compared)
        ),
        None,
    )
    if missing is None:
        return issues
    seen = {"duplicate_rows": {"rows": rows_issue.affectedRows, "description": rows_issue.description}}
    merged = missing.model_copy(update={"details": {**(missing.details or {}), "also_seen_as": seen}})
    return [merged if i.id == missing.id else i for i in issues if i.id != rows_issue.id]
