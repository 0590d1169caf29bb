"""Every run of one table, for its timelapse page: a few numbers per run, and the review log
read against each run's time.

Each run's catalog_page step writes those numbers as ``run_summary.json`` (`summarize_run`),
so the timelapse reads one small file per run however large the profile is.  Runs from
before that file existed are summarized from their results instead (slower, same numbers).
"""

from __future__ import annotations

from typing import Optional

from pydantic import BaseModel, Field

from cataloger_dagster.core.investigate.outcome import standing
from cataloger_dagster.core.layout import (
    RUN_SUMMARY,
    normalize_timestamp,
)
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    InvestigationsResult,
    TableProfile,
    severity_counts,
)
from cataloger_dagster.core.health import health_score
from cataloger_dagster.core.results import ScriptMetrics, load_result, load_run
from cataloger_dagster.core.reviews.model import Review
from cataloger_dagster.core.store import Store


class RunSummary(BaseModel):
    """One run's numbers (run_summary.json)."""

    timestamp: str
    status: str = "ok"  # ok, degraded, or incomplete (the run wrote no issues)
    rows: Optional[int] = None
    columns: Optional[int] = None
    issue_ids: list[str] = Field(default_factory=list)  # standing: raised and not refuted
    severities: dict[str, int] = Field(default_factory=dict)
    refuted: int = 0
    health: Optional[float] = None
    pass_rate: Optional[float] = None
    cells: Optional[int] = None
    tokens: Optional[int] = None
    explored: Optional[bool] = None
    fingerprint: Optional[str] = None  # the table's data the run cataloged (`cataloger run` resumes by it)


class TimelapseRow(BaseModel):
    """A run with the reviews in force when it ran (the latest verdict per issue before it)."""

    run: RunSummary
    open: int = 0  # standing issues not dismissed or expected by a review in force
    dismissed: int = 0  # issues whose verdict in force is "dismiss" (raised again or not)
    expected: int = 0
    accepted: int = 0


def summarize_run(
    timestamp: str,
    profile: TableProfile,
    issues: AnalysisResultModel,
    investigations: Optional[InvestigationsResult],
    tokens: Optional[int] = None,
) -> RunSummary:
    kept = standing(issues, investigations.investigations if investigations else None)
    pass_rate = investigations.pass_rate if investigations else None
    return RunSummary(
        timestamp=timestamp,
        status=issues.status,
        rows=profile.row_count,
        columns=profile.column_count,
        issue_ids=[i.id for i in kept.issues],
        severities=severity_counts(i.severity for i in kept.issues),
        refuted=len(issues.issues) - len(kept.issues),
        health=health_score(profile, kept, pass_rate),
        pass_rate=pass_rate,
        cells=investigations.cells if investigations else None,
        tokens=tokens,
        explored=investigations.explored if investigations else None,
        fingerprint=profile.fingerprint.value,
    )


def _rebuilt(store: Store, prefix: str, timestamp: str) -> RunSummary:
    """A run from before run_summary.json, summarized from its results."""
    run = load_run(store, prefix, timestamp)
    profile, issues = run.profile, run.issues
    if profile is None or issues is None:
        return RunSummary(timestamp=timestamp, status="incomplete", rows=profile.row_count if profile else None)
    summary = summarize_run(timestamp, profile, issues, run.investigations)
    if run.investigations is None:  # the cells of a run without investigations.json are in its metrics, if anywhere
        metrics = run.metrics or ScriptMetrics()
        summary = summary.model_copy(update={"pass_rate": metrics.pass_rate, "cells": metrics.cells})
    return summary


def run_summaries(store: Store, prefix: str) -> list[RunSummary]:
    """Every run of the table, oldest first."""
    summaries = []
    for timestamp in store.list_runs(prefix):
        found = load_result(store, prefix, timestamp, RUN_SUMMARY, RunSummary)
        summaries.append(found if found is not None else _rebuilt(store, prefix, timestamp))
    return summaries


def recent_summaries(store: Store, prefix: str, *, before: str, limit: int) -> list[RunSummary]:
    """The latest ``limit`` runs before ``before`` that got as far as their issues, oldest first
    (newest first they are read, so a long history costs only the runs shown)."""
    found: list[RunSummary] = []
    for timestamp in reversed(store.list_runs(prefix)):
        if len(found) >= limit:
            break
        if timestamp >= before:
            continue
        stored = load_result(store, prefix, timestamp, RUN_SUMMARY, RunSummary)
        summary = stored if stored is not None else _rebuilt(store, prefix, timestamp)
        if summary.status != "incomplete":
            found.append(summary)
    return found[::-1]


def in_force(reviews: list[Review], before: str) -> dict[str, str]:
    """issue id -> verdict of its latest review made before ``before`` (a run's timestamp)."""
    verdicts: dict[str, str] = {}
    for review in reviews:  # oldest first
        if normalize_timestamp(review.at) < before:
            verdicts[review.issue_id] = review.verdict
    return verdicts


def timelapse_rows(summaries: list[RunSummary], reviews: list[Review]) -> list[TimelapseRow]:
    rows = []
    for run in summaries:
        verdicts = in_force(reviews, run.timestamp)
        counts = {v: sum(1 for x in verdicts.values() if x == v) for v in ("dismiss", "expected", "accept")}
        still_open = [i for i in run.issue_ids if verdicts.get(i) not in ("dismiss", "expected")]
        rows.append(
            TimelapseRow(
                run=run,
                open=len(still_open),
                dismissed=counts["dismiss"],
                expected=counts["expected"],
                accepted=counts["accept"],
            )
        )
    return rows
