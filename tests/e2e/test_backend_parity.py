"""Backend parity: the planted demo database in DuckDB, SQLite, PostgreSQL and MySQL/MariaDB
gives the same findings, affected row counts and health scores (issue 11, item 2).

DuckDB, loaded the same way as the others, is the reference.  A failure lists every
difference, and the profile notes and detector warnings that explain it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

import duckdb
import pytest
from backends import KINDS, load_tables

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
# words of the profile notes that say a statistic is missing, not merely undefined for the type
DEGRADED = ("failed", "not available", "cannot")


@dataclass
class Run:
    """What the catalog found in one backend."""

    findings: dict[Finding, int | None] = field(default_factory=dict)  # -> affected rows
    health: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # profile notes and detector warnings


class _Collect(logging.Handler):
    def __init__(self, into: list[str]):
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())


def _catalog(url: str) -> Run:
    run = Run()
    db = DatabaseResource(url=url)
    handler = _Collect(run.problems)
    detectors = logging.getLogger("cataloger_dagster.core.issues")
    detectors.addHandler(handler)
    try:
        catalog = db.catalog()
        for name, table in catalog.items():
            profile = compute_profile(table, database="demo", table_name=name, fingerprint=db.fingerprint(name))
            run.problems += [f"profile of {name}.{c.name}: {note}" for c in profile.columns
                             for note in c.notes if any(word in note for word in DEGRADED)]
            issues = detect_issues(table, profile, catalog=catalog, now=NOW)
            for issue in issues:
                run.findings[_finding(name, issue)] = issue.affectedRows
            result = AnalysisResultModel(issues=issues, summary="", completedAt=NOW.isoformat())
            run.health[name] = health_score(profile, result)
    finally:
        detectors.removeHandler(handler)
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
        + f"\nprofile notes and detector warnings in {kind}:\n  " + "\n  ".join(_grouped(runs[kind].problems))
    )


def _grouped(problems: list[str]) -> list[str]:
    """One line per distinct message (values, SQL and database names cut), how often, and where."""
    places: dict[str, list[str]] = {}
    for problem in problems:
        where, _, message = problem.partition(": ")
        message = message.split(" LINE 1:")[0]
        message = re.sub(r'"[^"]*"', '"..."', re.sub(r"FUNCTION \S+\.", "FUNCTION ", message))
        places.setdefault(message, []).append(where)
    return [f"{len(w)}x {m}  [{', '.join(w[:3])}{', ...' if len(w) > 3 else ''}]" for m, w in places.items()]
