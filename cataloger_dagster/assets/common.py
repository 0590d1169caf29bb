"""What every per-table asset needs: its tables, store prefix, run folder and earlier runs.

A run covers one table (one partition of `tables`) or several (a range of partitions:
`cataloger run` catalogs tables in batches, one Dagster run each).  `each_table` does an
asset's work for every table of its run, `table_input` gives each table its upstream value
and `table_output` hands Dagster one value and one set of metadata per table.

`TableRun.open(context, database, store, table)` gives the work on one table its store
prefix, this Dagster run's folder, and reads and writes of its artifacts (named in
`cataloger_dagster.core.layout`).
"""

from __future__ import annotations

import functools
import time
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Mapping, TypeVar

import dagster as dg

from cataloger_dagster.resources import store as stores
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.resources.store.identity import claim_database_catalog
from cataloger_dagster.core.results import StoredRun, latest_results, load_run
from cataloger_dagster.core.shown import visible

GROUP = "catalog"
OWNERS = ["team:data-platform"]
# the metadata key of a failure of one table in a run over several: `cataloger run` reruns the others
FAILED_TABLE = "table"

T = TypeVar("T")

# Who hears each table's step as it finishes: ``(table, step, seconds)``.  `cataloger run` sets it
# around its in-process runs (its progress and each table's own time, a table of a batch as much
# as a table alone); elsewhere (the UI's runs) nobody is listening.
STEP_DONE: ContextVar[Callable[[str, str, float], None] | None] = ContextVar("cataloger_step_done", default=None)


@functools.cache
def per_table(model: type) -> dg.DagsterType:
    """The Dagster type of a value over the run's tables: one `model` (one table) or
    ``{table: model}`` (several), as the IO manager stores and loads them."""

    def check(_context, value) -> bool:
        if isinstance(value, dict):
            return all(isinstance(table, str) and isinstance(v, model) for table, v in value.items())
        return isinstance(value, model)

    return dg.DagsterType(
        type_check_fn=check,
        name=model.__name__,
        typing_type=model,
        description=f"{model.__name__} of each table of the run",
    )


def table_ins(**inputs: type) -> dict[str, dg.AssetIn]:
    """The asset's upstream values, each of `per_table` type."""
    return {name: dg.AssetIn(dagster_type=per_table(model)) for name, model in inputs.items()}


def each_table(context: dg.AssetExecutionContext, work: Callable[[str], T]) -> dict[str, T]:
    """``work(table)`` for each table of the run, in order, as ``{table: result}``.

    In a run over several tables, one that fails fails the step, as a `dg.Failure` naming it
    (metadata `table`): Dagster cannot record some partitions of a step as failed and others as
    materialized, so `cataloger run` then catalogs that table alone and the others without it.
    A run of one table fails with the table's own error, as always."""
    tables = list(context.partition_keys)
    heard = STEP_DONE.get()
    if heard is not None:
        work = _timed(work, context.asset_key.path[-1], heard)
    if len(tables) == 1:
        return {tables[0]: work(tables[0])}
    results: dict[str, T] = {}
    for table in tables:
        try:
            results[table] = work(table)
        except Exception as exc:
            raise dg.Failure(
                description=visible(f"{table}: {type(exc).__name__}: {exc}"), metadata={FAILED_TABLE: table}
            ) from exc
    return results


def _timed(work: Callable[[str], T], step: str, heard: Callable[[str, str, float], None]) -> Callable[[str], T]:
    def timed(table: str) -> T:
        started = time.perf_counter()
        result = work(table)
        heard(table, step, time.perf_counter() - started)
        return result

    return timed


def table_input(context: dg.AssetExecutionContext, value: Any) -> Callable[[str], Any]:
    """One table's value of an upstream asset: Dagster loads one table's alone, several as
    ``{table: value}``."""
    if len(context.partition_keys) == 1:
        return lambda table: value
    return lambda table: value[table]


