"""The investigations of the catalog's findings on corpus tables, run as the investigations asset
runs them: a snapshot of each table in the local sandbox (bubblewrap) and the heuristic agent's
checks. Their verdicts tell the open findings (those not refuted) from the others."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

from cataloger_dagster.core.investigate.code import referenced_tables
from cataloger_dagster.core.investigate.investigator import run_investigations
from cataloger_dagster.core.models import CodeInvestigation, IssueModel
from cataloger_dagster.resources.database.snapshots import SNAPSHOT_URL
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.sandbox import SandboxResource


def investigate(path: str | Path,
                found: Mapping[str, Iterable[IssueModel]]) -> dict[tuple[str, str], CodeInvestigation]:
    """{(table, issue id): its investigation} for the issues of the DuckDB file at `path`;
    one sandbox session per table."""
    database = DatabaseResource(url=f"duckdb://{path}")
    sandbox = SandboxResource(backend="local", isolation="bwrap")
    investigations = {}
    try:
        for table, issues in found.items():
            issues = list(issues)
            if not issues:
                continue
            with sandbox.session(env={"DB_CONNECTION_STRING": SNAPSHOT_URL}) as runtime:
                database.write_snapshot(table, runtime.data_dir, references=referenced_tables(issues))
                run = run_investigations(runtime, table, issues, explore=False)
            investigations.update({(table, i.issue_id): i for i in run.investigations})
    finally:
        database.close()
    return investigations


def verdicts(path: str | Path, found: Mapping[str, Iterable[IssueModel]]) -> dict[tuple[str, str], str]:
    """{(table, issue id): "confirmed" | "refuted" | "inconclusive"} (scoring.open_findings's input)."""
    return {key: inv.verdict or "inconclusive" for key, inv in investigate(path, found).items()}
