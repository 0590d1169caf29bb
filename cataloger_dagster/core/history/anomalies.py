"""Findings from a table's history: volume, freshness, schema and distribution changes.

Read from the digests of the earlier runs' profiles (`core.history.digest`), never from the
table.  Each finding carries its evidence in ``details`` (the band, the history's numbers) and a
``chart`` (series over the runs, drawn by the page with `svg_trend`).  Runs whose value a
reviewer marked "expected", or accepted as a real incident, are left out of the baseline of
that finding (the review names the run), so that one incident does not widen the band for good.
"""

from __future__ import annotations

from statistics import median
from typing import Any, Iterable, Mapping, Optional, Sequence

from cataloger_dagster.core.history.digest import RunPoint, load_history, point_of
from cataloger_dagster.core.history.drift import column_drift
from cataloger_dagster.core.history.seasonality import MIN_POINTS, Band, expected_band
from cataloger_dagster.core.models import HISTORY_ISSUE_TYPES, ColumnProfile, IssueModel, Severity, TableProfile
from cataloger_dagster.core.reviews.model import Review
from cataloger_dagster.core.reviews.renames import column_renames
from cataloger_dagster.core.store import Store

SOURCE = "history"
BASELINE_VERDICTS = ("expected", "accept")  # a value people explained is no baseline
VOLUME_FLOOR = 5  # rows: the least band half-width of the row-count change
VOLUME_FLOOR_SHARE = 0.25  # ... and of the median change
EARLY_DROP_SHARE = 0.5  # before the band can be drawn, losing more than this share of the rows still speaks
MIN_CHANGES = 3  # intervals between changes before staleness is judged
STALE_FACTOR = 2.0  # not moved for twice its usual interval
CHART_RUNS = 30  # runs drawn in a finding's chart


def excluded_runs(reviews: Iterable[Review]) -> dict[str, set[str]]:
    """issue id -> the runs whose value is out of its baseline: the latest verdict on that run's
    finding is "expected" or "accept"."""
    latest: dict[tuple[str, str], str] = {}
    for review in reviews:  # oldest first: the later verdict wins
        if review.run and (
            review.issue.source == SOURCE
            if review.issue
            else any(f"_{t}" in review.issue_id for t in HISTORY_ISSUE_TYPES)
        ):
            latest[(review.issue_id, review.run)] = review.verdict
    out: dict[str, set[str]] = {}
    for (issue_id, run), verdict in latest.items():
        if verdict in BASELINE_VERDICTS:
            out.setdefault(issue_id, set()).add(run)
    return out


def _chart(
    points: list[RunPoint],
    series: Mapping[str, Sequence[Optional[float]]],
    title: str,
    percent: bool = False,
    unit: str = "",
) -> dict[str, Any]:
    labels = [p.timestamp[:16].replace("T", " ") for p in points]
    return {
        "title": title,
        "labels": labels[-CHART_RUNS:],
        "percent": percent,
        "unit": unit,
        "series": {name: values[-CHART_RUNS:] for name, values in series.items()},
    }


def _band_marks(n: int, band: Band, offset: float = 0.0) -> dict[str, list[Optional[float]]]:
    """The expected band (low, high) as two series with a value at the last run only (the one judged)."""
    return {"low": [None] * (n - 1) + [max(band.low + offset, 0.0)], "high": [None] * (n - 1) + [band.high + offset]}


def _issue(
    table: str,
    type_: str,
    column: Optional[str],
    *,
    severity: Severity,
    description: str,
    action: str,
    columns: list[str],
    details: dict[str, Any],
    rows: Optional[int] = None,
) -> IssueModel:
    return IssueModel(
        id=f"{table}_{type_}" + (f"_{column}" if column else ""),
        type=type_,
        severity=severity,
        description=description,
        suggestedAction=action,
        category="quick_fixes",
        affectedColumns=columns,
        affectedRows=rows,
        source=SOURCE,
        details=details,
    )


def _lower(severity: Severity) -> Severity:
    return "medium" if severity == "high" else "low"


# ------------------------------------------------------------------ volume


def _cadence(history: list[RunPoint]) -> Optional[float]:
    """The usual seconds from one run to the next when the next found the table changed (the
    median), if any did: the rhythm of the loads as the runs saw it, whatever runs came between."""
    gaps = [
        (b.moment - a.moment).total_seconds() for a, b in zip(history, history[1:]) if a.fingerprint != b.fingerprint
    ]
    return median(gaps) if gaps else None


