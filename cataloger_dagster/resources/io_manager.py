"""The IO manager of the assets: Dagster's pickled files, with each partition key (a
table name) turned into a file name by the store's `store_name`.

Dagster's default writes ``<storage>/<asset>/<partition key>``: a table named
``a/b`` then makes ``a`` a folder, so the table ``a`` can no longer store its
output (one table failing another), a 300-character name is longer than a file
name may be, and ``.`` names the asset's own folder.  Through `store_name` every
table gets one file of its own in the asset's folder; plain names keep the path
Dagster's default gave them.

One table's output is read and written without Dagster's debug lines ("Loading 1
partitions...", "Loading partition...", "Writing file at..."): each is an event in the run
storage, a third of a table's run's events, for a path the output's metadata already shows.
"""

from __future__ import annotations

import pickle
from typing import Any, Optional

import dagster as dg
from pydantic import Field
from upath import UPath

from cataloger_dagster.core.sensitive.masking import scrub_object
from cataloger_dagster.resources.store import store_name


class TablePartitionedPickleIOManager(dg.UPathIOManager):
    """Pickles each output under ``<base>/<asset key>/<store_name(partition key)>``."""

    def __init__(self, base_dir: str):
        super().__init__(base_path=UPath(base_dir))

    def get_path_for_partition(self, context: Any, path: UPath, partition: str) -> UPath:
        return path / store_name(partition)

    def load_input(self, context: dg.InputContext) -> Any:
        path = self._one_partition_path(context)
        return super().load_input(context) if path is None else self.load_from_path(context, path)

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        path = self._one_partition_path(context)
        if path is not None:
            self.make_directory(path.parent)
            self.dump_to_path(context, obj, path)
            context.add_output_metadata({"path": dg.MetadataValue.path(str(path))})
        elif context.has_asset_key and context.has_asset_partitions:
            self._handle_tables(context, obj)
        else:
            super().handle_output(context, obj)

    def _handle_tables(self, context: dg.OutputContext, obj: Any) -> None:
        """The output of a run over several tables: ``{table: its value}``, one file each, as
        Dagster's loading of several partitions reads them back."""
        paths = self._get_paths_for_partitions(context)
        if not isinstance(obj, dict) or set(obj) != set(paths):
            raise TypeError(
                f"{context.asset_key.to_user_string()}: an output over several tables must map "
                f"each of them to its value, got {type(obj).__name__}"
            )
        for table, path in paths.items():
            self.make_directory(path.parent)
            self.dump_to_path(context, obj[table], path)

    def _one_partition_path(self, context: dg.InputContext | dg.OutputContext) -> Optional[UPath]:
        """The file of the one table this input or output is about; None for anything else."""
        if not (context.has_asset_key and context.has_asset_partitions):
            return None
        paths = self._get_paths_for_partitions(context)
        return next(iter(paths.values())) if len(paths) == 1 else None

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        with path.open("wb") as f:
            # what Dagster keeps between steps holds no personal value in clear either
            pickle.dump(scrub_object(obj), f, pickle.HIGHEST_PROTOCOL)

    def load_from_path(self, context: dg.InputContext, path: UPath) -> Any:
        with path.open("rb") as f:
            return pickle.load(f)


class TableIOManager(dg.ConfigurableIOManagerFactory):
    """Outputs of the assets as pickled files, one per table, in the instance's storage."""

    base_dir: Optional[str] = Field(
        default=None, description="Folder of the outputs; default: the Dagster instance's storage folder."
    )

    def create_io_manager(self, context: dg.InitResourceContext) -> TablePartitionedPickleIOManager:
        if self.base_dir:
            return TablePartitionedPickleIOManager(self.base_dir)
        if context.instance is None:
            raise dg.DagsterInvariantViolationError(
                "the table IO manager needs a folder: give base_dir, or run it with a Dagster instance"
            )
        return TablePartitionedPickleIOManager(context.instance.storage_directory())
