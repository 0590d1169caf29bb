"""One catalog run over every table of a database, computed as the assets compute it, and how
two runs differ: for the backend-parity tests (tests/e2e/test_backend_parity.py on the planted
demo, tests/e2e/test_real_data_parity.py on the real-data corpus).

As table_profile and quality_issues do: the resource's catalog and fingerprints, the profile,
every detector with the catalog of all tables, the degradations of both stages (the table's
status), and the page's health score.  The tables are checked in turn with one `shared` dict,
so that the other tables' keys are read once per run rather than once per table: the same
queries, not repeated.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

from degraded import Problem, lost_statistics, skipped_detectors

from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.models import AnalysisResultModel, IssueModel
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.core.health import health_score
from cataloger_dagster.resources.database.resource import DatabaseResource

Finding = tuple[str, str, tuple[str, ...]]  # (table, issue type, columns)


@dataclass
class Run:
    """What the catalog found in one database."""

    issues: dict[str, list[IssueModel]] = field(default_factory=dict)
    findings: dict[Finding, int | None] = field(default_factory=dict)  # -> affected rows
    health: dict[str, float] = field(default_factory=dict)
    degraded: list[Problem] = field(default_factory=list)   # (table or table.column, reason)
    problems: list[Problem] = field(default_factory=list)   # statistics lost, detectors skipped
    seconds: float = 0.0                                    # the whole run, catalog included


def catalog(url: str, *, now: datetime, database: str | None = None) -> Run:
    """Profile and detectors on every table of the database at `url`."""
    run = Run()
    started = time.perf_counter()
    db = DatabaseResource(url=url)
    try:
        with skipped_detectors() as skipped:
            tables = db.catalog()
            shared: dict = {}   # the other tables' keys, read once for the run, as the runner's run_state
            for name in sorted(tables):
                profile = compute_profile(tables[name], database=database or db.database_name,
                                          table_name=name, fingerprint=db.fingerprint(name))
                run.problems += lost_statistics(name, profile)
                degradations = list(profile.degradations)
                issues = detect_issues(tables[name], profile, catalog=tables, now=now,
                                       degradations=degradations, shared=shared)
                run.issues[name] = issues
                for issue in issues:
                    run.findings[finding(name, issue)] = issue.affectedRows
                result = AnalysisResultModel(issues=issues, summary="", completedAt=now.isoformat(),
                                             degradations=degradations)
                run.health[name] = health_score(profile, result)
                run.degraded += [(f"{name}.{d.column}" if d.column else name, f"{d.stage}: {d.reason}")
                                 for d in degradations]
        run.problems += skipped
    finally:
        db.close()
    run.seconds = time.perf_counter() - started
    return run


def finding(table: str, issue: IssueModel) -> Finding:
    return table, issue.type, tuple(sorted(issue.affectedColumns))


def differences(reference: Run, other: Run) -> list[str]:
    """Every finding, affected row count and health score in which `other` differs."""
    out = []
    for f in sorted(reference.findings.keys() - other.findings.keys()):
        out.append(f"missing {f}")
    for f in sorted(other.findings.keys() - reference.findings.keys()):
        out.append(f"extra {f} ({other.findings[f]} rows)")
    for f in sorted(reference.findings.keys() & other.findings.keys()):
        if reference.findings[f] != other.findings[f]:
            out.append(f"rows {f}: {other.findings[f]} against {reference.findings[f]}")
    for table, score in sorted(reference.health.items()):
        if other.health.get(table) != score:
            out.append(f"health {table}: {other.health.get(table)} against {score}")
    return out