def _rerun(before: RunPoint, after: RunPoint, cadence: Optional[float]) -> bool:
    """``after`` caught the table as ``before`` left it (the same fingerprint), sooner than half
    the usual gap between loads: a run again off their rhythm, not one more interval of loads.
    Its change (none) is no measure of the usual change; whether the table stays still for too
    long is `stale_table`'s to judge, by the time since it last moved."""
    return (
        cadence is not None
        and before.fingerprint == after.fingerprint
        and (after.moment - before.moment).total_seconds() < cadence / 2
    )


def volume_anomaly(table: str, history: list[RunPoint], current: RunPoint, excluded: set[str]) -> Optional[IssueModel]:
    """The row-count change since the previous run outside the band of earlier changes.

    A reviewed run leaves its change out (the rows it added or lost), not its row count: the
    next change is measured from it, as the table really stood."""
    if not history:
        return None
    kept = history
    cadence = _cadence(history)
    if _rerun(history[-1], current, cadence):
        return None
    changes = [
        (b.moment, float(b.rows - a.rows))
        for a, b in zip(history, history[1:])
        if b.timestamp not in excluded and not _rerun(a, b, cadence)
    ]
    change = float(current.rows - kept[-1].rows)
    floor = max(VOLUME_FLOOR, VOLUME_FLOOR_SHARE * abs(median(v for _, v in changes))) if changes else 0
    band = expected_band(changes, current.moment, floor=floor)
    if band is None:
        return _early_drop(table, kept, current, changes, excluded)
    if band.holds(change):
        return None
    share = abs(change - band.expected) / max(kept[-1].rows, 1)
    severity: Severity = "high" if share >= 0.2 or current.rows == 0 else "medium" if share >= 0.02 else "low"
    if band.short:
        severity = _lower(severity)
    direction = "below" if change < band.low else "above"
    shown = [*kept, current]
    return _issue(
        table,
        "volume_anomaly",
        None,
        severity=severity,
        columns=[],
        rows=abs(int(change - band.expected)),
        description=(
            f"The row count changed by {change:+,.0f} since the previous run ({kept[-1].rows:,} -> "
            f"{current.rows:,}), {direction} the expected change {band.low:+,.0f} to {band.high:+,.0f} "
            f"drawn from {band.describe()}."
        ),
        action="Check the loads since the previous run (missing or duplicated batches, a truncate, a backfill); "
        "mark it expected if the change is planned, so it stays out of the baseline.",
        details={
            "rows": current.rows,
            "previous_rows": kept[-1].rows,
            "change": change,
            "band": band.evidence(),
            "history_changes": [v for _, v in changes][-CHART_RUNS:],
            "excluded_runs": sorted(excluded),
            "chart": _chart(
                shown,
                {"rows": [float(p.rows) for p in shown], **_band_marks(len(shown), band, kept[-1].rows)},
                "rows per run",
                unit="rows",
            ),
        },
    )


def _early_drop(
    table: str, history: list[RunPoint], current: RunPoint, changes: list[tuple[Any, float]], excluded: set[str]
) -> Optional[IssueModel]:
    """Before the band can be drawn (fewer earlier changes than it needs): a table that lost all its
    rows, or more than half of them, since the previous run.  Raised a step lower than a change
    beyond a band, since no band says what is usual for this table yet."""
    previous = history[-1].rows
    lost = previous - current.rows
    if previous <= 0 or current.rows >= previous * (1 - EARLY_DROP_SHARE) or (current.rows and lost <= VOLUME_FLOOR):
        return None
    shown = [*history, current]
    runs = "1 earlier run" if len(history) == 1 else f"{len(history)} earlier runs"
    return _issue(
        table,
        "volume_anomaly",
        None,
        severity=_lower("high"),
        columns=[],
        rows=lost,
        description=(
            f"The row count fell by {lost:,} since the previous run ({previous:,} -> {current.rows:,}, "
            f"{'every row' if current.rows == 0 else f'{100 * lost / previous:.0f}% of the rows'}); "
            f"there are only {runs}, too few for a band of the usual change ({MIN_POINTS} changes "
            "needed), but a loss of more than half is raised all the same."
        ),
        action="Check the loads since the previous run (a truncate, a failed or partial load, a delete); "
        "mark it expected if the change is planned, so it stays out of the baseline.",
        details={
            "rows": current.rows,
            "previous_rows": previous,
            "change": float(-lost),
            "band": None,
            "short_history": {"earlier_runs": len(history), "changes": len(changes), "needed": MIN_POINTS},
            "history_changes": [v for _, v in changes][-CHART_RUNS:],
            "excluded_runs": sorted(excluded),
            "chart": _chart(shown, {"rows": [float(p.rows) for p in shown]}, "rows per run", unit="rows"),
        },
    )


