"""Metadata values the Dagster UI shows on the per-table materializations.

`dagster/column_schema` feeds the asset page's Columns tab; the Markdown summaries are
what a person reads on the materialization without opening the catalog page.  Every name,
value and sentence in them goes through `markdown_text` (`_cell`): a column named
``c![c](http://host/x)`` is text on the page, never an image the UI loads.
"""

from __future__ import annotations

import dagster as dg

from cataloger_dagster.core.sensitive.classes import column_tags
from cataloger_dagster.core.sensitive.hypotheses import standing_classes
from cataloger_dagster.core.shown import markdown_text
from cataloger_dagster.resources.agent import AgentUsage
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    ColumnProfile,
    DatasetUnderstandingModel,
    InvestigationsResult,
    TableProfile,
    severity_counts,
)


def _stats(c: ColumnProfile) -> str:
    parts = [c.semantic_type or c.kind]
    parts.append(f"{c.null_fraction:.1%} null")
    if c.distinct is not None:
        parts.append(f"{'~' if c.distinct_approximate else ''}{c.distinct:,} distinct")
    return " · ".join(str(p) for p in parts if p)


def column_schema(profile: TableProfile, understanding: DatasetUnderstandingModel | None = None) -> dg.TableSchema:
    """The table's columns; descriptions from the understanding when there is one, else from the profile.

    The profile is materialized before the understanding exists, so its own schema describes each
    column by its statistics; the understanding and the catalog page carry the plain-language ones.
    """
    described = {c.name: c.description for c in understanding.columns} if understanding else {}
    return dg.TableSchema(
        columns=[
            dg.TableColumn(
                name=c.name,
                type=c.dtype.lstrip("!"),
                description=_cell(described.get(c.name) or _stats(c)),
                constraints=dg.TableColumnConstraints(nullable=c.nullable),
                tags=column_tags([s.name for s in standing_classes(c)]),
            )
            for c in profile.columns
        ]
    )


def _cell(text: object) -> str:
    return markdown_text(text)


def profile_summary(profile: TableProfile) -> dg.MetadataValue:
    lines = [
        f"**{_cell(profile.table)}**: {profile.row_count:,} rows, {profile.column_count} columns",
        "",
        "| column | type | null | distinct |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {_cell(c.name)} | {_cell(c.semantic_type or c.dtype)} | {c.null_fraction:.1%} | "
        f"{'' if c.distinct is None else f'{c.distinct:,}'} |"
        for c in profile.columns
    ]
    return dg.MetadataValue.md("\n".join(lines))


def investigations_summary(result: InvestigationsResult) -> dg.MetadataValue:
    rate = "n/a (no issue)" if result.pass_rate is None else f"{result.pass_rate:.0%}"
    start = (
        f"reused the script of {_cell(result.based_on_table or result.table)} @ {_cell(result.based_on)}"
        if result.based_on
        else "explored afresh"
    )
    lines = [
        f"Pass rate **{rate}** over {len(result.investigations)} investigations; {start}; "
        f"{result.cells} sandbox cells in {result.sandbox_seconds:.1f}s",
        "",
        "| issue | verdict | code ran |",
        "|---|---|---|",
    ]
    lines += [
        f"| {_cell(i.issue_id)} | {_cell(i.verdict or '—')} | {'yes' if i.success else 'no: ' + _cell((i.error or '')[:80])} |"
        for i in result.investigations
    ]
    return dg.MetadataValue.md("\n".join(lines))


def catalog_summary(
    profile: TableProfile,
    understanding: DatasetUnderstandingModel,
    issues: AnalysisResultModel,
    investigations: InvestigationsResult,
) -> dg.MetadataValue:
    counts = severity_counts(i.severity for i in issues.issues)
    rate = "n/a" if investigations.pass_rate is None else f"{investigations.pass_rate:.0%}"
    lines = [
        f"### {_cell(profile.table)}",
        "",
        _cell(understanding.summary.description),
        "",
        f"- {profile.row_count:,} rows, {profile.column_count} columns",
        f"- issues: {counts['high']} high, {counts['medium']} medium, {counts['low']} low",
        *(
            [
                f"- reviewed, not raised: {len(issues.reviewed)} (dismissed or expected); "
                f"{len(issues.quieted)} quieted by learned precision"
            ]
            if issues.reviewed or issues.quieted
            else []
        ),
        f"- investigations pass rate: {rate} ({investigations.cells} sandbox cells)",
    ]
    lines += [f"- **{i.severity}** {_cell(i.description)}" for i in issues.issues if i.severity == "high"][:10]
    return dg.MetadataValue.md("\n".join(lines))


def review_metadata(issues: AnalysisResultModel) -> dict:
    """Open issues apart from the reviewed ones: how many are open, how many of those a person
    accepted (or saw come back), and how many reviews or learned precision set aside."""
    states = [i.review.state for i in issues.issues if i.review is not None]
    aside = [i.review.state for i in issues.reviewed if i.review is not None]
    return {
        "issues_open": len(issues.issues),
        "issues_accepted": states.count("accepted"),
        "issues_back_after_review": states.count("worse_since_dismissed") + states.count("changed_since_expected"),
        "issues_dismissed": aside.count("dismissed"),
        "issues_expected": aside.count("expected"),
        "issues_quieted": len(issues.quieted),
        "issues_lowered": sum(1 for i in issues.issues if i.precision is not None),
    }


def usage_metadata(usage: AgentUsage) -> dict:
    """What a stage's agent cost: every kind of token, and why it fell back, if it did."""
    return {
        "agent": usage.agent,
        "tokens": usage.tokens,
        "tokens_input": usage.input_tokens,
        "tokens_output": usage.output_tokens,
        "tokens_cache_read": usage.cache_read_tokens,
        "tokens_cache_creation": usage.cache_creation_tokens,
        "agent_calls": usage.calls,
        "prompt_version": usage.prompt_version or "",
        "fallback_reason": usage.fallback_reason or "",
    }
