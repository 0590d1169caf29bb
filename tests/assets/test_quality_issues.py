"""assets/quality_issues.py: the issues of a table, materialized by Dagster on the shop database.

The planted issues are found, the other tables of the database are consulted (orphans), the
previous run's issues reach the agent (what is new, what is resolved), and what the asset
returns is what it stores and reports.
"""

import hashlib
import json
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.assets.quality_issues import quality_issues
from cataloger_dagster.resources.store.key_profiles import stored_profiles
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.assets.table_understanding import table_understanding
from cataloger_dagster.core.issues.detectors.references import key_profile
from cataloger_dagster.core.layout import KEYS, PROFILE, TABLE_FACTS
from cataloger_dagster.core.models import AnalysisResultModel, TableProfile
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.settings.factories import resources
from shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

ASSETS = [table_profile, table_understanding, quality_issues]
PLANTED = {"events_missing_values_page", "events_duplicate_rows", "events_orphan_references_customer_id"}


@pytest.fixture
def shop(tmp_path):
    db = make_shop(tmp_path / "shop.duckdb")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events"])
        yield db, tmp_path / "store", instance


def find_issues(db, store, instance):
    res = resources(database=f"duckdb://{db}", store=str(store))
    result = dg.materialize(ASSETS, partition_key="events", instance=instance, resources=res)
    assert result.success
    meta = result.asset_materializations_for_node("quality_issues")[0].metadata
    folder = store / "shop.duckdb" / "events" / result.asset_materializations_for_node("table_profile")[0].metadata[
        "run_folder"].value
    return result.output_for_node("quality_issues"), meta, folder


@pytest.mark.slow
def test_finds_the_planted_issues_and_stores_and_counts_them(shop):
    result, meta, folder = find_issues(*shop)
    ids = {i.id for i in result.issues}
    assert PLANTED <= ids
    assert "inconsistent_categories" in {i.type for i in result.issues}  # 'shipped' / 'Shipped'
    missing = next(i for i in result.issues if i.id == "events_missing_values_page")
    assert missing.affectedColumns == ["page"] and missing.affectedRows == 203
    # ordered high, medium, low
    order = {"high": 0, "medium": 1, "low": 2}
    assert [order[i.severity] for i in result.issues] == sorted(order[i.severity] for i in result.issues)

    assert AnalysisResultModel.model_validate(json.loads((folder / "issues.json").read_text())) == result
    assert Path(meta["issues_json"].value) == folder / "issues.json"
    assert meta["issues"].value == len(result.issues)
    for severity in ("high", "medium", "low"):
        assert meta[f"issues_{severity}"].value == sum(1 for i in result.issues if i.severity == severity)
    assert meta["summary"].value == result.summary and "Since the previous run" not in result.summary
    assert meta["agent"].value == "heuristic" and meta["dagster/row_count"].value == 2030


def test_orphans_are_found_through_the_other_tables(shop):
    db, store, instance = shop
    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE customers")
    result, _, _ = find_issues(db, store, instance)
    ids = {i.id for i in result.issues}
    assert "events_orphan_references_customer_id" not in ids
    assert PLANTED - {"events_orphan_references_customer_id"} <= ids


@pytest.mark.slow
def test_the_search_takes_the_other_tables_keys_from_their_stored_profiles(shop, tmp_path):
    # customers is profiled and stored; then its name column breaks (a view whose cast fails on
    # every row).  With the stored profile the search knows customer_id is a key and verifies the
    # reference on that column alone; without one it must count every column, and cannot.
    db, store, instance = shop
    instance.add_dynamic_partitions("tables", ["customers"])
    res = resources(database=f"duckdb://{db}", store=str(store))
    assert dg.materialize([table_profile], partition_key="customers", instance=instance, resources=res).success
    with duckdb.connect(str(db)) as con:
        con.execute("ALTER TABLE customers RENAME TO customers_data")
        con.execute("CREATE VIEW customers AS SELECT customer_id, "
                    "CAST(CAST(name AS INTEGER) AS VARCHAR) AS name FROM customers_data")
    stored, _, _ = find_issues(db, store, instance)
    orphans = next(i for i in stored.issues if i.id == "events_orphan_references_customer_id")
    assert orphans.details["references"] == "customers.customer_id"
    assert not [d for d in stored.degradations if d.column == "customer_id"]
    unstored, _, _ = find_issues(db, tmp_path / "empty-store", instance)
    assert "events_orphan_references_customer_id" not in {i.id for i in unstored.issues}
    assert [d for d in unstored.degradations if d.column == "customer_id"]


