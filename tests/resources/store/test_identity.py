"""resources/store/identity.py: catalog.json, the sources a catalog holds, on both backends.

The catalog runs that use it (refusals, notes, the index) are in tests/cli/test_catalog_identity.py.
"""

import json

import pytest

from cataloger_dagster.core.layout import CATALOG_FILE, store_name
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import LocalStore, S3Store, StoreError
from cataloger_dagster.resources.store.identity import (
    CatalogIdentityError, check_database_catalog, claim_database_catalog, read_catalog,
)

HERE = DatabaseResource(url="duckdb:///data/here/bikes.duckdb")
THERE = DatabaseResource(url="duckdb:///data/there/bikes.duckdb")   # another file of the same name


@pytest.fixture(params=["local", "s3"])
def stores(request, tmp_path):
    """A function making the store anew, as another process (or run) would see it: nothing remembered."""
    if request.param == "local":
        return lambda: LocalStore(root=str(tmp_path / "store"))
    s3_resource, bucket = request.getfixturevalue("s3_resource"), request.getfixturevalue("s3_bucket")
    return lambda: S3Store(bucket=bucket, prefix="catalogs", s3=s3_resource)


@pytest.fixture
def store(stores):
    return stores()


def test_the_first_source_is_recorded_and_another_of_the_same_name_is_refused(store, stores):
    assert claim_database_catalog(store, HERE) == []
    assert read_catalog(store, "bikes.duckdb")["sources"] == ["duckdb:///data/here/bikes.duckdb"]
    claim_database_catalog(stores(), HERE)                      # its own: again and again
    with pytest.raises(CatalogIdentityError) as refused:
        claim_database_catalog(stores(), THERE)
    message = str(refused.value)
    assert "\n" not in message and "/data/here/bikes.duckdb" in message and "/data/there/bikes.duckdb" in message
    assert "--name" in message and "CATALOGER_NAME" in message
    with pytest.raises(CatalogIdentityError):
        check_database_catalog(stores(), THERE)                 # the reading commands too
    assert read_catalog(store, "bikes.duckdb")["sources"] == ["duckdb:///data/here/bikes.duckdb"]


def test_a_name_the_user_gives_takes_the_source_in(store, stores):
    claim_database_catalog(store, HERE)
    named = DatabaseResource(url=THERE.url, name="bikes.duckdb")
    check_database_catalog(stores(), named)
    claim_database_catalog(stores(), named)
    assert read_catalog(store, "bikes.duckdb")["sources"] == [HERE.source, THERE.source]
    claim_database_catalog(stores(), THERE)     # recorded: its default name is now its own too


def test_a_catalog_under_the_old_stem_name_is_named_once_and_left_alone(store, stores):
    store.open_run("bikes/trips", "an-earlier-run", table="trips")
    (note,) = claim_database_catalog(store, HERE)
    assert "'bikes.duckdb'" in note and "'bikes'" in note and "--name 'bikes'" in note
    assert claim_database_catalog(stores(), HERE) == []         # said on the first run only
    assert read_catalog(store, "bikes") is None
    # named so, the old catalog becomes the source's own
    old = DatabaseResource(url=HERE.url, name="bikes")
    assert claim_database_catalog(stores(), old) == []
    assert read_catalog(store, "bikes")["sources"] == [HERE.source]


def test_the_catalog_file_is_never_a_table(store, stores):
    assert store_name(CATALOG_FILE) != CATALOG_FILE
    claim_database_catalog(store, HERE)
    store.open_run(f"bikes.duckdb/{store_name(CATALOG_FILE)}", "run", table=CATALOG_FILE)
    assert store.list_tables("bikes.duckdb") == [CATALOG_FILE]   # the table of that name, not the file


def test_a_broken_catalog_file_is_named(tmp_path):
    store = LocalStore(root=str(tmp_path))
    (tmp_path / "bikes.duckdb").mkdir()
    (tmp_path / "bikes.duckdb" / CATALOG_FILE).write_text("{not json")
    with pytest.raises(StoreError, match="catalog.json is not valid JSON.*fix or delete it"):
        claim_database_catalog(store, HERE)
    (tmp_path / "bikes.duckdb" / CATALOG_FILE).write_text(json.dumps({"name": "bikes.duckdb"}))
    with pytest.raises(StoreError, match="lists no sources"):
        check_database_catalog(store, HERE)
