"""What every per-table asset needs: its store prefix, run folder and earlier runs."""

from __future__ import annotations

from typing import Any

import dagster as dg

from cataloger_dagster.resources import script_store
from cataloger_dagster.resources.database import DatabaseResource
from cataloger_dagster.resources.script_store import ScriptStore

GROUP = "catalog"
OWNERS = ["team:data-platform"]


def table_prefix(database: DatabaseResource, table: str) -> str:
    return script_store.table_prefix(database.database_name, table)


def run_folder(context: dg.AssetExecutionContext, store: ScriptStore, prefix: str) -> str:
    """The timestamp folder of this Dagster run for this table (shared by its assets)."""
    return store.open_run(prefix, context.run.run_id, table=context.partition_key)


def previous_artifacts(
    store: ScriptStore, prefix: str, filename: str, *, before: str | None = None, limit: int = 10
) -> list[tuple[str, Any]]:
    """(timestamp, parsed JSON) of the latest runs holding `filename`, newest first."""
    found = []
    for ts in reversed(store.list_runs(prefix)):
        if before is not None and ts >= before:
            continue
        value = store.read_json(prefix, ts, filename)
        if value is not None:
            found.append((ts, value))
            if len(found) >= limit:
                break
    return found


def link(uri: str) -> dg.MetadataValue:
    """A store location as metadata the UI links: a URL for S3, a path for a folder."""
    return dg.MetadataValue.url(uri) if "://" in uri else dg.MetadataValue.path(uri)
