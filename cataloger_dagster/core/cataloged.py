"""A cataloged table as its latest complete run left it: what a catalog of tables (Dagster's asset
catalog) shows of it, in plain objects read from the store's stored results.

`cataloged_table` folds one run's results (profile, understanding, issues, investigations) into
a `CatalogedTable`: its columns with their meanings, its row count, description, open findings
(the refuted ones set apart, as everywhere), health, and the tables it references.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from cataloger_dagster.core.investigate.outcome import standing
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    DatasetUnderstandingModel,
    InvestigationsResult,
    Severity,
    TableProfile,
    severity_counts,
)
from cataloger_dagster.core.health import health_band, health_score
from cataloger_dagster.core.sensitive.hypotheses import standing_classes, with_verdicts
from cataloger_dagster.core.sensitive.where import PersonalColumn, personal_column


@dataclass(frozen=True)
class CatalogedColumn:
    name: str
    type: str  # the database's type, as ibis names it ("int64", "string")
    nullable: bool
    description: str  # its meaning, from the understanding ("" when there is none)
    sensitive: tuple[str, ...] = ()  # the classes of personal or secret data it holds (core/sensitive)
    personal: Optional[PersonalColumn] = None  # its row of "where personal data lives"


@dataclass(frozen=True)
class CatalogedFinding:
    id: str
    type: str
    severity: Severity
    description: str
    columns: tuple[str, ...] = ()  # the columns it is about


@dataclass(frozen=True)
class CatalogedTable:
    database: str
    table: str
    run: str  # the run folder's timestamp
    row_count: int
    columns: tuple[CatalogedColumn, ...]
    description: str  # the understanding's summary of the table
    findings: tuple[CatalogedFinding, ...]  # open findings, most severe first
    health: float
    pass_rate: Optional[float]
    status: str  # "ok" or "degraded"
    references: tuple[str, ...]  # other tables this one's columns reference, sorted
    page: str  # the run's catalog page (a path or URL)
    timelapse: Optional[str] = None

    @property
    def findings_by_severity(self) -> dict[str, int]:
        return severity_counts(f.severity for f in self.findings)

    @property
    def health_band(self) -> str:
        return health_band(self.health)

    @property
    def worst_severity(self) -> str:
        """The most severe open finding's severity, or "none"."""
        return next((s for s, n in self.findings_by_severity.items() if n), "none")


def referenced_tables(issues: AnalysisResultModel, table: str) -> tuple[str, ...]:
    """The other tables this table's columns reference, as the reference search found them: every
    finding of orphan references names its target, reviewed or quieted ones too."""
    found = {
        i.details.get("target_table")
        for i in (*issues.issues, *issues.reviewed, *issues.quieted)
        if i.type == "orphan_references"
    }
    return tuple(sorted(t for t in found if isinstance(t, str) and t and t != table))


def cataloged_table(
    *,
    database: str,
    table: str,
    run: str,
    profile: TableProfile,
    understanding: Optional[DatasetUnderstandingModel],
    issues: AnalysisResultModel,
    investigations: Optional[InvestigationsResult],
    pass_rate: Optional[float],
    page: str,
    timelapse: Optional[str] = None,
) -> CatalogedTable:
    open_issues = standing(issues, investigations.investigations if investigations else None)
    profile = with_verdicts(profile, investigations.investigations if investigations else [])
    meanings = {c.name: c.description for c in understanding.columns} if understanding else {}
    order = {"high": 0, "medium": 1, "low": 2}
    return CatalogedTable(
        database=database,
        table=table,
        run=run,
        row_count=profile.row_count,
        columns=tuple(
            CatalogedColumn(
                name=c.name,
                type=c.dtype.lstrip("!"),
                nullable=c.nullable,
                description=meanings.get(c.name) or "",
                sensitive=tuple(s.name for s in standing_classes(c)),
                personal=personal_column(table, c),
            )
            for c in profile.columns
        ),
        description=understanding.summary.description if understanding else "",
        findings=tuple(
            CatalogedFinding(
                id=i.id,
                type=i.type,
                severity=i.severity,
                description=i.description,
                columns=tuple(i.affectedColumns),
            )
            for i in sorted(open_issues.issues, key=lambda i: order.get(i.severity, 3))
        ),
        health=health_score(profile, open_issues, pass_rate),
        pass_rate=pass_rate,
        status=open_issues.status,
        references=referenced_tables(issues, table),
        page=page,
        timelapse=timelapse,
    )
