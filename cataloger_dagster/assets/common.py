"""What every per-table asset needs: its store prefix, run folder and earlier runs.

`TableRun.open(context, database, store)` gives an asset its partition (the
table), its store prefix, this Dagster run's folder, and reads and writes of
its artifacts (named in `cataloger_dagster.core.layout`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
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
    store: ScriptStore, prefix: str, filename: str, *, before: str | None = None, limit: int = 10,
    runs: list[str] | None = None,
) -> list[tuple[str, Any]]:
    """(timestamp, parsed JSON) of the latest runs holding `filename`, newest first; `runs`: the
    table's run folders, if listed already."""
    found = []
    for ts in reversed(store.list_runs(prefix) if runs is None else runs):
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


@dataclass(frozen=True)
class TableRun:
    """One table (the asset's partition) in this Dagster run: its prefix and run folder."""

    store: ScriptStore
    database: DatabaseResource
    table: str
    prefix: str
    timestamp: str

    @classmethod
    def open(cls, context: dg.AssetExecutionContext, database: DatabaseResource,
             store: ScriptStore) -> "TableRun":
        """Claims (or finds) this run's folder: call it when the asset has something to write."""
        table = context.partition_key
        prefix = table_prefix(database, table)
        return cls(store, database, table, prefix, run_folder(context, store, prefix))

    def uri(self, filename: str) -> str:
        return self.store.uri(self.prefix, self.timestamp, filename)

    def write_json(self, filename: str, data: Any) -> str:
        return self.store.write_json(self.prefix, self.timestamp, filename, data)

    def write_artifact(self, filename: str, content: str | bytes) -> str:
        return self.store.write_artifact(self.prefix, self.timestamp, filename, content)

    def write_script(self, filename: str, code: str, metrics: dict | None = None) -> str:
        if metrics is None:
            return self.store.write_script(self.prefix, self.timestamp, filename, code)
        return self.store.write_script_with_metrics(self.prefix, self.timestamp, filename, code, metrics)

    def read_script(self, filename: str) -> str | None:
        return self.store.read_script(self.prefix, self.timestamp, filename)

    def read_json(self, filename: str, timestamp: str | None = None) -> Any | None:
        return self.store.read_json(self.prefix, timestamp or self.timestamp, filename)

    @cached_property
    def earlier_runs(self) -> list[str]:
        """The table's run folders before this one, oldest first: listed once per step, since each
        listing is a request on S3 and a step reads several kinds of earlier artifacts."""
        return [ts for ts in self.store.list_runs(self.prefix) if ts < self.timestamp]

    def previous(self, filename: str, *, limit: int = 10) -> list[tuple[str, Any]]:
        """(timestamp, parsed JSON) of the latest earlier runs holding `filename`, newest first."""
        return previous_artifacts(self.store, self.prefix, filename, limit=limit, runs=self.earlier_runs)
