"""What one table's investigations come to: the result (investigations.json) and the
script's metrics (catalog_script.metrics.json), which the feedback loop ranks by."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from cataloger_dagster.core.investigate.investigator import InvestigationRun, PreviousScript
from cataloger_dagster.core.investigate.ranking import CATALOG
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    CodeInvestigation,
    InvestigationsResult,
    IssueModel,
    TableProfile,
    pass_rate,
)

VERDICTS = ("confirmed", "refuted", "inconclusive")


@dataclass(frozen=True)
class SessionStats:
    """What the sandbox session cost."""

    cells: int
    seconds: float
    cell_seconds: list[float]
    wall_seconds: float


@dataclass(frozen=True)
class SampleSeen:
    """What the sandbox saw of the table: all of it, or a seeded sample."""

    rows: int  # rows in the snapshot
    table_rows: int  # rows in the table
    seed: Optional[int] = None

    @property
    def sampled(self) -> bool:
        return self.rows < self.table_rows


# an issue's count and its investigation's may differ by this share (or 2 rows) before it is said
COUNT_TOLERANCE = 0.10


def honest_counts(
    investigations: list[CodeInvestigation], issues: list[IssueModel], seen: Optional[SampleSeen]
) -> list[CodeInvestigation]:
    """The investigations with their counts made comparable to the issues': a sample says it is one
    and its counts are scaled to the table beside the counted ones, and where the investigation's
    count and the issue's still differ, it says both (never silently).  The evidence itself stays
    what the code printed, so the stored script reproduces it."""
    by_id = {i.id: i for i in issues}
    out = []
    for inv in investigations:
        update: dict[str, Any] = {}
        counted = inv.affected
        if seen is not None and seen.sampled:
            update["sample"] = {"rows_seen": seen.rows, "table_rows": seen.table_rows, "seed": seen.seed}
            if counted is not None and seen.rows:
                counted = round(counted * seen.table_rows / seen.rows)
                update["affected_in_table"] = counted
        issue = by_id.get(inv.issue_id)
        if (
            issue is not None
            and issue.affectedRows is not None
            and counted is not None
            and inv.verdict
            and abs(counted - issue.affectedRows) > max(2, COUNT_TOLERANCE * issue.affectedRows)
        ):
            sampled = " (estimated for the table from the sample)" if "sample" in update else ""
            update["count_note"] = (
                f"the detector counted {issue.affectedRows:,} rows and the investigation {counted:,}{sampled}"
            )
        out.append(inv.model_copy(update=update) if update else inv)
    return out


def dismissed(investigations: Optional[list[CodeInvestigation]]) -> dict[str, CodeInvestigation]:
    """The issues their investigation refuted, by id: checked and dismissed.  They are listed apart
    and count nowhere (health, asset checks, `--json` issues, the index)."""
    return {i.issue_id: i for i in investigations or [] if i.issue_id and i.success and i.verdict == "refuted"}


def standing(issues: AnalysisResultModel, investigations: Optional[list[CodeInvestigation]]) -> AnalysisResultModel:
    """The issues that still stand once the refuted ones are set apart."""
    gone = dismissed(investigations)
    return issues.model_copy(update={"issues": [i for i in issues.issues if i.id not in gone]}) if gone else issues


def verdict_counts(investigations: list[CodeInvestigation]) -> dict[str, int]:
    return {v: sum(1 for i in investigations if i.verdict == v) for v in VERDICTS}


def investigations_result(
    table: str,
    run: InvestigationRun,
    previous: Optional[PreviousScript],
    session: SessionStats,
    *,
    backend: str,
    agent: str,
) -> InvestigationsResult:
    return InvestigationsResult(
        table=table,
        investigations=run.investigations,
        pass_rate=pass_rate(run.investigations),
        cells=session.cells,
        sandbox_seconds=round(session.seconds, 3),
        explored=previous is None,
        based_on=previous.timestamp if previous else None,
        based_on_table=previous.table if previous and previous.table != table else None,
        reused=run.reused,
        relearned=run.relearned,
        refreshed=run.refreshed,
        backend=backend,
        agent=agent,
    )


def script_metrics(
    result: InvestigationsResult,
    run: InvestigationRun,
    issues: list[IssueModel],
    profile: TableProfile,
    session: SessionStats,
    *,
    why: str,
    usage: dict[str, Any],
    tokens: int,
) -> dict[str, Any]:
    """The metrics stored beside the session script (the next run's ranking reads them)."""
    answered = [i.issue_id for i in run.investigations if i.success and i.verdict]
    return {
        "cells": session.cells,
        "seconds": round(session.seconds, 3),
        "cell_seconds": session.cell_seconds,
        "wall_seconds": session.wall_seconds,
        "pass_rate": result.pass_rate if result.pass_rate is not None else 1.0,
        "investigations": len(run.investigations),
        "answered": answered,
        "coverage": len(answered) / len(issues) if issues else 1.0,
        "verdicts": verdict_counts(run.investigations),
        "explored": result.explored,
        "based_on": result.based_on,
        "based_on_table": result.based_on_table,
        "reused": run.reused,
        "relearned": run.relearned,
        "refreshed": run.refreshed,
        "reuse_error": run.reuse_error,
        "why": why,
        "schema_hash": profile.fingerprint.schema_hash,
        "fingerprint": profile.fingerprint.value,
        "agent": result.agent,
        "tokens": tokens,
        "usage": usage,
        "backend": result.backend,
        "origin": CATALOG,
    }
