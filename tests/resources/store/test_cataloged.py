"""resources/store/cataloged.py: each table's latest complete run read back from the store,
on both backends, from the files of a real catalog run (the shop database)."""

from __future__ import annotations

from cataloged_shop import TABLES, duckdb_tables
from cataloger_dagster.core.layout import CATALOG_PAGE, PROFILE, table_prefix
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.resources.store.cataloged import read_cataloged_tables

DATABASE = "shop.duckdb"


def copy_into(store, root) -> None:
    """Every file of the local store at `root` into `store`, at the same keys."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        store._replace(path.relative_to(root).as_posix(), path.read_bytes())


def test_each_tables_latest_complete_run_is_read_on_both_backends(store, cataloged_shop):
    database, store_path = cataloged_shop
    copy_into(store, store_path)
    entries, problems = read_cataloged_tables(store, DATABASE)
    assert problems == []
    truth = duckdb_tables(database)
    assert [e.table for e in entries] == sorted(TABLES)
    for entry in entries:
        prefix = table_prefix(DATABASE, entry.table)
        assert entry.run == store.list_runs(prefix)[-1]
        assert entry.row_count == truth[entry.table][0]
        assert [c.name for c in entry.columns] == truth[entry.table][1]
        assert all(c.description for c in entry.columns)   # the heuristic understanding describes each
        assert entry.page == store.uri(prefix, entry.run, CATALOG_PAGE)
        assert entry.description and entry.database == DATABASE


def test_a_run_under_way_is_passed_over_and_a_table_with_none_complete_is_not_listed(cataloged_shop, tmp_path):
    _, store_path = cataloged_shop
    store = LocalStore(root=str(tmp_path / "store"))
    copy_into(store, store_path)
    complete = store.list_runs(table_prefix(DATABASE, "events"))[-1]
    profile = store.read_json(table_prefix(DATABASE, "events"), complete, PROFILE)
    # a newer run of events that has written only its profile, and a table with only such a run
    for table in ("events", "pending"):
        prefix = table_prefix(DATABASE, table)
        store.write_json(prefix, store.open_run(prefix, f"run-of-{table}", table=table), PROFILE, profile)
    entries, problems = read_cataloged_tables(store, DATABASE)
    assert problems == [] and "pending" not in [e.table for e in entries]
    assert next(e for e in entries if e.table == "events").run == complete