# ------------------------------------------------------------------ freshness


def _stale_id(table: str, current: RunPoint) -> str:
    return f"{table}_stale_table" + (f"_{current.update_column}" if current.update_column else "")


def _key(point: RunPoint) -> str:
    return point.max_updated or "" if point.update_column else point.fingerprint


def stale_table(table: str, history: list[RunPoint], current: RunPoint, excluded: set[str]) -> Optional[IssueModel]:
    """The update column (or the fingerprint) has not moved for longer than its usual interval."""
    if not history or _key(current) != _key(history[-1]):
        return None
    changes = [b for a, b in zip(history, history[1:]) if _key(a) != _key(b)]
    # an interval around a run a reviewer explained (a holiday, a planned pause) is no baseline
    intervals = [
        (b.moment - a.moment).total_seconds()
        for a, b in zip(changes, changes[1:])
        if not any(a.timestamp < run <= b.timestamp for run in excluded)
    ]
    if len(intervals) < MIN_CHANGES:
        return None
    last = changes[-1].moment
    age = (current.moment - last).total_seconds()
    usual = median(intervals)
    days = {p.moment.date() for p in history}
    seasonal = len(days) >= 14
    # with two weeks of history the longest gap seen (a weekend) is still usual
    limit = max(STALE_FACTOR * usual, max(intervals) if seasonal else 0.0)
    if age <= limit:
        return None
    what = f"column {current.update_column!r}" if current.update_column else "fingerprint"
    severity: Severity = "high" if age > 2 * limit else "medium"
    short = "" if seasonal else f" The history is short ({len(days)} days): the weekly rhythm is not known yet."
    shown = [*history, current]
    moved = [1.0 if i and _key(p) != _key(shown[i - 1]) else 0.0 for i, p in enumerate(shown)]
    return _issue(
        table,
        "stale_table",
        current.update_column,
        severity=_lower(severity) if not seasonal else severity,
        columns=[current.update_column] if current.update_column else [],
        description=(
            f"The table's {what} has not moved for {_duration(age)} (since {changes[-1].timestamp}); "
            f"it usually changes every {_duration(usual)}, and {_duration(limit)} is the most "
            f"expected.{short}"
        ),
        action="Check the job that loads this table; mark it expected if the pause is planned.",
        details={
            "since": changes[-1].timestamp,
            "age_hours": round(age / 3600, 2),
            "usual_interval_hours": round(usual / 3600, 2),
            "limit_hours": round(limit / 3600, 2),
            "intervals_hours": [round(i / 3600, 2) for i in intervals][-CHART_RUNS:],
            "watched": what,
            "excluded_runs": sorted(excluded),
            "chart": _chart(shown, {"changed": moved}, "runs where the table changed (1) or not (0)"),
        },
    )


def _duration(seconds: float) -> str:
    return f"{seconds / 86400:.1f} days" if seconds >= 2 * 86400 else f"{seconds / 3600:.1f} hours"


# ------------------------------------------------------------------ schema


def _profile(point: RunPoint) -> TableProfile:
    """Enough of a profile for `column_renames` (which reads the columns only)."""
    return TableProfile.model_construct(
        columns=[
            ColumnProfile.model_construct(
                name=name,
                dtype=c.dtype,
                kind=c.kind,
                semantic_type=c.semantic_type,
                count=c.count,
                nulls=c.nulls,
                null_fraction=c.null_fraction,
                distinct=c.distinct,
                min=c.min,
                max=c.max,
            )
            for name, c in point.columns.items()
        ]
    )


