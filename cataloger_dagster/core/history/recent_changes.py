"""recent_summary: what changed in a table since its previous run.

`compare_runs` is pure: it takes two runs as their results' models (a `core.results.StoredRun`
as the store's loader reads it, or a `RunResults` built by hand) so that the asset, the tests and
any tool can compare runs without Dagster.  Only ``profile`` is required, and a missing part is
treated as unknown rather than empty (a run without issues.json does not "resolve" every issue).
The columns are compared in their JSON form, by the code `comparison` shares with the standalone
summary script.

`summary_script` writes the run's second script, beside the session script: a standalone program that
holds the previous run's numbers and recomputes the current side with ibis.  Its code is the file
summary_script.py of this package, and both sides judge a change with the code of `comparison`.
"""

from __future__ import annotations

import json
from importlib import resources
from dataclasses import dataclass
from typing import Any, Optional, Protocol

from pydantic import BaseModel, Field

from cataloger_dagster.core.history import comparison
from cataloger_dagster.core.history.comparison import (
    NULL_FRACTION_POINTS,
    distinct_notable,
    mean_move,
    null_fraction_notable,
    rows_change,
    schema_change,
)
from cataloger_dagster.core.history.timelapse import RunSummary
from cataloger_dagster.core.investigate.codegen import literal
from cataloger_dagster.core.models import (
    NUMERIC_KINDS,
    AnalysisResultModel,
    InvestigationsResult,
    IssueModel,
    TableProfile,
)
from cataloger_dagster.core.values import finite_float

__all__ = [
    "NULL_FRACTION_POINTS",
    "ColumnRef",
    "TypeChange",
    "ValueChange",
    "ColumnShift",
    "IssueRef",
    "SeverityChange",
    "VerdictChange",
    "RecentSummary",
    "compare_runs",
    "summary_script",
    "RunResults",
]


class ComparedRun(Protocol):
    """What `compare_runs` reads of a run: its timestamp and results (None: not stored)."""

    @property
    def timestamp(self) -> str: ...
    @property
    def profile(self) -> TableProfile | None: ...
    @property
    def issues(self) -> AnalysisResultModel | None: ...
    @property
    def investigations(self) -> InvestigationsResult | None: ...


@dataclass(frozen=True)
class RunResults:
    """A run's results in hand (this run's, before the store holds them all)."""

    timestamp: str
    profile: TableProfile | None
    issues: AnalysisResultModel | None = None
    investigations: InvestigationsResult | None = None


class ColumnRef(BaseModel):
    name: str
    dtype: str = ""


class TypeChange(BaseModel):
    column: str
    before: str
    after: str


class ValueChange(BaseModel):
    stat: str
    before: Any = None
    after: Any = None


class ColumnShift(BaseModel):
    column: str
    changes: list[ValueChange] = Field(default_factory=list)
    notable: list[str] = Field(default_factory=list)  # why this shift deserves attention
    top_entered: list[Any] = Field(default_factory=list)
    top_left: list[Any] = Field(default_factory=list)
    error: Optional[str] = None  # the column could not be compared


class IssueRef(BaseModel):
    id: str
    type: str = ""
    severity: str = ""
    description: str = ""
    columns: list[str] = Field(default_factory=list)


class SeverityChange(BaseModel):
    id: str
    before: str
    after: str


class VerdictChange(BaseModel):
    issue_id: str
    before: str
    after: str


class RecentSummary(BaseModel):
    table: str
    first_run: bool
    previous_timestamp: Optional[str] = None
    current_timestamp: Optional[str] = None
    rows_before: Optional[int] = None
    rows_after: int = 0
    rows_delta: int = 0
    rows_delta_pct: Optional[float] = None  # None when the table was empty before
    fingerprint_before: Optional[str] = None
    fingerprint_after: Optional[str] = None
    fingerprint_changed: bool = False
    columns_added: list[ColumnRef] = Field(default_factory=list)
    columns_removed: list[ColumnRef] = Field(default_factory=list)
    type_changes: list[TypeChange] = Field(default_factory=list)
    distributions: list[ColumnShift] = Field(default_factory=list)  # columns that moved
    issues_compared: bool = False
    issues_new: list[IssueRef] = Field(default_factory=list)
    issues_resolved: list[IssueRef] = Field(default_factory=list)
    severity_changes: list[SeverityChange] = Field(default_factory=list)
    verdicts_compared: bool = False
    verdict_changes: list[VerdictChange] = Field(default_factory=list)
    headline: list[str] = Field(default_factory=list)  # plain sentences
    # the last runs (this one last), oldest first: the trend behind the step from the previous run
    trend: list[RunSummary] = Field(default_factory=list)

    @property
    def schema_changes(self) -> int:
        return len(self.columns_added) + len(self.columns_removed) + len(self.type_changes)

    @property
    def notable_shifts(self) -> int:
        return sum(1 for s in self.distributions if s.notable)

    @property
    def unchanged(self) -> bool:
        return not (
            self.first_run
            or self.rows_delta
            or self.fingerprint_changed
            or self.schema_changes
            or self.distributions
            or self.issues_new
            or self.issues_resolved
            or self.severity_changes
            or self.verdict_changes
        )


