"""assets/table_profile.py: the first asset of a table, materialized by Dagster on the shop database.

What it returns (the statistics of the real table), what it stores (profile.json in the run's
folder), the metadata it reports, and that a table it cannot read fails alone and claims no folder.
"""

import hashlib
import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.core.models import TableProfile
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.settings.factories import resources
from shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")


@pytest.fixture
def shop(tmp_path):
    db = make_shop(tmp_path / "shop.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE gone AS SELECT 1 AS x")
        con.execute("CREATE VIEW broken AS SELECT * FROM gone")
        con.execute("DROP TABLE gone")  # reading the view now fails
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events", "customers", "broken"])
        yield db, store, instance, resources(database=f"duckdb://{db}", store=str(store))


def profile_of(instance, res, table="events", **kwargs):
    return dg.materialize([table_profile], partition_key=table, instance=instance, resources=res, **kwargs)


def test_profiles_the_table_and_stores_what_it_returns(shop):
    db, store, instance, res = shop
    result = profile_of(instance, res)
    assert result.success
    profile = result.output_for_node("table_profile")
    assert isinstance(profile, TableProfile)
    # 2000 rows and the 30 repeated ones; every fifth row of page is NULL (see tests/support/shop.py)
    assert (profile.database, profile.table, profile.row_count, profile.column_count) == ("shop.duckdb", "events", 2030, 5)
    assert [c.name for c in profile.columns] == ["event_id", "customer_id", "page", "status", "x"]
    assert profile.column("page").nulls == 203 and profile.column("event_id").nulls == 0
    assert profile.column("status").distinct == 3 and profile.column("x").max == 4
    assert len(profile.sample_rows) == 5 and set(profile.sample_rows[0]) == {c.name for c in profile.columns}
    assert profile.queries > 0

    meta = result.asset_materializations_for_node("table_profile")[0].metadata
    folder = store / "shop.duckdb" / "events" / meta["run_folder"].value
    assert Path(meta["profile"].value) == folder / "profile.json"
    stored = TableProfile.model_validate(json.loads((folder / "profile.json").read_text()))
    assert stored == profile
    assert meta["dagster/row_count"].value == 2030
    assert meta["queries"].value == profile.queries
    assert meta["fingerprint"].value == profile.fingerprint.value
    assert [c.name for c in meta["dagster/column_schema"].value.columns] == [c.name for c in profile.columns]


def test_fingerprint_is_the_databases_and_follows_the_data(shop):
    db, store, instance, res = shop
    first = profile_of(instance, res).output_for_node("table_profile")
    assert first.fingerprint.value == DatabaseResource(url=f"duckdb://{db}").fingerprint("events").value
    with duckdb.connect(str(db)) as con:
        con.execute("INSERT INTO events SELECT * FROM events WHERE event_id < 10")
    second = profile_of(instance, res).output_for_node("table_profile")
    # ids below 30 are there twice already: 20 more rows
    assert second.row_count == 2050 and second.fingerprint.value != first.fingerprint.value
    # one folder per run, the first left as it was
    runs = sorted((store / "shop.duckdb" / "events").iterdir())
    assert len(runs) == 2
    assert json.loads((runs[0] / "profile.json").read_text())["row_count"] == 2030


@pytest.mark.slow
def test_the_source_database_is_not_written(shop):
    db, _, instance, res = shop
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    assert profile_of(instance, res).success and profile_of(instance, res, "customers").success
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_a_table_that_cannot_be_read_fails_and_claims_no_folder(shop):
    _, store, instance, res = shop
    failed = profile_of(instance, res, "broken", raise_on_error=False)
    assert not failed.success
    assert not (store / "shop.duckdb" / "broken").exists()
    # the other tables are unaffected
    assert profile_of(instance, res, "customers").output_for_node("table_profile").row_count == 200
