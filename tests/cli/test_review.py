"""`cataloger review` over a real store holding real runs (the issue stages of the shop
database, materialized by Dagster): recording, listing, errors and exit codes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cataloger_dagster.cli import main
from cataloger_dagster.resources.store import LocalStore, table_prefix
from reviewed import issues_run
from shop import make_shop


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("review_cli")
    db = make_shop(tmp / "shop.duckdb")
    store = tmp / "store"
    return {"db": db, "store": store, "ids": issues_run(db, str(store), "events")}


def invoke(shop, *args, env=None):
    env = {"CATALOGER_DATABASE": f"duckdb://{shop['db']}", "CATALOGER_STORE": str(shop["store"]),
           "CATALOGER_REVIEWER": None, **(env or {})}
    return CliRunner().invoke(main, ["review", *args], env=env, catch_exceptions=False)


def log(shop):
    return LocalStore(root=str(shop["store"])).read_reviews(table_prefix("shop.duckdb", "events"))


def test_review_records_a_verdict_with_its_note_and_reviewer(shop):
    issue = shop["ids"][0]
    note = "a false alarm: $(id) `id` 'q'\n<b>bold</b>"
    out = invoke(shop, "events", issue, "--dismiss", "--note", note, "--reviewer", "ana", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert (data["database"], data["table"]) == ("shop.duckdb", "events")
    assert data["review"]["verdict"] == "dismiss" and data["review"]["note"] == note
    entry = log(shop)[-1]
    assert (entry.issue_id, entry.verdict, entry.note, entry.reviewer, entry.via) == (issue, "dismiss", note, "ana", "cli")
    assert data["uri"].endswith(".json") and entry.issue.type in issue


def test_the_reviewer_comes_from_the_setting_when_no_flag_is_given(shop):
    out = invoke(shop, "events", shop["ids"][1], "--expected", env={"CATALOGER_REVIEWER": "lead"})
    assert out.exit_code == 0 and "by lead" in out.stdout
    assert log(shop)[-1].reviewer == "lead"


def test_list_shows_the_log_oldest_first_and_each_current_verdict(shop):
    invoke(shop, "events", shop["ids"][2], "--accept", "--reviewer", "a")
    invoke(shop, "events", shop["ids"][2], "--dismiss", "--reviewer", "b", "--note", "not after all")
    data = json.loads(invoke(shop, "events", "--list", "--json").stdout)
    at = [r["at"] for r in data["reviews"]]
    assert at == sorted(at) and len(at) == len(log(shop))
    assert data["current"][shop["ids"][2]]["verdict"] == "dismiss"
    assert data["current"][shop["ids"][2]]["note"] == "not after all"
    text = invoke(shop, "events", "--list").stdout
    assert "current verdicts:" in text and f"dismiss  {shop['ids'][2]!r}" in text


def test_errors_name_the_table_and_exit_1(shop):
    out = invoke(shop, "events", "events_nothing", "--accept", "--json")
    assert out.exit_code == 1
    error = json.loads(out.stdout)["error"]
    assert "'events_nothing'" in error and all(repr(i) in error for i in shop["ids"])
    out = invoke(shop, "ghost", "x", "--accept")
    assert out.exit_code == 1 and "table 'ghost' of database 'shop.duckdb' has no run" in out.stderr


@pytest.mark.parametrize("args, message", [
    (["events"], "give ISSUE_ID and one of"),
    (["events", "x"], "give ISSUE_ID and one of"),
    (["events", "x", "--accept", "--list"], "--list takes only TABLE"),
    (["events", "x", "--accept", "--expected"], "give one verdict, not --accept and --expected"),
])
def test_usage_errors_exit_2_and_write_nothing(shop, args, message):
    before = len(log(shop))
    out = invoke(shop, *args)
    assert out.exit_code == 2 and message in out.output
    assert len(log(shop)) == before


# ------------------------------------------------------------------------ S3


@pytest.mark.slow
def test_the_cli_and_the_job_review_into_one_log_on_s3(s3_env, tmp_path):
    import uuid

    import dagster as dg

    from cataloger_dagster.jobs import REVIEW_OP, build_review_job
    from cataloger_dagster.resources.store import store_from_url
    from cataloger_dagster.settings.factories import resources

    bucket = f"test-{uuid.uuid4().hex[:12]}"
    url = f"s3://{bucket}/team/catalog"
    store = store_from_url(url)
    store.s3_resource().get_client().create_bucket(Bucket=bucket)
    db = make_shop(tmp_path / "shop.duckdb")
    ids = issues_run(db, url, "events")
    s3 = {"db": db, "store": url}

    out = invoke(s3, "events", ids[0], "--dismiss", "--note", "cli on s3", "--reviewer", "ana", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["uri"].startswith(f"{url}/shop.duckdb/events/reviews/")
    res = resources(database=f"duckdb://{db}", store=url)
    job = dg.Definitions(jobs=[build_review_job()], resources={k: res[k] for k in ("database", "store")})
    assert job.resolve_job_def("review_issue").execute_in_process(run_config={"ops": {REVIEW_OP: {"config": {
        "table": "events", "issue_id": ids[1], "verdict": "accept", "note": "job on s3", "reviewer": "bo"}}}}).success

    data = json.loads(invoke(s3, "events", "--list", "--json").stdout)
    assert [(r["issue_id"], r["verdict"], r["reviewer"]) for r in data["reviews"]] == [
        (ids[0], "dismiss", "ana"), (ids[1], "accept", "bo")]
    keys = [o["Key"] for o in store.s3_resource().get_client().list_objects_v2(
        Bucket=bucket, Prefix="team/catalog/shop.duckdb/events/reviews/")["Contents"]]
    assert len(keys) == 2 and all(k.endswith(".json") for k in keys)
