"""A catalog's identity: the sources whose results its folder holds.

``<store>/<catalog>/catalog.json`` is written when a catalog is first written to, and names its
source (`DatabaseResource.source`: the file's absolute path, or the server's host, port,
database and schema; never a credential)::

    {"name": "bikes.duckdb", "sources": ["duckdb:///data/bikes.duckdb"], "created": "..."}

A run of another source whose name is the same is refused, so that two databases never mix
their results (and each run's history is its own source's): the user names one apart with
--name / CATALOGER_NAME.  A name given that way is the user's word that the catalog is
theirs: the source is added to the catalog's `sources`.  A folder written before catalogs had
an identity (no catalog.json) is claimed by the first source written to it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from cataloger_dagster.core.layout import CATALOG_FILE, new_timestamp, store_name
from cataloger_dagster.resources.store.base import ArtifactExistsError, StoreError

if TYPE_CHECKING:
    from cataloger_dagster.resources.database.resource import DatabaseResource
    from cataloger_dagster.resources.store.base import CatalogStore


class CatalogIdentityError(StoreError):
    """The catalog of this name holds another source's results; the message says what to pass."""


def read_catalog(store: "CatalogStore", name: str) -> dict | None:
    """The catalog's catalog.json, if it has one."""
    key = f"{store_name(name)}/{CATALOG_FILE}"
    data = store._read(key)
    if data is None:
        return None
    try:
        recorded = json.loads(data)
    except ValueError as e:
        raise StoreError(f"{store._key_uri(key)} is not valid JSON: {e}; fix or delete it") from None
    if not isinstance(recorded, dict) or not isinstance(recorded.get("sources"), list):
        raise StoreError(f"{store._key_uri(key)} lists no sources; fix or delete it")
    return recorded


def check_catalog(store: "CatalogStore", name: str, source: str, *, explicit: bool) -> dict | None:
    """The catalog's record, after making sure that `source` may use it (it is one of its
    sources, the catalog has none yet, or the name was given by the user); never writes."""
    recorded = read_catalog(store, name)
    if recorded is None or explicit or source in recorded["sources"]:
        return recorded
    raise CatalogIdentityError(
        f"the catalog {name!r} in {store.describe()} holds the results of {recorded['sources'][0]}, "
        f"not of {source}: pass --name (or set CATALOGER_NAME) to give this database a catalog of its own, "
        f"or --name {name!r} to add its results to that one"
    )


def claim_catalog(
    store: "CatalogStore", name: str, source: str, *, explicit: bool, stem_name: str | None = None
) -> list[str]:
    """Make `name` the catalog of `source` (recorded in its catalog.json), or raise
    `CatalogIdentityError` when it is another source's.  Returns notes for the user: where the
    source's earlier results are, when this is its first run under a new default name."""
    if (name, source) in store._catalogs_claimed:
        return []
    key = f"{store_name(name)}/{CATALOG_FILE}"
    notes: list[str] = []
    for _ in range(3):  # two first writers: one creates the file, the other reads it again
        recorded = check_catalog(store, name, source, explicit=explicit)
        if recorded is not None and source in recorded["sources"]:
            break
        if recorded is not None:  # a name the user gave: the catalog now holds this source too
            data = {**recorded, "sources": [*recorded["sources"], source]}
            store._replace(key, json.dumps(data, indent=2).encode())
            break
        try:
            store._write_new(
                key, json.dumps({"name": name, "sources": [source], "created": new_timestamp()}, indent=2).encode()
            )
        except ArtifactExistsError:
            continue
        notes += _earlier_results(store, name, source, stem_name)
        break
    store._catalogs_claimed.add((name, source))
    return notes


def _earlier_results(store: "CatalogStore", name: str, source: str, stem_name: str | None) -> list[str]:
    """A note when the catalog of the source's former default name (its stem) holds results and
    no identity: they may be this source's, or another's of the same stem, so they are not read."""
    if (
        not stem_name
        or stem_name == name
        or read_catalog(store, stem_name) is not None
        or not store.list_tables(stem_name)
    ):
        return []
    return [
        f"this database's catalog is now {name!r} (a catalog's default name is its whole source: the "
        f"file's name with its extension, or host_port/database/schema); earlier results under "
        f"{stem_name!r} in {store.describe()} may be of {source}: to keep adding to them, pass "
        f"--name {stem_name!r} (or set CATALOGER_NAME)"
    ]


def claim_database_catalog(store: "CatalogStore", database: "DatabaseResource") -> list[str]:
    """`claim_catalog` for the database's catalog: its name, given (explicit) or its default."""
    return claim_catalog(
        store, database.database_name, database.source, explicit=bool(database.name), stem_name=database.stem_name
    )


def check_database_catalog(store: "CatalogStore", database: "DatabaseResource") -> None:
    """`check_catalog` for the database's catalog, for the commands that only read it or add to it."""
    check_catalog(store, database.database_name, database.source, explicit=bool(database.name))
