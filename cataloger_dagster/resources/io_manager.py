"""The IO manager of the assets: Dagster's pickled files, with each partition key (a
table name) turned into a file name by the script store's `store_name`.

Dagster's default writes ``<storage>/<asset>/<partition key>``: a table named
``a/b`` then makes ``a`` a folder, so the table ``a`` can no longer store its
output (one table failing another), a 300-character name is longer than a file
name may be, and ``.`` names the asset's own folder.  Through `store_name` every
table gets one file of its own in the asset's folder; plain names keep the path
Dagster's default gave them.
"""

from __future__ import annotations

import pickle
from typing import Any, Optional

import dagster as dg
from pydantic import Field
from upath import UPath

from cataloger_dagster.resources.script_store import store_name


class TablePartitionedPickleIOManager(dg.UPathIOManager):
    """Pickles each output under ``<base>/<asset key>/<store_name(partition key)>``."""

    def __init__(self, base_dir: str):
        super().__init__(base_path=UPath(base_dir))

    def get_path_for_partition(self, context: Any, path: UPath, partition: str) -> UPath:
        return path / store_name(partition)

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        with path.open("wb") as f:
            pickle.dump(obj, f, pickle.HIGHEST_PROTOCOL)

    def load_from_path(self, context: dg.InputContext, path: UPath) -> Any:
        with path.open("rb") as f:
            return pickle.load(f)


class TableIOManager(dg.ConfigurableIOManagerFactory):
    """Outputs of the assets as pickled files, one per table, in the instance's storage."""

    base_dir: Optional[str] = Field(
        default=None, description="Folder of the outputs; default: the Dagster instance's storage folder."
    )

    def create_io_manager(self, context: dg.InitResourceContext) -> TablePartitionedPickleIOManager:
        return TablePartitionedPickleIOManager(self.base_dir or context.instance.storage_directory())
