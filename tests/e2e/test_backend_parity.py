"""Backend parity: the planted demo database in DuckDB, SQLite, PostgreSQL and MySQL/MariaDB
gives the same findings, affected row counts and health scores (issue 11, item 2).

DuckDB, loaded the same way as the others, is the reference.  A failure lists every
difference, and the profile notes and detector warnings that explain it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

import duckdb
import pytest
from backends import KINDS, load_tables
from degraded import grouped, lost_statistics, skipped_detectors

from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.models import AnalysisResultModel, IssueModel
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.core.render.pages import health_score
from cataloger_dagster.resources.database import DatabaseResource

pytestmark = [pytest.mark.postgres, pytest.mark.mysql, pytest.mark.slow]

REFERENCE = "duckdb"
# the detectors judge dates against "now": the same moment for every backend
NOW = datetime(2025, 6, 1, tzinfo=timezone.utc)

Finding = tuple[str, str, tuple[str, ...]]  # (table, issue type, columns)


@dataclass
class Run:
    """What the catalog found in one backend."""

    findings: dict[Finding, int | None] = field(default_factory=dict)  # -> affected rows
    health: dict[str, float] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)  # statistics lost, detectors skipped


def _catalog(url: str) -> Run:
    run = Run()
    db = DatabaseResource(url=url)
    try:
        with skipped_detectors() as skipped:
            catalog = db.catalog()
            for name, table in catalog.items():
                profile = compute_profile(table, database="demo", table_name=name,
                                          fingerprint=db.fingerprint(name))
                run.problems += lost_statistics(name, profile)
                issues = detect_issues(table, profile, catalog=catalog, now=NOW)
                for issue in issues:
                    run.findings[_finding(name, issue)] = issue.affectedRows
                result = AnalysisResultModel(issues=issues, summary="", completedAt=NOW.isoformat())
                run.health[name] = health_score(profile, result)
        run.problems += skipped
    finally:
        db.close()
    return run


def _finding(table: str, issue: IssueModel) -> Finding:
    return table, issue.type, tuple(sorted(issue.affectedColumns))


@pytest.fixture(scope="module")
def runs(demo_db, module_scratch) -> dict[str, Run]:
    with duckdb.connect(str(demo_db), read_only=True) as con:
        names = [row[0] for row in con.execute("SHOW TABLES").fetchall()]
        tables = {name: con.table(name).to_arrow_table() for name in names}
    return {kind: _catalog(load_tables(kind, tables, module_scratch)) for kind in KINDS}


def _differences(reference: Run, other: Run) -> list[str]:
    out = []
    for finding in sorted(reference.findings.keys() - other.findings.keys()):
        out.append(f"missing {finding}")
    for finding in sorted(other.findings.keys() - reference.findings.keys()):
        out.append(f"extra {finding} ({other.findings[finding]} rows)")
    for finding in sorted(reference.findings.keys() & other.findings.keys()):
        if reference.findings[finding] != other.findings[finding]:
            out.append(f"rows {finding}: {other.findings[finding]} against {reference.findings[finding]}")
    for table, score in sorted(reference.health.items()):
        if other.health.get(table) != score:
            out.append(f"health {table}: {other.health.get(table)} against {score}")
    return out


def test_the_reference_finds_the_planted_defects(runs):
    # a parity of nothing found would prove nothing
    assert len(runs[REFERENCE].findings) >= 10 and not runs[REFERENCE].problems, runs[REFERENCE].problems


@pytest.mark.parametrize("kind", [k for k in KINDS if k != REFERENCE])
def test_same_findings_rows_and_health_as_duckdb(runs, kind):
    differences = _differences(runs[REFERENCE], runs[kind])
    assert not differences, (
        f"{kind} differs from {REFERENCE} in {len(differences)} ways:\n  " + "\n  ".join(differences)
        + f"\nstatistics lost and detectors skipped in {kind}:\n  " + "\n  ".join(grouped(runs[kind].problems))
    )

