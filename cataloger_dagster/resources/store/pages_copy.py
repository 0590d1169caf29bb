"""A catalog's pages on this machine, to open in a browser from a ``file://`` URL.

A local store's pages are files already: the index's own path is used.  An S3 store's pages are
objects a browser cannot open with their relative links (each would need its own signature), so
they are copied, under the same relative layout, into a local folder: the index, and for each
table its timelapse and the whole folder of its latest run with a page (the catalog page, what
changed, the script and the JSON it links, its fix scripts).  Older runs are not copied: their
links on the timelapse stay unresolved offline.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cataloger_dagster.core.layout import CATALOG_PAGE, INDEX_FILE, RUN_SUBFOLDERS, TIMELAPSE, store_name, table_prefix
from cataloger_dagster.resources.store.base import StoreError
from cataloger_dagster.resources.store.local import LocalStore

if TYPE_CHECKING:
    from cataloger_dagster.resources.store.base import CatalogStore


@dataclass(frozen=True)
class LocalPages:
    index: Path  # the index.html to open
    copied: int  # files copied (0 for a local store, whose pages are opened where they are)


def local_pages(store: CatalogStore, database: str, folder: Path | None = None) -> LocalPages:
    """The index of ``database``'s catalog as a local file, its pages beside it; ``folder`` is where
    a remote store's pages are copied (required for one).  A clear error when there is no index."""
    if store.read_index(database) is None:
        raise StoreError(
            f"{store.describe()} holds no index for database {database!r}: run `cataloger run` for it first"
        )
    if isinstance(store, LocalStore):
        return LocalPages(index=Path(store.index_uri(database)), copied=0)
    if folder is None:
        raise ValueError("a remote store's pages need a local folder to be copied to")
    copied = 0

    def copy(key: str) -> None:
        nonlocal copied
        if any(part in ("", ".", "..") or "\\" in part for part in key.split("/")):
            return  # a name that would lead out of the folder is none the store writes
        data = store._read(key)
        if data is None:
            return
        target = folder.joinpath(*key.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        copied += 1

    copy(f"{store_name(database)}/{INDEX_FILE}")
    for table in store.list_tables(database):
        prefix = table_prefix(database, table)
        if store.has_timelapse(prefix):
            copy(f"{prefix}/{TIMELAPSE}")
        for run in reversed(store.list_runs(prefix)):
            files = store._list(f"{prefix}/{run}")[1]
            if CATALOG_PAGE not in files:
                continue  # a run under way, or one that failed before its page
            for name in files:
                copy(f"{prefix}/{run}/{name}")
            for sub in RUN_SUBFOLDERS:
                for name in store._list(f"{prefix}/{run}/{sub}")[1]:
                    copy(f"{prefix}/{run}/{sub}/{name}")
            break
    return LocalPages(index=folder.joinpath(store_name(database), INDEX_FILE), copied=copied)