# --------------------------------------------------------------------------
# comparison
# --------------------------------------------------------------------------


def _columns(profile: TableProfile) -> dict[str, dict]:
    """Each column in its JSON form, as the comparison shared with the summary script reads it."""
    return {c.name: c.model_dump(mode="json", warnings=False) for c in profile.columns}


def _dtypes(columns: dict[str, dict]) -> dict[str, str]:
    return {name: str(c.get("dtype") or "") for name, c in columns.items()}


def _issues(run: ComparedRun) -> dict[str, IssueModel] | None:
    found = run.issues
    return None if found is None else {i.id: i for i in found.issues if i.id}


def _set_aside(run: ComparedRun) -> set[str]:
    """Ids still found but set aside by a review or learned precision: not resolved."""
    found = run.issues
    return set() if found is None else {i.id for i in (*found.reviewed, *found.quieted) if i.id}


def _verdicts(run: ComparedRun) -> dict[str, str] | None:
    found = run.investigations
    if found is None:
        return None
    return {
        inv.issue_id: inv.verdict or ("no verdict" if inv.success else "error")
        for inv in found.investigations
        if inv.issue_id
    }


def _issue_ref(issue: IssueModel) -> IssueRef:
    return IssueRef(
        id=issue.id,
        type=issue.type,
        severity=issue.severity,
        description=issue.description,
        columns=list(issue.affectedColumns),
    )


def _top(column: dict) -> list[Any]:
    found = column.get("top_values") or []
    if not isinstance(found, list) or not all(isinstance(t, dict) for t in found):
        raise TypeError("top_values is not a list of {value, count}")
    return [t.get("value") for t in found]


def _hashable(value: Any) -> Any:
    # 20 and 20.0 are one value: a column retyped int -> float keeps its top values
    if finite_float(value) is not None:
        return ("number", float(value))
    return ("json", json.dumps(value, sort_keys=True, default=str))


def _shift(name: str, before: dict, after: dict, rows: tuple[int, int]) -> ColumnShift:
    shift = ColumnShift(column=name)
    for stat in ("null_fraction", "distinct", "mean", "std", "min", "max"):
        if before.get(stat) != after.get(stat):
            shift.changes.append(ValueChange(stat=stat, before=before.get(stat), after=after.get(stat)))

    nf_before, nf_after = finite_float(before.get("null_fraction")), finite_float(after.get("null_fraction"))
    if nf_before is not None and nf_after is not None and null_fraction_notable(nf_before, nf_after):
        shift.notable.append(
            f"null fraction {nf_before:.1%} → {nf_after:.1%} ({(nf_after - nf_before) * 100:+.1f} points)"
        )
    mean_before, mean_after = finite_float(before.get("mean")), finite_float(after.get("mean"))
    std = finite_float(before.get("std"))
    why = mean_move(mean_before, mean_after, std) if mean_before is not None and mean_after is not None else None
    if why == "std":
        shift.notable.append(
            f"mean {mean_before:.4g} → {mean_after:.4g} ({abs(mean_after - mean_before) / std:.1f} std)"
        )
    elif why == "constant":
        shift.notable.append(f"mean {mean_before:.4g} → {mean_after:.4g} (the column was constant)")
    d_before, d_after = finite_float(before.get("distinct")), finite_float(after.get("distinct"))
    if d_before and d_after is not None and distinct_notable(d_before, d_after, rows):
        shift.notable.append(f"distinct values {d_before:,.0f} → {d_after:,.0f}")

    top_before, top_after = _top(before), _top(after)
    if top_before or top_after:
        seen_before = {_hashable(v) for v in top_before}
        seen_after = {_hashable(v) for v in top_after}
        shift.top_entered = [v for v in top_after if _hashable(v) not in seen_before]
        shift.top_left = [v for v in top_before if _hashable(v) not in seen_after]
        if top_before and top_after and _hashable(top_before[0]) != _hashable(top_after[0]):
            shift.notable.append(f"most frequent value {top_before[0]!r} → {top_after[0]!r}")
    return shift