def test_the_run_stores_the_key_profile_that_the_other_tables_searches_read(shop):
    db, store, instance = shop
    _, _, folder = find_issues(db, store, instance)
    profile = TableProfile.model_validate_json((folder / PROFILE).read_text())
    keys = TableProfile.model_validate_json((folder / KEYS).read_text())
    assert keys == key_profile(profile) and not keys.sample_rows
    assert len((folder / KEYS).read_bytes()) < len((folder / PROFILE).read_bytes()) / 2
    database = DatabaseResource(url=f"duckdb://{db}")
    catalog = database.catalog()
    local = LocalStore(root=str(store))
    # the log holds it without its defaults, and reads back as the same key profile
    assert local.read_table_facts("shop.duckdb")["events"]["keys"] == keys.model_dump(mode="json", exclude_defaults=True)
    assert stored_profiles(local, database, catalog, "customers")["events"] == keys
    # a store written before the database's log of facts: the run folder's key profile
    shutil.rmtree(store / "shop.duckdb" / TABLE_FACTS)
    assert stored_profiles(local, database, catalog, "customers")["events"] == keys
    # and a run folder without it (an older store, or quality_issues still to come): the whole profile
    (folder / KEYS).unlink()
    assert stored_profiles(local, database, catalog, "customers")["events"] == profile


@pytest.mark.slow
def test_the_previous_runs_issues_say_what_is_new_and_what_is_resolved(shop):
    db, store, instance = shop
    first, _, _ = find_issues(db, store, instance)
    again, _, _ = find_issues(db, store, instance)
    assert {i.id for i in again.issues} == {i.id for i in first.issues}
    assert "Since the previous run: 0 new, 0 resolved." in again.summary
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE events SET page = 'page0' WHERE page IS NULL")
    fixed, meta, _ = find_issues(db, store, instance)
    assert "events_missing_values_page" not in {i.id for i in fixed.issues}
    assert "Since the previous run: 0 new, 1 resolved." in fixed.summary
    assert meta["issues"].value == len(first.issues) - 1


def test_smart_fix_issues_carry_their_followup_and_their_fix_scripts_sit_beside_the_catalog_script(shop):
    db, store, instance = shop
    before = hashlib.sha256(Path(db).read_bytes()).hexdigest()
    result, meta, folder = find_issues(db, store, instance)
    smart = [i for i in result.issues if i.category == "smart_fixes"]
    assert "events_orphan_references_customer_id" in {i.id for i in smart}
    assert all(i.followup is not None for i in smart)
    assert all(i.followup is None for i in result.issues if i.category != "smart_fixes")
    written = sorted(str(p.relative_to(folder)) for p in (folder / "fixes").iterdir())
    expected = sorted(a.file for i in smart for a in i.followup.onResponse.values() if a.script)
    assert written == expected and len(written) >= 3
    orphans = next(i for i in smart if i.id == "events_orphan_references_customer_id").followup
    assert (folder / orphans.onResponse["delete_orphans"].file).read_text() == orphans.onResponse["delete_orphans"].script
    assert meta["fix_scripts"].value == len(written) and meta["smart_fix_followups"].value == len(smart)
    # written, never run: the source is as it was
    assert hashlib.sha256(Path(db).read_bytes()).hexdigest() == before


@pytest.mark.slow
def test_history_findings_are_raised_after_the_detectors_and_reviews_set_them_aside(shop):
    from cataloger_dagster.core.layout import HISTORY
    from cataloger_dagster.core.reviews.record import record_review
    from cataloger_dagster.resources.store import LocalStore

    db, store, instance = shop
    first, _, _ = find_issues(db, store, instance)
    assert not [i for i in first.issues if i.source == "history"]    # no history yet
    with duckdb.connect(str(db)) as con:
        con.execute("ALTER TABLE events ADD COLUMN channel VARCHAR DEFAULT 'web'")
    second, meta, folder = find_issues(db, store, instance)
    [change] = [i for i in second.issues if i.source == "history"]
    assert change.id == "events_schema_change" and change.details["added"] == ["channel"]
    stored = AnalysisResultModel.model_validate(json.loads((folder / "issues.json").read_text()))
    assert change in stored.issues and meta["issues"].value == len(second.issues)
    assert (store / "shop.duckdb" / "events" / HISTORY).exists()

    # a person says it is no issue; the next change of the same column is set aside by the review memory
    record_review(LocalStore(root=str(store)), "shop.duckdb", "events", change.id, "dismiss", reviewer="ana")
    with duckdb.connect(str(db)) as con:
        con.execute("ALTER TABLE events DROP COLUMN channel")
    third, _, _ = find_issues(db, store, instance)
    assert "events_schema_change" not in {i.id for i in third.issues}
    [set_aside] = [i for i in third.reviewed if i.id == "events_schema_change"]
    assert set_aside.details["dropped"] == ["channel"] and set_aside.review.state == "dismissed"