def schema_change(table: str, history: list[RunPoint], current: RunPoint) -> Optional[IssueModel]:
    """Columns added, dropped, retyped or renamed since the previous run."""
    if not history:
        return None
    before, after = history[-1].columns, current.columns
    if [(n, c.dtype) for n, c in before.items()] == [(n, c.dtype) for n, c in after.items()]:
        return None
    renamed = column_renames(_profile(history[-1]), _profile(current))
    dropped = [c for c in before if c not in after and c not in renamed]
    added = [c for c in after if c not in before and c not in renamed.values()]
    retyped = {c: [before[c].dtype, after[c].dtype] for c in before if c in after and before[c].dtype != after[c].dtype}
    if not (dropped or added or retyped or renamed):
        return None
    severity: Severity = "high" if dropped or retyped else "medium" if renamed else "low"
    parts = [
        f"{label} {', '.join(repr(n) for n in names)}"
        for label, names in (
            ("dropped", dropped),
            ("added", added),
            ("retyped", list(retyped)),
            ("renamed", [f"{a} -> {b}" for a, b in renamed.items()]),
        )
        if names
    ]
    shown = [*history, current]
    return _issue(
        table,
        "schema_change",
        None,
        severity=severity,
        columns=sorted({*dropped, *added, *retyped, *renamed.values()}),
        description=f"The schema changed since the previous run ({history[-1].timestamp}): {'; '.join(parts)}.",
        action="Check that readers of this table (reports, jobs, the catalog script) follow the new schema.",
        details={
            "previous_run": history[-1].timestamp,
            "dropped": dropped,
            "added": added,
            "retyped": retyped,
            "renamed": renamed,
            "chart": _chart(
                shown, {"columns": [float(len(p.columns)) for p in shown]}, "columns per run", unit="columns"
            ),
        },
    )


# ------------------------------------------------------------------ distributions


def distribution_drift(
    table: str, history: list[RunPoint], current: RunPoint, excluded: dict[str, set[str]]
) -> list[IssueModel]:
    found = []
    for name, now in current.columns.items():
        issue_id = f"{table}_distribution_drift_{name}"
        kept = [
            p
            for p in history
            if p.timestamp not in excluded.get(issue_id, ())
            and name in p.columns
            and p.columns[name].dtype == now.dtype
        ]
        if not kept:
            continue
        drift = column_drift(name, [(p.moment, p.columns[name]) for p in kept], (current.moment, now))
        if drift is None:
            continue
        shown = [*kept, current]
        nulls = [p.columns[name].null_fraction for p in shown]
        ratio = [
            (c.distinct / c.count) if c.distinct is not None and c.count else None
            for c in (p.columns[name] for p in shown)
        ]
        severity = drift.severity if not drift.short else _lower(drift.severity)
        found.append(
            _issue(
                table,
                "distribution_drift",
                name,
                severity=severity,
                columns=[name],
                description=f"Column {name!r} drifted since the earlier runs: {'; '.join(drift.reasons)}.",
                action="Check what changed in the data feeding this column (a new source, a unit or code change); "
                "mark it expected if the change is real and lasting.",
                details={
                    **drift.evidence,
                    "previous_run": kept[-1].timestamp,
                    "excluded_runs": sorted(excluded.get(issue_id, ())),
                    "chart": _chart(
                        shown,
                        {"null rate": nulls, "distinct ratio": ratio},
                        f"{name}: null rate and distinct values per value",
                        percent=True,
                    ),
                },
            )
        )
    return found


# ------------------------------------------------------------------ all of them


def findings(
    table: str, history: list[RunPoint], current: RunPoint, reviews: Iterable[Review] = ()
) -> list[IssueModel]:
    """The history findings of ``current`` given the earlier runs (oldest first)."""
    excluded = excluded_runs(reviews)
    # table-wide findings name no column: the page would tag every column with them
    found = [
        volume_anomaly(table, history, current, excluded.get(f"{table}_volume_anomaly", set())),
        schema_change(table, history, current),
    ]
    if current.rows == 0:  # an empty table is its own finding: only the loss of its rows and its schema speak
        return [i for i in found if i is not None]
    found.append(stale_table(table, history, current, excluded.get(_stale_id(table, current), set())))
    return [i for i in found if i is not None] + distribution_drift(table, history, current, excluded)


def history_findings(
    store: Store,
    prefix: str,
    timestamp: str,
    profile: TableProfile,
    reviews: Optional[list[Review]] = None,
    runs: Optional[list[str]] = None,
) -> list[IssueModel]:
    """The findings of this run (``timestamp``, its ``profile``) against the table's stored history;
    keeps the table's history digest up to date.  ``reviews``: the table's review log, and ``runs``:
    its run folders, if read already."""
    current = point_of(timestamp, profile)
    history = load_history(store, prefix, timestamp, current=current, runs=runs)
    return findings(profile.table, history, current, store.read_reviews(prefix) if reviews is None else reviews)
