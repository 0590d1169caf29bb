"""`local_pages` (store/pages_copy.py): a catalog's pages as local files, on both backends: a local
store's index where it is, an S3 store's index, timelapses and latest page-bearing run copied
under the same layout, runs under way and older runs left behind."""

from __future__ import annotations

import pytest

from cataloger_dagster.core.layout import CATALOG_PAGE, TIMELAPSE, store_name, table_prefix
from cataloger_dagster.resources.store import LocalStore, StoreError
from cataloger_dagster.resources.store.pages_copy import local_pages

DATABASE = "shop.duckdb"
TABLE = "orders & co"


def _catalog(store):
    prefix = table_prefix(DATABASE, TABLE)
    older = store.open_run(prefix, "run-1", TABLE)
    store.write_artifact(prefix, older, CATALOG_PAGE, "<p>older</p>")
    latest = store.open_run(prefix, "run-2", TABLE)
    store.write_artifact(prefix, latest, CATALOG_PAGE, "<p>latest</p>")
    store.write_json(prefix, latest, "profile.json", {"rows": 3})
    under_way = store.open_run(prefix, "run-3", TABLE)
    store.write_json(prefix, under_way, "profile.json", {"rows": 4})  # no page yet
    store.write_timelapse(prefix, "<p>timelapse</p>")
    store.write_index(DATABASE, "<p>index</p>")
    return prefix, older, latest, under_way


def test_the_index_and_each_table_s_latest_page_are_local_files(store, tmp_path):
    prefix, older, latest, under_way = _catalog(store)
    pages = local_pages(store, DATABASE, tmp_path / "copy")
    assert pages.index.read_text() == "<p>index</p>"
    root = pages.index.parent.parent
    assert (root / prefix / latest / CATALOG_PAGE).read_text() == "<p>latest</p>"
    assert (root / prefix / TIMELAPSE).read_text() == "<p>timelapse</p>"
    if isinstance(store, LocalStore):
        assert pages.copied == 0 and pages.index.parent.name == store_name(DATABASE)
    else:
        assert pages.copied == 5  # the index, the timelapse, the latest run's page, profile and run.json
        assert not (root / prefix / older).exists() and not (root / prefix / under_way).exists()


def test_a_catalog_with_no_index_is_a_clear_error(store, tmp_path):
    with pytest.raises(StoreError, match="holds no index for database 'shop.duckdb'.*cataloger run"):
        local_pages(store, DATABASE, tmp_path / "copy")
