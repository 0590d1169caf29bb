"""AgentResource: who understands a table and reviews its issues.

`HeuristicAgent` is offline and deterministic: the default, and the fallback
whenever a language model fails (seed 001).  An LLM-backed agent implements the
same interface; the investigations stage adds `investigate` to it.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from datetime import datetime, timezone
from typing import Optional

import dagster as dg
from pydantic import BaseModel, Field

from cataloger_dagster.core import text
from cataloger_dagster.core.models import (
    SEVERITIES,
    AnalysisResultModel,
    ColumnProfile,
    ColumnSummaryModel,
    DatasetSummaryModel,
    DatasetUnderstandingModel,
    IssueModel,
    TableProfile,
    severity_counts,
)
from cataloger_dagster.core.investigate.investigator import InvestigationRun, PreviousScript, run_investigations
from cataloger_dagster.resources.sandbox import SandboxRuntime


class AgentUsage(BaseModel):
    """What one stage cost, and whether it fell back to the heuristics."""

    agent: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    prompt_version: Optional[str] = None
    fallback_reason: Optional[str] = None

    @property
    def tokens(self) -> int:
        """Every token the stage sent or received, cached ones included."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_creation_tokens


class AgentResource(dg.ConfigurableResource, ABC):
    @property
    @abstractmethod
    def kind(self) -> str: ...

    @abstractmethod
    def understand(self, profile: TableProfile) -> tuple[DatasetUnderstandingModel, AgentUsage]: ...

    @abstractmethod
    def review_issues(
        self,
        profile: TableProfile,
        understanding: DatasetUnderstandingModel,
        detected: list[IssueModel],
        *,
        previous: AnalysisResultModel | None = None,
    ) -> tuple[AnalysisResultModel, AgentUsage]: ...

    @abstractmethod
    def investigate(
        self,
        runtime: SandboxRuntime,
        profile: TableProfile,
        understanding: DatasetUnderstandingModel,
        issues: list[IssueModel],
        previous: PreviousScript | None,
    ) -> tuple[InvestigationRun, AgentUsage]:
        """Prove or refute each issue with code run in `runtime`, starting from
        `previous` (seed 000's previous_script) when given."""


class HeuristicAgent(AgentResource):
    """Rule-based understanding from names and statistics; issues as detected."""

    # (A resource needs at least one field: Dagster 1.13 reads a field-less
    # resource through pydantic's deprecated `__fields__`.)
    examples: int = Field(default=5, description="Example values or rows kept as evidence per finding")

    @property
    def kind(self) -> str:
        return "heuristic"

    def understand(self, profile: TableProfile) -> tuple[DatasetUnderstandingModel, AgentUsage]:
        return heuristic_understanding(profile), AgentUsage(agent=self.kind)

    def review_issues(self, profile, understanding, detected, *, previous=None):
        return heuristic_analysis(profile, detected, previous=previous), AgentUsage(agent=self.kind)

    def investigate(self, runtime, profile, understanding, issues, previous):
        return run_investigations(runtime, profile.table, issues, previous), AgentUsage(agent=self.kind)


# ---------------------------------------------------------------------------
# the heuristics, usable by any agent as its fallback
# ---------------------------------------------------------------------------

_SUFFIX_MEANINGS = [
    (r"_id$", "Identifier of the {stem}"),
    (r"^id$", "Unique identifier of each {entity}"),
    (r"_(at|ts|time|timestamp)$", "When the {stem} happened"),
    (r"_(date|day|on)$", "Date of the {stem}"),
    (r"(^|_)(email|e_mail)$", "Email address of the {entity}"),
    (r"(^|_)(phone|mobile|tel)", "Phone number of the {entity}"),
    (r"(^|_)(url|website|link)$", "Web address"),
    (r"(^|_)(status|state)$", "Current status of the {entity} (a small set of values)"),
    (r"(^|_)(type|kind|category|segment|channel|tier)$", "Category the {entity} belongs to"),
    (r"(^|_)(qty|quantity|count|units)$", "Number of units"),
    (r"(^|_)(price|amount|total|cost|revenue|value)", "Money amount ({stem})"),
    (r"(^|_)(name|title)$", "Name of the {entity}"),
    (r"(^|_)(country|city|region|zip|postal)", "Location: {stem}"),
    (r"^is_|^has_|_flag$", "Yes/no flag: {stem}"),
]


def _phrase(name: str) -> str:
    """A name as lower-case words for a sentence: ``order_items`` -> ``order items``."""
    return " ".join(text.words(name))


