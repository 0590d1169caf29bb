"""The other tables' stored key profiles, as the reference search reads them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from cataloger_dagster.core.layout import KEYS, PROFILE, table_prefix
from cataloger_dagster.core.models import TableProfile
from cataloger_dagster.core.results import load_result

if TYPE_CHECKING:
    import ibis

    from cataloger_dagster.resources.database.resource import DatabaseResource
    from cataloger_dagster.resources.store.base import CatalogStore

__all__ = ["stored_profiles"]


class _StoredProfiles(Mapping[str, TableProfile]):
    """The other tables' latest stored key profiles, read only when the reference search asks.
    The search takes from them only which columns may be keys, and checks each against the
    table itself before verifying in the database.  They come from the database's log of table
    facts (a few requests however many tables); a table that wrote none there (a store written
    before the log) is read from its folder: its latest key profile (KEYS), or the whole profile
    of a run that has none."""

    def __init__(
        self, store: CatalogStore, database: DatabaseResource, catalog: Mapping[str, ibis.Table], table: str
    ) -> None:
        self._store, self._catalog, self._table = store, catalog, table
        self._read: dict[str, TableProfile | None] = {}
        self._database_name = database.database_name  # resolved once: each table's prefix needs it
        self._facts: dict[str, dict] | None = None
        self._folders: set[str] | None = None

    def _from_facts(self, name: str) -> TableProfile | None:
        if self._facts is None:
            self._facts = self._store.read_table_facts(self._database_name)
        keys = (self._facts.get(name) or {}).get("keys")
        try:
            return TableProfile.model_validate(keys) if isinstance(keys, dict) else None
        except ValueError:
            return None  # a malformed entry: the table's folder says it again

    def _latest(self, name: str) -> TableProfile | None:
        found = self._from_facts(name)
        if found is not None:
            return found
        if self._folders is None:
            self._folders = set(self._store.list_tables(self._database_name))
        if name not in self._folders:
            return None  # never stored: no request for it
        prefix = table_prefix(self._database_name, name)
        for ts in reversed(self._store.list_runs(prefix)):
            for filename in (KEYS, PROFILE):
                stored = load_result(self._store, prefix, ts, filename, TableProfile)
                if stored is not None:
                    return stored
        return None

    def __getitem__(self, name: str) -> TableProfile:
        if name == self._table or name not in self._catalog:
            raise KeyError(name)
        if name not in self._read:
            self._read[name] = self._latest(name)
        found = self._read[name]
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._catalog if name != self._table and name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def stored_profiles(
    store: CatalogStore, database: DatabaseResource, catalog: Mapping[str, ibis.Table], table: str
) -> Mapping[str, TableProfile]:
    """The latest stored key profile of each table of `catalog` but `table`, by name, read lazily."""
    return _StoredProfiles(store, database, catalog, table)
