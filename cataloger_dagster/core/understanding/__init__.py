"""The heuristic understanding of a table (a DatasetUnderstandingModel) from
its column names and statistics, without a language model: every agent's fallback."""

from __future__ import annotations

import re

from cataloger_dagster.core import text
from cataloger_dagster.core.models import (
    ColumnProfile,
    ColumnSummaryModel,
    DatasetSummaryModel,
    DatasetUnderstandingModel,
    TableProfile,
)

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
