"""A table's fingerprint: what the sensors compare to decide a table changed."""

from __future__ import annotations

import hashlib
from typing import Sequence

import ibis
import ibis.expr.datatypes as dt

from cataloger_dagster.core.models import Fingerprint

# Names that usually hold a row's last-modified time.  When a table has one,
# its maximum joins the fingerprint so an in-place UPDATE is noticed even when
# the row count and schema stay the same.
DEFAULT_UPDATE_COLUMNS = (
    "updated_at",
    "modified_at",
    "last_modified",
    "last_updated",
    "_updated_at",
    "update_time",
    "updated",
)


def schema_hash(table: ibis.Table) -> str:
    text = "\n".join(f"{name}:{dtype}" for name, dtype in table.schema().items())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def update_column(table: ibis.Table, candidates: Sequence[str] = DEFAULT_UPDATE_COLUMNS) -> str | None:
    schema = table.schema()
    lowered = {name.lower(): name for name in schema.names}
    for candidate in candidates:
        name = lowered.get(candidate.lower())
        if name is not None and isinstance(schema[name], (dt.Timestamp, dt.Date)):
            return name
    return None


def compute_fingerprint(
    table: ibis.Table,
    *,
    row_count: int | None = None,
    update_columns: Sequence[str] = DEFAULT_UPDATE_COLUMNS,
) -> Fingerprint:
    """Schema hash + row count (+ max of an update column), in one query."""
    shash = schema_hash(table)
    ucol = update_column(table, update_columns)
    aggs = {}
    if row_count is None:
        aggs["n"] = table.count()
    if ucol is not None:
        aggs["max_updated"] = table[ucol].max()
    values = table.aggregate(**aggs).to_pyarrow().to_pylist()[0] if aggs else {}
    n = int(values["n"]) if row_count is None else int(row_count)
    max_updated = values.get("max_updated")
    max_text = (
        None
        if max_updated is None
        else (max_updated.isoformat() if hasattr(max_updated, "isoformat") else str(max_updated))
    )
    parts = f"{shash}|{n}|{ucol or ''}|{max_text or ''}"
    return Fingerprint(
        schema_hash=shash,
        row_count=n,
        update_column=ucol,
        max_updated=max_text,
        value=hashlib.sha256(parts.encode()).hexdigest()[:16],
    )