def _sentences(s: RecentSummary) -> list[str]:
    if s.first_run:
        return [
            f"First run of {s.table}: there is no earlier run to compare with "
            f"({s.rows_after:,} rows, {len(s.columns_added)} columns)."
        ]
    out = []
    if s.rows_delta:
        pct = f", {s.rows_delta_pct:+.1f}%" if s.rows_delta_pct is not None else ""
        out.append(f"Rows: {s.rows_before:,} → {s.rows_after:,} ({s.rows_delta:+,}{pct}).")
    else:
        out.append(f"Row count unchanged ({s.rows_after:,}).")
    for c in s.columns_added:
        out.append(f"Column {c.name} added ({c.dtype}).")
    for c in s.columns_removed:
        out.append(f"Column {c.name} removed (was {c.dtype}).")
    for t in s.type_changes:
        out.append(f"Column {t.column} changed type: {t.before} → {t.after}.")
    if s.fingerprint_changed and not (s.rows_delta or s.schema_changes):
        out.append("The fingerprint changed (the data was updated) though rows and schema did not.")
    for shift in s.distributions:
        for why in shift.notable:
            out.append(f"Column {shift.column}: {why}.")
    for i in s.issues_new:
        out.append(f"New issue {i.id} ({i.severity}): {i.description}")
    for i in s.issues_resolved:
        out.append(f"Resolved issue {i.id} (was {i.severity}).")
    for change in s.severity_changes:
        out.append(f"Issue {change.id} severity {change.before} → {change.after}.")
    for v in s.verdict_changes:
        out.append(f"Issue {v.issue_id} verdict {v.before} → {v.after}.")
    if s.unchanged:
        out.append("Nothing changed since the previous run.")
    return out


def _span(values: list, shown) -> str | None:
    known = [v for v in values if v is not None]
    if len(known) < 2:
        return None
    low, high = min(known), max(known)
    return f"{shown(known[0])} → {shown(known[-1])}" + (
        f" (between {shown(low)} and {shown(high)})" if (low, high) != tuple(sorted((known[0], known[-1]))) else ""
    )


def trend_sentence(trend: list[RunSummary]) -> str | None:
    """One sentence over the last runs, when there are more than the two a step compares."""
    if len(trend) < 3:
        return None
    parts = [
        f"{label} {span}"
        for label, span in (
            ("rows", _span([r.rows for r in trend], lambda v: f"{v:,}")),
            ("standing issues", _span([len(r.issue_ids) for r in trend], str)),
            ("health", _span([r.health for r in trend], lambda v: f"{v:g}")),
            ("pass rate", _span([r.pass_rate for r in trend], lambda v: f"{v:.0%}")),
        )
        if span
    ]
    return f"Over the last {len(trend)} runs (since {trend[0].timestamp}): " + "; ".join(parts) + "."


def compare_runs(
    previous: ComparedRun | None, current: ComparedRun, trend: list[RunSummary] | None = None
) -> RecentSummary:
    """What changed from `previous` to `current` (see the module docstring);
    `previous` None means this is the table's first run.  ``trend``: the last runs' numbers,
    oldest first and this run last (`core.history.timelapse`), shown beside the step."""
    now = current.profile
    if now is None:
        raise ValueError(f"compare_runs needs the current run's profile; run {current.timestamp} has none")
    table = now.table
    now_cols = _columns(now)
    summary = RecentSummary(
        table=table,
        first_run=previous is None,
        current_timestamp=current.timestamp,
        rows_after=now.row_count,
        fingerprint_after=now.fingerprint.value,
        trend=list(trend or []),
    )
    if previous is None:
        # on a first run every column is "new": the page lists the schema it starts from
        summary.columns_added = [ColumnRef(name=n, dtype=dtype) for n, dtype in _dtypes(now_cols).items()]
        summary.headline = _sentences(summary)
        return summary
    before = previous.profile
    if before is None:
        raise ValueError(f"the previous run of table {table!r} has no profile.json; pass previous=None for a first run")
    before_cols = _columns(before)
    summary.previous_timestamp = previous.timestamp
    summary.rows_before = before.row_count
    summary.rows_delta, summary.rows_delta_pct = rows_change(summary.rows_before, summary.rows_after)
    summary.fingerprint_before = before.fingerprint.value
    summary.fingerprint_changed = summary.fingerprint_before != summary.fingerprint_after

    added, removed, retyped = schema_change(_dtypes(before_cols), _dtypes(now_cols))
    summary.columns_added = [ColumnRef(name=n, dtype=dtype) for n, dtype in added]
    summary.columns_removed = [ColumnRef(name=n, dtype=dtype) for n, dtype in removed]
    summary.type_changes = [TypeChange(column=n, before=b, after=a) for n, b, a in retyped]
    for name, col in now_cols.items():
        if name not in before_cols:
            continue
        old = before_cols[name]
        try:
            shift = _shift(name, old, col, (summary.rows_before, summary.rows_after))
        except Exception as exc:  # noqa: BLE001 - one odd column must not hide the others
            shift = ColumnShift(column=name, error=f"could not compare column {name!r}: {exc}")
        if shift.changes or shift.notable or shift.top_entered or shift.top_left or shift.error:
            summary.distributions.append(shift)

    issues_before, issues_now = _issues(previous), _issues(current)
    if issues_before is not None and issues_now is not None:
        summary.issues_compared = True
        summary.issues_new = [_issue_ref(i) for k, i in issues_now.items() if k not in issues_before]
        aside = _set_aside(current)
        summary.issues_resolved = [
            _issue_ref(i) for k, i in issues_before.items() if k not in issues_now and k not in aside
        ]
        summary.severity_changes = [
            SeverityChange(id=k, before=issues_before[k].severity, after=i.severity)
            for k, i in issues_now.items()
            if k in issues_before and issues_before[k].severity != i.severity
        ]
    verdicts_before, verdicts_now = _verdicts(previous), _verdicts(current)
    if verdicts_before is not None and verdicts_now is not None:
        summary.verdicts_compared = True
        summary.verdict_changes = [
            VerdictChange(issue_id=k, before=verdicts_before[k], after=v)
            for k, v in verdicts_now.items()
            if k in verdicts_before and verdicts_before[k] != v
        ]
    summary.headline = _sentences(summary)
    over = trend_sentence(summary.trend)
    if over:
        summary.headline.append(over)
    return summary


