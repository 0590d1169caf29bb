"""The IO manager of the assets: a table's results are the store's JSON files, and anything else
is a pickled file named by the store's `store_name`.

A result (the output of `table_profile`, `table_understanding`, `quality_issues`,
`investigations`: `core.results.ASSET_RESULTS`) is written once, as its pydantic model, into the
run folder of its table in the store (``<database>/<table>/<timestamp>/profile.json``...), and read
back from there through `core.results`: the file that the history, the MCP server and the CLI
read is the one Dagster hands the next asset.  An input is read from this run's own folder of the
table when it holds the result, else from the table's newest folder that does (the latest
materialization, as a later run of a downstream asset alone reads it).

Any other output keeps Dagster's pickled files, one per table: Dagster's default writes
``<storage>/<asset>/<partition key>``, and a table named ``a/b`` would make ``a`` a folder (one
table failing another), a 300-character name is longer than a file name may be, and ``.`` names
the asset's own folder.  Through `store_name` every table gets one file of its own in the asset's
folder; plain names keep the path Dagster's default gave them.

One table's output is read and written without Dagster's debug lines ("Loading 1
partitions...", "Loading partition...", "Writing file at..."): each is an event in the run
storage, a third of a table's run's events, for a path the output's metadata already shows.
"""

from __future__ import annotations

import pickle
from typing import Any, Optional

import dagster as dg
from upath import UPath

from cataloger_dagster.core.results import ASSET_RESULTS, load_result, save_result
from cataloger_dagster.resources.store import CatalogStore, store_name, table_prefix


class TablePartitionedIOManager(dg.UPathIOManager):
    """Results in the store's run folders; other outputs pickled under
    ``<base>/<asset key>/<store_name(partition key)>``."""

    def __init__(self, base_dir: str, store: CatalogStore, database: str):
        super().__init__(base_path=UPath(base_dir))
        self.store = store
        self.database = database

    def get_path_for_partition(self, context: Any, path: UPath, partition: str) -> UPath:
        return path / store_name(partition)

    # ---- results: the store's JSON

    @staticmethod
    def _result_file(context: dg.InputContext | dg.OutputContext) -> Optional[str]:
        """The store's file of this output or input, when it is a table's result."""
        if not (context.has_asset_key and context.has_asset_partitions):
            return None
        return ASSET_RESULTS.get(context.asset_key.path[-1])

    def _save(self, context: dg.OutputContext, filename: str, table: str, value: Any) -> str:
        prefix = table_prefix(self.database, table)
        # the folder the asset claimed for the table in this run (or a new one, if it claimed none)
        timestamp = self.store.open_run(prefix, context.run_id, table=table)
        return save_result(self.store, prefix, timestamp, filename, value)

    def _load(self, context: dg.InputContext, filename: str, table: str) -> Any:
        prefix = table_prefix(self.database, table)
        producer = _producing_run(context)
        own = self.store.find_run(prefix, producer) if producer else None
        if own is not None:
            found = load_result(self.store, prefix, own, filename)
            if found is not None:
                return found
        for timestamp in reversed(self.store.list_runs(prefix)):
            found = load_result(self.store, prefix, timestamp, filename)
            if found is not None:
                return found
        raise dg.DagsterInvariantViolationError(
            f"{context.asset_key.to_user_string()}: no {filename} of table {table!r} in {self.store.describe()}; "
            "materialize the table's partition of that asset first"
        )

    # ---- Dagster's entry points

    def load_input(self, context: dg.InputContext) -> Any:
        filename = self._result_file(context)
        if filename is not None:
            tables = list(context.asset_partition_keys)
            if len(tables) == 1:
                return self._load(context, filename, tables[0])
            return {table: self._load(context, filename, table) for table in tables}
        path = self._one_partition_path(context)
        return super().load_input(context) if path is None else self.load_from_path(context, path)

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        filename = self._result_file(context)
        if filename is not None:
            tables = list(context.asset_partition_keys)
            if len(tables) == 1:
                uri = self._save(context, filename, tables[0], obj)
                context.add_output_metadata({"path": _location(uri)})
            else:
                for table, value in self._each_table(context, obj, tables).items():
                    self._save(context, filename, table, value)
            return
        path = self._one_partition_path(context)
        if path is not None:
            self.make_directory(path.parent)
            self.dump_to_path(context, obj, path)
            context.add_output_metadata({"path": dg.MetadataValue.path(str(path))})
        elif context.has_asset_key and context.has_asset_partitions:
            paths = self._get_paths_for_partitions(context)
            for table, value in self._each_table(context, obj, list(paths)).items():
                self.make_directory(paths[table].parent)
                self.dump_to_path(context, value, paths[table])
        else:
            super().handle_output(context, obj)

    @staticmethod
    def _each_table(context: dg.OutputContext, obj: Any, tables: list[str]) -> dict[str, Any]:
        """The output of a run over several tables: ``{table: its value}``, one file each, as
        Dagster's loading of several partitions reads them back."""
        if not isinstance(obj, dict) or set(obj) != set(tables):
            raise TypeError(
                f"{context.asset_key.to_user_string()}: an output over several tables must map "
                f"each of them to its value, got {type(obj).__name__}"
            )
        return obj

    def _one_partition_path(self, context: dg.InputContext | dg.OutputContext) -> Optional[UPath]:
        """The file of the one table this input or output is about; None for anything else."""
        if not (context.has_asset_key and context.has_asset_partitions):
            return None
        paths = self._get_paths_for_partitions(context)
        return next(iter(paths.values())) if len(paths) == 1 else None

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        with path.open("wb") as f:
            # what Dagster keeps between steps holds no personal value in clear either
            pickle.dump(self.store.value_policy(self.database).object(obj), f, pickle.HIGHEST_PROTOCOL)

    def load_from_path(self, context: dg.InputContext, path: UPath) -> Any:
        with path.open("rb") as f:
            return pickle.load(f)


def _producing_run(context: dg.InputContext) -> Optional[str]:
    """The run whose output this input is, when Dagster knows it (an upstream step of this run,
    or of the run this one re-executes); None for an asset materialized outside this run."""
    upstream = context.upstream_output
    if upstream is None:
        return None
    try:
        return upstream.run_id
    except dg.DagsterInvariantViolationError:
        return None


def _location(uri: str) -> dg.MetadataValue:
    return dg.MetadataValue.url(uri) if "://" in uri else dg.MetadataValue.path(uri)


class TableIOManager(dg.IOManagerDefinition):
    """The assets' IO manager: results in the store (resource ``store``) under the database's
    folder (resource ``database``), anything else pickled, one file per table, in ``base_dir``
    (default: the Dagster instance's storage folder)."""

    def __init__(self, base_dir: Optional[str] = None):
        self.base_dir = base_dir
        super().__init__(
            resource_fn=self._create,
            required_resource_keys={"store", "database"},
            description=TableIOManager.__doc__,
        )

    def _create(self, context: dg.InitResourceContext) -> TablePartitionedIOManager:
        store, database = context.resources.store, context.resources.database.database_name
        if self.base_dir:
            return TablePartitionedIOManager(self.base_dir, store, database)
        if context.instance is None:
            raise dg.DagsterInvariantViolationError(
                "the table IO manager needs a folder: give base_dir, or run it with a Dagster instance"
            )
        return TablePartitionedIOManager(context.instance.storage_directory(), store, database)
