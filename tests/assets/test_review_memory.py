"""assets/review_memory.py: the quality_issues asset reads the reviews of the whole database once
per run, and the schema history when a review names a column that is gone.  On the shop database,
with the real detectors: a dismissal on other tables lowers the finding of a similar table, and a
dismissal follows its column through a rename."""

import json
import uuid

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.assets.quality_issues import quality_issues
from cataloger_dagster.assets.review_memory import database_reviews
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.assets.table_understanding import table_understanding
from cataloger_dagster.core.models import AnalysisResultModel
from cataloger_dagster.core.reviews import Review, snapshot_of
from cataloger_dagster.resources.store import store_from_url, table_prefix
from cataloger_dagster.settings.factories import resources
from shop import make_shop
from store_folders import run_folders

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

ASSETS = [table_profile, table_understanding, quality_issues]
COPIES = ("visits", "clicks", "carts")


@pytest.fixture
def shop(tmp_path):
    db = make_shop(tmp_path / "shop.duckdb", "events", *COPIES)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events", *COPIES])
        yield db, tmp_path / "store", instance


def run(db, store, instance, table):
    result = dg.materialize(ASSETS, partition_key=table, instance=instance,
                            resources=resources(database=f"duckdb://{db}", store=str(store)))
    assert result.success
    return (result.output_for_node("quality_issues"), result.output_for_node("table_profile"),
            result.asset_materializations_for_node("quality_issues")[0].metadata)


def dismiss(store, table, issue, profile, note="known"):
    found = issue.model_copy(update={"id": issue.id.replace("events", table, 1)})
    store.append_review(table_prefix("shop.duckdb", table), Review(table=table, issue_id=found.id, verdict="dismiss",
                                                            note=note, reviewer="ana",
                                                            issue=snapshot_of(found, profile)))


@pytest.mark.slow
def test_dismissals_on_other_tables_change_the_finding_on_a_similar_table(shop):
    db, root, instance = shop
    store = store_from_url(str(root))
    before, _, _ = run(db, root, instance, "visits")
    by_id = {i.id: i for i in before.issues}
    assert by_id["visits_orphan_references_customer_id"].severity == "high"
    assert by_id["visits_missing_values_page"].severity == "low"

    found, profile, _ = run(db, root, instance, "events")
    events = {i.id: i for i in found.issues}
    # three tables, three people's dismissals of the same detectors on columns of the same kind
    for table in ("events", "clicks", "carts"):
        dismiss(store, table, events["events_orphan_references_customer_id"], profile)
        dismiss(store, table, events["events_missing_values_page"], profile)

    after, _, meta = run(db, root, instance, "visits")
    now = {i.id: i for i in after.issues}
    orphans = now["visits_orphan_references_customer_id"]
    assert orphans.severity == "medium" and orphans.precision.severity_was == "high"
    assert orphans.precision.note.startswith("raised less often: dismissed 3 times on similar columns")
    # a low finding is no longer raised, and the result says why
    assert "visits_missing_values_page" not in now
    assert [i.id for i in after.quieted] == ["visits_missing_values_page"]
    assert after.quieted[0].precision.dismissals == 3
    assert meta["issues_quieted"].value == 1 and meta["issues_lowered"].value == 1
    assert meta["issues_open"].value == meta["issues"].value == len(before.issues) - 1
    assert "raised less often" in after.summary
    # the stored result is the one returned
    folder = run_folders(root / "shop.duckdb" / "visits")[-1]
    assert AnalysisResultModel.model_validate(json.loads((folder / "issues.json").read_text())) == after


@pytest.mark.slow
def test_a_dismissal_follows_its_column_through_a_rename(shop):
    db, root, instance = shop
    store = store_from_url(str(root))
    found, profile, _ = run(db, root, instance, "events")
    missing = next(i for i in found.issues if i.id == "events_missing_values_page")
    dismiss(store, "events", missing, profile, note="pages of old events were never kept")
    with duckdb.connect(str(db)) as con:
        con.execute("ALTER TABLE events RENAME COLUMN page TO url")

    after, _, meta = run(db, root, instance, "events")
    assert "events_missing_values_url" not in {i.id for i in after.issues}
    kept = next(i for i in after.reviewed if i.id == "events_missing_values_url")
    assert kept.review.state == "dismissed" and kept.review.renamed == {"page": "url"}
    assert kept.review.reviewed_id == "events_missing_values_page"
    assert kept.review.note == "pages of old events were never kept"
    assert meta["issues_dismissed"].value == 1


def test_the_reviews_of_a_database_are_read_once_per_run_and_a_broken_log_is_left_out(tmp_path):
    store = store_from_url(str(tmp_path / "store"))
    entry = Review(table="orders", issue_id="orders_outliers_total", verdict="dismiss", reviewer="ana")
    store.append_review(table_prefix("shop.duckdb", "orders"), entry)
    broken = tmp_path / "store" / "shop.duckdb" / "refunds" / "reviews"
    broken.mkdir(parents=True)
    (broken / "2026-01-01T00:00:00.000000Z-x.json").write_text("{not json")

    first = database_reviews(store, "shop.duckdb", "run-1")
    assert {t: [r.issue_id for r in log] for t, log in first.items()} == {"orders": ["orders_outliers_total"]}
    store.append_review(table_prefix("shop.duckdb", "orders"), entry.model_copy(update={"verdict": "accept"}))
    assert database_reviews(store, "shop.duckdb", "run-1") is first          # the same run reads once
    again = database_reviews(store, "shop.duckdb", "run-2")
    assert [r.verdict for r in again["orders"]] == ["dismiss", "accept"]


@pytest.mark.slow
def test_the_memory_works_the_same_on_an_s3_store(tmp_path, s3_env):
    import boto3

    s3 = boto3.client("s3", endpoint_url=s3_env, region_name="us-east-1")
    s3_bucket = f"reviews-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=s3_bucket)
    db = make_shop(tmp_path / "shop.duckdb", "events", *COPIES)
    url = f"s3://{s3_bucket}/catalogs"
    store = store_from_url(url)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events", "visits"])
        found, profile, _ = run(db, url, instance, "events")
        events = {i.id: i for i in found.issues}
        dismiss(store, "events", events["events_duplicate_rows"], profile, note="replayed batch, known")
        for table in ("visits", "clicks", "carts"):   # learned precision reads every table's log on S3 too
            dismiss(store, table, events["events_orphan_references_customer_id"], profile)
        after, _, meta = run(db, url, instance, "events")
    assert [(i.id, i.review.state, i.review.note) for i in after.reviewed] == [
        ("events_duplicate_rows", "dismissed", "replayed batch, known")]
    orphans = next(i for i in after.issues if i.id == "events_orphan_references_customer_id")
    assert orphans.severity == "medium" and orphans.precision.dismissals == 3
    assert meta["issues_dismissed"].value == 1
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=s3_bucket, Prefix="catalogs/shop.duckdb/events/")["Contents"]
                  if o["Key"].endswith("/issues.json"))
    stored = AnalysisResultModel.model_validate_json(s3.get_object(Bucket=s3_bucket, Key=keys[-1])["Body"].read())
    assert stored == after
