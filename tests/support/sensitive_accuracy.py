"""The classifier's recall on generated columns and precision on the real corpus, measured the same
way by the test (a small version) and by benchmarks/bench_sensitive_accuracy.py."""

from __future__ import annotations

from typing import Callable

import pyarrow as pa
import pyarrow.types as T

from cataloger_dagster.core.sensitive.classifier import SAMPLE_VALUES, ColumnValues, classify, sample_columns
from personal_columns import COLUMNS as COLUMNS_BY_CLASS, LOCALES, locale_table  # noqa: F401

# the corpus's columns that do hold personal data: the people who died in the 1992 Los Angeles
# riots, by name, with where they died (real people: a finding, not a false positive)
PERSONAL_IN_CORPUS = {
    ("la_riots", "first_name"),
    ("la_riots", "last_name"),
    ("la_riots", "address"),
    ("la_riots", "latitude"),
    ("la_riots", "longitude"),
}

Classifier = Callable[[list[ColumnValues], str], dict[str, set[str]]]


def catalogers(columns: list[ColumnValues], table: str) -> dict[str, set[str]]:
    return {name: {c.name for c in found} for name, found in classify(columns, table).items()}


def recall(classifier: Classifier, rows: int, opaque: bool = False, locales=LOCALES) -> tuple[float, list[str]]:
    """Share of generated columns whose class is found, and the misses; `opaque`: the columns are
    named c1, c2... (the values alone must tell)."""
    hits, misses = 0, []
    for locale in locales:
        kinds, data, expected = locale_table(locale, rows)
        if opaque:
            rename = {name: f"c{i}" for i, name in enumerate(kinds)}
            kinds = {rename[n]: k for n, k in kinds.items()}
            data = [{rename[n]: v for n, v in r.items()} for r in data]
            expected = {rename[n]: k for n, k in expected.items()}
        found = classifier(sample_columns(kinds, data), "" if opaque else "customers")
        for column, key in expected.items():
            if key in found.get(column, set()):
                hits += 1
            else:
                misses.append(f"{locale}.{column} ({key})")
    total = hits + len(misses)
    return hits / total, misses


def kind_of(t: pa.DataType) -> str:
    if T.is_integer(t):
        return "integer"
    if T.is_floating(t):
        return "float"
    if T.is_decimal(t):
        return "decimal"
    if T.is_string(t) or T.is_large_string(t):
        return "string"
    if T.is_date(t):
        return "date"
    if T.is_timestamp(t):
        return "timestamp"
    if T.is_boolean(t):
        return "boolean"
    return "other"


def corpus_precision(classifier: Classifier, tables: dict[str, pa.Table]) -> tuple[float, int, list[str]]:
    """Of the corpus's non-personal columns, the share left without a class; their number; those flagged.
    Each table is read as the profile reads it: its first SAMPLE_VALUES rows."""
    clean, flagged = 0, []
    for name, table in tables.items():
        kinds = {f.name: kind_of(f.type) for f in table.schema}
        found = classifier(sample_columns(kinds, table.slice(0, SAMPLE_VALUES).to_pylist()), name)
        for column in kinds:
            if (name, column) in PERSONAL_IN_CORPUS:
                continue
            if found.get(column):
                flagged.append(f"{name}.{column} {sorted(found[column])}")
            else:
                clean += 1
    total = clean + len(flagged)
    return clean / total, total, flagged