def table_output(context: dg.AssetExecutionContext, results: Mapping[str, tuple[Any, Mapping[str, Any]]]) -> dg.Output:
    """The asset's output from ``{table: (value, metadata)}``: each table's materialization
    carries its own metadata, and the IO manager stores one value per table."""
    if len(results) == 1:
        ((value, metadata),) = results.values()
        return dg.Output(value, metadata=dict(metadata))
    for table, (_, metadata) in results.items():
        context.add_asset_metadata(dict(metadata), partition_key=table)
    return dg.Output({table: value for table, (value, _) in results.items()})


def table_result(context: dg.AssetExecutionContext, metadata: Mapping[str, Mapping[str, Any]]) -> dg.MaterializeResult:
    """`table_output` of an asset whose only product is in the store: metadata per table."""
    if len(metadata) == 1:
        return dg.MaterializeResult(metadata=dict(next(iter(metadata.values()))))
    for table, values in metadata.items():
        context.add_asset_metadata(dict(values), partition_key=table)
    return dg.MaterializeResult()


def table_prefix(database: DatabaseResource, table: str) -> str:
    return stores.table_prefix(database.database_name, table)


def run_folder(context: dg.AssetExecutionContext, store: CatalogStore, prefix: str, table: str) -> str:
    """The timestamp folder of this Dagster run for this table (shared by its assets)."""
    return store.open_run(prefix, context.run.run_id, table=table)


def link(uri: str) -> dg.MetadataValue:
    """A store location as metadata the UI links: a URL for S3, a path for a folder."""
    return dg.MetadataValue.url(uri) if "://" in uri else dg.MetadataValue.path(uri)


@dataclass(frozen=True)
class TableRun:
    """One table (the asset's partition) in this Dagster run: its prefix and run folder."""

    store: CatalogStore
    database: DatabaseResource
    table: str
    prefix: str
    timestamp: str

    @classmethod
    def open(
        cls, context: dg.AssetExecutionContext, database: DatabaseResource, store: CatalogStore, table: str
    ) -> "TableRun":
        """Claims (or finds) this run's folder of `table`: call it when the asset has something to write.
        First makes sure the catalog is the database's own (however the run was launched: the
        UI, a sensor, `cataloger run`), or fails the table with what to pass."""
        for note in claim_database_catalog(store, database):
            context.log.warning(visible(note))
        prefix = table_prefix(database, table)
        return cls(store, database, table, prefix, run_folder(context, store, prefix, table))

    def uri(self, filename: str) -> str:
        return self.store.uri(self.prefix, self.timestamp, filename)

    def write_json(self, filename: str, data: Any) -> str:
        """A file of the run folder other than a result (those the IO manager writes)."""
        return self.store.write_json(self.prefix, self.timestamp, filename, data)

    def write_artifact(self, filename: str, content: str | bytes) -> str:
        return self.store.write_artifact(self.prefix, self.timestamp, filename, content)

    def write_script(self, filename: str, code: str, metrics: dict | None = None) -> str:
        if metrics is None:
            return self.store.write_script(self.prefix, self.timestamp, filename, code)
        return self.store.write_script_with_metrics(self.prefix, self.timestamp, filename, code, metrics)

    def read_script(self, filename: str) -> str | None:
        return self.store.read_script(self.prefix, self.timestamp, filename)

    def run(self, timestamp: str | None = None) -> StoredRun:
        """The results of a run folder of the table (default: this run's)."""
        return load_run(self.store, self.prefix, timestamp or self.timestamp)

    @cached_property
    def earlier_runs(self) -> list[str]:
        """The table's run folders before this one, oldest first: listed once per step, since each
        listing is a request on S3 and a step reads several kinds of earlier artifacts."""
        return [ts for ts in self.store.list_runs(self.prefix) if ts < self.timestamp]

    def previous(self, filename: str, *, limit: int = 10) -> list[tuple[str, Any]]:
        """(timestamp, result) of the latest earlier runs holding the result `filename`, newest first."""
        return latest_results(self.store, self.prefix, filename, limit=limit, runs=self.earlier_runs)
