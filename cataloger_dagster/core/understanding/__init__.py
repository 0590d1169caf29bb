"""The heuristic understanding of a table (a DatasetUnderstandingModel) from
its column names and statistics, without a language model: every agent's fallback."""

from __future__ import annotations

import re

from cataloger_dagster.core import text
from cataloger_dagster.core.grammar import count_noun, listing
from cataloger_dagster.core.families import families_of
from cataloger_dagster.core.models import (
    SummaryDataType,
    NUMERIC_KINDS,
    TEMPORAL_KINDS,
    ColumnProfile,
    ColumnSummaryModel,
    DatasetSummaryModel,
    DatasetUnderstandingModel,
    TableProfile,
)
from cataloger_dagster.core.profile.nulls import structural_nulls

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


def _data_type(col: ColumnProfile) -> SummaryDataType:
    if col.kind == "boolean":
        return "boolean"
    if col.kind in TEMPORAL_KINDS:
        return "date"
    if col.kind in NUMERIC_KINDS:
        if col.distinct is not None and col.distinct <= 12 and col.count > 50 and not col.name.endswith("id"):
            return "categorical"
        return "numeric"
    if col.semantic_type == "date":
        return "date"
    if col.semantic_type == "category":
        return "categorical"
    return "string"


def _describe_column(col: ColumnProfile, entity: str, row_count: int, why_null: str | None = None) -> str:
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
        facts.append(f"{count_noun(col.distinct, 'distinct value')}, most often {shown}")
    if col.semantic_type in ("email", "url", "uuid", "phone"):
        facts.append(f"holds {col.semantic_type} values")
    if col.semantic_type in ("number", "date") and col.kind == "string":
        facts.append(f"{col.semantic_type}s stored as text")
    if col.null_fraction > 0 and why_null:
        facts.append(f"{col.null_fraction:.0%} NULL by design ({why_null})")
    elif col.null_fraction > 0:
        facts.append(f"{col.null_fraction:.0%} missing")
    return meaning + (" — " + "; ".join(facts) if facts else "") + "."


def structure_observations(profile: TableProfile) -> list[str]:
    """What the data's shape says, once each: the column families, and the NULLs another
    column explains ("category is NULL exactly when wind < 65"), which are no defect."""
    said = [p.sentence for p in profile.null_patterns if p.kind != "not_null_when"]
    explained = structural_nulls(profile.null_patterns)
    for fam in families_of(profile):
        if not any(name in explained for name in fam.members):
            said.append(f"{fam.described()} are one measure over several columns, judged together.")
    return said


def _why_null(profile: TableProfile) -> dict[str, str]:
    why = {}
    for name, p in structural_nulls(profile.null_patterns).items():
        condition = p.sentence.split(" exactly when ", 1)
        why[name] = (
            f"exactly when {condition[1].rstrip('.')}"
            if len(condition) == 2
            else "NULL wherever the column before it is"
            if p.value == "up"
            else "NULL wherever the column after it is"
        )
    return why


def heuristic_understanding(profile: TableProfile) -> DatasetUnderstandingModel:
    entity = text.singular(_phrase(profile.table.split(".")[-1]))
    why = _why_null(profile)
    columns = [
        ColumnSummaryModel(
            name=col.name,
            dataType=_data_type(col),
            description=_describe_column(col, entity, profile.row_count, why.get(col.name)),
            sampleValues=[row.get(col.name) for row in profile.sample_rows[:3]],
        )
        for col in profile.columns
    ]
    keys = [c.name for c in profile.columns if c.count == profile.row_count > 0 and c.distinct == c.count]
    dates = [c for c in profile.columns if c.kind in TEMPORAL_KINDS and c.min is not None]
    observations = []
    if keys:
        observations.append(f"Each row is identified by {keys[0]}.")
    for c in dates[:2]:
        observations.append(f"{c.name} runs from {c.min} to {c.max}.")
    observations += structure_observations(profile)
    gappy = sorted(
        (c for c in profile.columns if c.null_fraction > 0 and c.name not in why), key=lambda c: -c.null_fraction
    )
    if gappy:
        observations.append(
            "Most often missing: " + ", ".join(f"{c.name} ({c.null_fraction:.0%})" for c in gappy[:3]) + "."
        )
    links = [c.name for c in profile.columns if c.name.lower().endswith("_id") and c.name not in keys[:1]]
    if links:
        observations.append(f"Links to other tables through {listing(links)}.")
    description = (
        f"{profile.table} holds {count_noun(profile.row_count, entity + ' record')} with "
        f"{count_noun(profile.column_count, 'attribute')}" + (f", one row per {entity} ({keys[0]})." if keys else ".")
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
            + (f" and links to other tables via {listing(links)}" if links else "")
            + ". Descriptions were inferred from column names and statistics, without a language model."
        ),
    )