# --------------------------------------------------------------------------
# summary_script.py
# --------------------------------------------------------------------------


def _script_baseline(previous_profile: TableProfile | None) -> dict | None:
    if previous_profile is None:
        return None
    columns: dict[str, dict] = {}
    for col in previous_profile.columns:
        entry: dict[str, Any] = {"dtype": col.dtype, "nulls": col.nulls}
        if col.kind in NUMERIC_KINDS:
            entry.update(mean=finite_float(col.mean), std=finite_float(col.std))
        columns[col.name] = entry
    return {"row_count": previous_profile.row_count, "columns": columns}


def _script_trend(trend: list[RunSummary] | None) -> list[dict]:
    return [
        {
            "timestamp": r.timestamp,
            "rows": r.rows,
            "issues": len(r.issue_ids),
            "high": r.severities.get("high", 0),
            "health": r.health,
            "pass_rate": r.pass_rate,
        }
        for r in trend or []
    ]


# the summary script's own file marks the part that a generated script holds in its place: the values
# (as literals) and the comparison's code
_VALUES_START = "# --- summary_script() writes the values here, as literals, then the comparison's code ---\n"
_CODE_START = "# --- the script's own code starts here ---\n"


def _parts(text: str, marker: str, where: str) -> tuple[str, str]:
    head, found, tail = text.partition("\n" + marker)
    if not found:
        raise ValueError(f"{where} has no {marker.strip()!r} line")
    return head + "\n", tail


def _script_code() -> tuple[str, str, str]:
    """(the script's head, the comparison's code, the script's own code), from the package's files."""
    package = resources.files(__package__)
    script = package.joinpath("summary_script.py").read_text(encoding="utf-8")
    head, rest = _parts(script, _VALUES_START, f"{__package__}/summary_script.py")
    _, own = _parts(rest, _CODE_START, f"{__package__}/summary_script.py")
    _, carried = _parts(
        package.joinpath("comparison.py").read_text(encoding="utf-8"),
        comparison.CARRIED_FROM,
        f"{__package__}/comparison.py",
    )
    return head, carried, own


def summary_script(
    table: str,
    previous_profile: TableProfile | None,
    *,
    previous_timestamp: str | None = None,
    trend: list[RunSummary] | None = None,
) -> str:
    """The summary_script.py for `table`: standalone, the previous run's numbers and ``trend`` (the
    runs before this one, oldest first) embedded as literals.  The same arguments give the same bytes."""
    if not isinstance(table, str) or not table:
        raise ValueError(f"summary_script needs a table name, not {table!r}")
    # through JSON: what the script holds is plain data, with any other value as its text
    baseline = json.loads(json.dumps(_script_baseline(previous_profile), default=str, allow_nan=False))
    runs = json.loads(json.dumps(_script_trend(trend), default=str, allow_nan=False))
    head, carried, own = _script_code()
    # every value the script holds is a literal: names and timestamps never touch the code around them
    values = (
        f"TABLE: str = {literal(table)}\n"
        f"PREVIOUS_TIMESTAMP: str | None = {literal(previous_timestamp)}\n"
        "# the previous run (None on a table's first run)\n"
        f"PREVIOUS: dict | None = {literal(baseline)}\n"
        "# the runs before this one, oldest first (the last is the run this one followed)\n"
        f"TREND: list[dict] = {literal(runs)}\n"
        "# the profile's kinds of number columns: the script recomputes their mean\n"
        f"NUMERIC_KINDS: tuple[str, ...] = {literal(tuple(NUMERIC_KINDS))}\n"
    )
    return f"{head}{values}\n{carried}{own}"
