"""resources/store/key_profiles.py: the other tables' key profiles, read from the store's log of facts."""

from __future__ import annotations

from cataloger_dagster.core.models import TableProfile
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.resources.store.database_log import table_facts
from cataloger_dagster.resources.store.key_profiles import stored_profiles
from shop import make_shop
from store_folders import count_requests


def test_the_other_tables_keys_cost_the_same_requests_however_many_tables(tmp_path, monkeypatch):
    """The search's lookups of every other table read the database's log of facts, not a folder
    per table: the same few requests for 20 tables as for 200."""
    requests = count_requests(monkeypatch, LocalStore)
    database = DatabaseResource(url=f"duckdb://{make_shop(tmp_path / 'shop.duckdb')}")
    cost = {}
    for tables in (20, 200):
        local = LocalStore(root=str(tmp_path / f"store-{tables}"))
        names = [f"t{i:03d}" for i in range(tables)]
        for name in names:
            keys = TableProfile(database="shop.duckdb", table=name, row_count=5, column_count=0, columns=[],
                                sample_rows=[], fingerprint={"schema_hash": "s", "row_count": 5, "value": "v"})
            local.append_table_facts("shop.duckdb", table_facts(keys, "2026-01-01T00:00:00.000000Z", keys))
        local.read_table_facts("shop.duckdb")     # as the runs before this one leave it: folded
        catalog = dict.fromkeys(names)     # only the names of the catalog matter here
        requests.clear()
        found = stored_profiles(local, database, catalog, "t000")
        assert sorted(found) == names[1:]
        cost[tables] = sum(requests.values())
    assert cost[20] == cost[200] <= 4   # the digest, a listing (a filtered folder listing here)