def _data_type(col: ColumnProfile) -> str:
    if col.kind == "boolean":
        return "boolean"
    if col.kind in ("date", "timestamp"):
        return "date"
    if col.kind in ("integer", "decimal", "float"):
        if col.distinct is not None and col.distinct <= 12 and col.count > 50 and not col.name.endswith("id"):
            return "categorical"
        return "numeric"
    if col.semantic_type == "date":
        return "date"
    if col.semantic_type == "category":
        return "categorical"
    return "string"


def _describe_column(col: ColumnProfile, entity: str, row_count: int) -> str:
    lowered = col.name.lower()
    meaning = None
    for pattern, template in _SUFFIX_MEANINGS:
        if re.search(pattern, lowered):
            stem = _phrase(re.sub(pattern, "", lowered)) or entity
            meaning = template.format(stem=stem, entity=entity)
            break
    if meaning is None:
        meaning = f"{_phrase(col.name).capitalize()} of the {entity}"
    facts = []
    if col.count and col.distinct is not None and col.distinct == col.count == row_count:
        facts.append("unique for every row")
    elif col.top_values and col.distinct is not None and col.distinct <= 20:
        shown = ", ".join(repr(v.value) for v in col.top_values[:3])
        facts.append(f"{col.distinct} distinct values, most often {shown}")
    if col.semantic_type in ("email", "url", "uuid", "phone"):
        facts.append(f"holds {col.semantic_type} values")
    if col.semantic_type in ("number", "date") and col.kind == "string":
        facts.append(f"{col.semantic_type}s stored as text")
    if col.null_fraction > 0:
        facts.append(f"{col.null_fraction:.0%} missing")
    return meaning + (" — " + "; ".join(facts) if facts else "") + "."


def heuristic_understanding(profile: TableProfile) -> DatasetUnderstandingModel:
    entity = text.singular(_phrase(profile.table.split(".")[-1]))
    columns = [
        ColumnSummaryModel(
            name=col.name,
            dataType=_data_type(col),
            description=_describe_column(col, entity, profile.row_count),
            sampleValues=[row.get(col.name) for row in profile.sample_rows[:3]],
        )
        for col in profile.columns
    ]
    keys = [c.name for c in profile.columns if c.count == profile.row_count > 0 and c.distinct == c.count]
    dates = [c for c in profile.columns if c.kind in ("date", "timestamp") and c.min is not None]
    observations = []
    if keys:
        observations.append(f"Each row is identified by {keys[0]}.")
    for c in dates[:2]:
        observations.append(f"{c.name} runs from {c.min} to {c.max}.")
    gappy = sorted((c for c in profile.columns if c.null_fraction > 0), key=lambda c: -c.null_fraction)
    if gappy:
        observations.append(
            "Most often missing: " + ", ".join(f"{c.name} ({c.null_fraction:.0%})" for c in gappy[:3]) + "."
        )
    links = [c.name for c in profile.columns if c.name.lower().endswith("_id") and c.name not in keys[:1]]
    if links:
        observations.append("Links to other tables through " + ", ".join(links) + ".")
    description = (
        f"{profile.table} holds {profile.row_count:,} {entity} records with {profile.column_count} "
        f"attributes" + (f", one row per {entity} ({keys[0]})." if keys else ".")
    )
    return DatasetUnderstandingModel(
        summary=DatasetSummaryModel(
            name=profile.table,
            description=description,
            rowCount=profile.row_count,
            columnCount=profile.column_count,
            observations=observations,
        ),
        columns=columns,
        suggested_context=(
            f"The {profile.table} table records {entity} data"
            + (f" keyed by {keys[0]}" if keys else "")
            + (f" and links to other tables via {', '.join(links)}" if links else "")
            + ". Descriptions were inferred from column names and statistics, without a language model."
        ),
    )


_SEVERITY_ORDER = {s: n for n, s in enumerate(SEVERITIES)}


def heuristic_analysis(
    profile: TableProfile, detected: list[IssueModel], *, previous: AnalysisResultModel | None = None
) -> AnalysisResultModel:
    issues = sorted(detected, key=lambda i: (_SEVERITY_ORDER[i.severity], i.id))
    counts = severity_counts(i.severity for i in issues)
    if issues:
        summary = (
            f"{len(issues)} data-quality issues in {profile.table}: "
            f"{counts['high']} high, {counts['medium']} medium, {counts['low']} low."
        )
    else:
        summary = f"No data-quality issues found in {profile.table}."
    if previous is not None:
        before = {i.id for i in previous.issues}
        now = {i.id for i in issues}
        summary += f" Since the previous run: {len(now - before)} new, {len(before - now)} resolved."
    return AnalysisResultModel(
        issues=issues,
        summary=summary,
        completedAt=datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
    )
