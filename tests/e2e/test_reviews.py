"""Reviews on the demo database: people review the findings of `orders` (through the store's
review log, as `cataloger review` and the `review_issue` job write it), the table is catalogued
again, and issues.json, the page, the index, the asset checks and the metadata remember: a dismissed
high-severity finding no longer fails the check, an expected one is known and costs no health, an
accepted one stays open with its age, one that grew beyond its dismissal comes back with both
figures, and the notes never reach the sandbox."""

import shutil

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.assets.catalog_index import catalog_index, index_entry
from cataloger_dagster.assets.checks import build_asset_checks
from cataloger_dagster.core.layout import CATALOG_PAGE, INVESTIGATIONS, ISSUES, SCRIPT
from cataloger_dagster.core.sensitive.masking import scrub_object
from cataloger_dagster.core.models import AnalysisResultModel, InvestigationsResult, TableProfile
from cataloger_dagster.core.reviews import Review, snapshot_of
from cataloger_dagster.jobs import TABLE_ASSETS
from cataloger_dagster.resources.store import store_from_url, table_prefix
from cataloger_dagster.settings.model import load_settings
from cataloger_dagster.settings.factories import resources

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("error::DeprecationWarning")]

TABLE = "orders"
MARKER = "REVIEW_NOTE_5C1E"
NOTE = f"known: see ticket 7\nprint('{MARKER}'); __import__('os').system('echo {MARKER}')"


def catalog(db, store, instance):
    res = resources(database=f"duckdb://{db}", store=str(store), sandbox="local")
    result = dg.materialize([*TABLE_ASSETS, *build_asset_checks(load_settings())], partition_key=TABLE,
                            instance=instance, resources=res,
                            run_config={"ops": {"investigations": {"config": {"exploration_rate": 0.0}}}})
    assert result.success
    index = dg.materialize([catalog_index], instance=instance, resources=res)
    assert index.success
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    meta = {e.asset_key.path[-1]: e.event_specific_data.materialization.metadata
            for e in result.get_asset_materialization_events()}
    return result.output_for_node("quality_issues"), checks, meta, meta["catalog_page"]["run_folder"].value


def test_reviews_on_the_demo_database_are_remembered_by_the_next_run(demo_db, tmp_path, local_sandbox):
    db = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, db)      # the demo is shared by the session: this test changes its copy
    root = tmp_path / "store"
    store = store_from_url(str(root))
    prefix = table_prefix("demo.duckdb", TABLE)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", [TABLE])
        first, checks, meta, run1 = catalog(db, root, instance)
        found = {i.id: i for i in first.issues}
        high = [i for i in first.issues if i.severity == "high"]
        assert [i.id for i in high] == ["orders_duplicate_keys_order_id"] and not checks["no_high_severity_issues"].passed
        profile = TableProfile.model_validate(store.read_json(prefix, run1, "profile.json"))
        health_before = index_entry(store, "demo.duckdb", TABLE, None).health

        def review(issue_id, verdict, note="", who="ana"):
            store.append_review(prefix, Review(table=TABLE, issue_id=issue_id, verdict=verdict, note=note,
                                               reviewer=who, run=run1, issue=snapshot_of(found[issue_id], profile)))

        review("orders_duplicate_keys_order_id", "dismiss", "a replayed import; fixed upstream")
        review("orders_inconsistent_categories_status", "expected", "two systems spell it differently")
        review("orders_orphan_references_customer_id", "accept", NOTE, who="bo")
        review("orders_out_of_range_order_date", "dismiss", "test orders")

        second, checks, meta, run2 = catalog(db, root, instance)
        ids = {i.id: i for i in second.issues}
        aside = {i.id: i.review.state for i in second.reviewed}
        assert aside == {"orders_duplicate_keys_order_id": "dismissed",
                         "orders_inconsistent_categories_status": "expected",
                         "orders_out_of_range_order_date": "dismissed"}
        accepted = ids["orders_orphan_references_customer_id"].review
        assert accepted.state == "accepted" and accepted.open_since == run1 and accepted.reviewer == "bo"
        assert set(ids) == set(found) - set(aside)
        # issues.json holds what was returned, its personal values masked as the store keeps them
        assert AnalysisResultModel.model_validate(store.read_json(prefix, run2, ISSUES)) == scrub_object(second)
        # the asset check and the metadata count what review set aside
        check = checks["no_high_severity_issues"]
        assert check.passed and check.metadata["high_set_aside_by_review"].value == 1
        issues_meta = meta["quality_issues"]
        assert (issues_meta["issues_open"].value, issues_meta["issues_dismissed"].value,
                issues_meta["issues_expected"].value, issues_meta["issues_accepted"].value) == (len(ids), 2, 1, 1)
        assert meta["catalog_page"]["issues_dismissed"].value == 2
        # the set-aside findings were not investigated, and no note reached the sandbox
        investigated = InvestigationsResult.model_validate(store.read_json(prefix, run2, INVESTIGATIONS))
        assert {i.issue_id for i in investigated.investigations} == set(ids)
        assert MARKER not in store.read_script(prefix, run2, SCRIPT)
        assert all(MARKER not in inv.code and MARKER not in str(inv.output) for inv in investigated.investigations)
        # the page and the index
        page = store.read_artifact(prefix, run2, CATALOG_PAGE).decode()
        assert 'id="reviewed"' in page and "Dismissed</b> by ana" in page and "a replayed import" in page
        assert "Accepted</b> by bo" in page and "open for" in page
        entry = index_entry(store, "demo.duckdb", TABLE, None)
        assert entry.updated == run2 and entry.health > health_before
        assert entry.issues_by_severity["high"] == 0

        # the dismissed future dates grow well past +50%: they come back, with both figures
        before = found["orders_out_of_range_order_date"].affectedRows
        with duckdb.connect(str(db)) as con:
            con.execute("UPDATE orders SET order_date = DATE '2230-01-01' WHERE order_id IN "
                        f"(SELECT order_id FROM orders WHERE order_date < DATE '2200-01-01' LIMIT {before})")
        third, checks, meta, run3 = catalog(db, root, instance)
    back = next(i for i in third.issues if i.id == "orders_out_of_range_order_date")
    assert back.review.state == "worse_since_dismissed"
    assert (back.review.rows_then, back.review.rows_now) == (before, back.affectedRows) and back.affectedRows >= 2 * before
    assert "orders_out_of_range_order_date" not in {i.id for i in third.reviewed}
    assert meta["quality_issues"]["issues_back_after_review"].value == 1
    page = store.read_artifact(prefix, run3, CATALOG_PAGE).decode()
    assert "Worse since dismissed" in page
