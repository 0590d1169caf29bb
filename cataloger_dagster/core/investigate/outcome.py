"""What one table's investigations come to: the result (investigations.json) and the
script's metrics (catalog_script.metrics.json), which the feedback loop ranks by."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from cataloger_dagster.core.investigate.investigator import InvestigationRun, PreviousScript
from cataloger_dagster.core.models import CodeInvestigation, InvestigationsResult, IssueModel, TableProfile, pass_rate

VERDICTS = ("confirmed", "refuted", "inconclusive")


@dataclass(frozen=True)
class SessionStats:
    """What the sandbox session cost."""

    cells: int
    seconds: float
    cell_seconds: list[float]
    wall_seconds: float


def verdict_counts(investigations: list[CodeInvestigation]) -> dict[str, int]:
    return {v: sum(1 for i in investigations if i.verdict == v) for v in VERDICTS}


def investigations_result(table: str, run: InvestigationRun, previous: Optional[PreviousScript],
                          session: SessionStats, *, backend: str, agent: str) -> InvestigationsResult:
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


def script_metrics(result: InvestigationsResult, run: InvestigationRun, issues: list[IssueModel],
                   profile: TableProfile, session: SessionStats, *, why: str,
                   usage: dict[str, Any], tokens: int) -> dict[str, Any]:
    """The metrics stored beside the session script (seed 000's ranking reads them)."""
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
    }
