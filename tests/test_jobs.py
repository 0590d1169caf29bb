"""jobs.py: the lists of assets and the `catalog_table` job that runs one table's assets.

The job is built and run for real (local sandbox) on the shop database; the lists are checked
against the asset graph, and the module against its promise to need no settings.
"""

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from cataloger_dagster.assets.catalog_index import catalog_index
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.definitions import defs
from cataloger_dagster.jobs import ALL_ASSETS, CATALOG_TABLE_JOB, TABLE_ASSETS, build_catalog_table_job
from cataloger_dagster.settings.factories import resources
from shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

ROOT = Path(__file__).resolve().parents[1]
PER_TABLE = {"table_profile", "table_understanding", "quality_issues", "investigations", "recent_summary",
             "catalog_page"}


def keys(assets) -> set[str]:
    return {a.key.to_user_string() for a in assets}


def test_the_lists_hold_the_per_table_assets_and_the_index():
    assert keys(TABLE_ASSETS) == PER_TABLE and len(TABLE_ASSETS) == len(PER_TABLE)
    assert ALL_ASSETS[:-1] == TABLE_ASSETS and ALL_ASSETS[-1] is catalog_index
    for asset in TABLE_ASSETS:
        assert asset.partitions_def == tables_partitions, asset.key
    assert catalog_index.partitions_def is None  # one index over all tables


def test_every_per_table_asset_comes_after_what_it_reads():
    graph = defs.resolve_asset_graph()
    seen: set[dg.AssetKey] = set()
    for asset in TABLE_ASSETS:
        assert graph.get(asset.key).parent_keys <= seen, asset.key
        seen.add(asset.key)


def test_the_code_locations_job_selects_the_per_table_assets_by_name():
    job = defs.resolve_job_def(CATALOG_TABLE_JOB)
    assert job.name == "catalog_table"
    assert {k.to_user_string() for k in job.asset_layer.executable_asset_keys} == PER_TABLE
    assert job.partitions_def == tables_partitions


def test_a_job_over_some_assets_runs_only_those(tmp_path):
    db = make_shop(tmp_path / "shop.duckdb")
    res = resources(database=f"duckdb://{db}", store=str(tmp_path / "store"))
    job_defs = dg.Definitions(assets=[table_profile], jobs=[build_catalog_table_job([table_profile])],
                              resources=res)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events"])
        result = job_defs.resolve_job_def(CATALOG_TABLE_JOB).execute_in_process(
            partition_key="events", instance=instance)
    assert result.success
    assert {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()} == {"table_profile"}


def test_the_job_catalogs_one_table_and_leaves_the_index(tmp_path, local_sandbox):
    db = make_shop(tmp_path / "shop.duckdb")
    store = tmp_path / "store"
    res = resources(database=f"duckdb://{db}", store=str(store), sandbox="local")
    job_defs = dg.Definitions(assets=ALL_ASSETS, jobs=[build_catalog_table_job(TABLE_ASSETS)], resources=res)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events", "customers"])
        result = job_defs.resolve_job_def(CATALOG_TABLE_JOB).execute_in_process(
            partition_key="events", instance=instance)
        assert result.success
        events = result.get_asset_materialization_events()
        assert {e.asset_key.to_user_string() for e in events} == PER_TABLE
        assert {e.partition for e in events} == {"events"}
    runs = [p for p in (store / "shop.duckdb" / "events").iterdir() if p.is_dir()]
    assert len(runs) == 1 and (runs[0] / "catalog.html").is_file()
    assert (store / "shop.duckdb" / "events" / "timelapse.html").is_file()   # the table's, beside its runs
    assert not (store / "shop.duckdb" / "customers").exists() and not (store / "shop.duckdb" / "index.html").exists()


def test_the_lists_load_without_the_settings():
    # `cataloger run` imports them; a bad setting must be reported by the command, not by this import
    code = ("import sys, cataloger_dagster.jobs as j; "
            "print(len(j.TABLE_ASSETS), 'cataloger_dagster.definitions' in sys.modules)")
    env = {**os.environ, "CATALOGER_AGENT": "not-an-agent"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["6", "False"]


# ------------------------------------------------------------- review_issue


@pytest.fixture(scope="module")
def reviewable(tmp_path_factory):
    from reviewed import issues_run

    tmp = tmp_path_factory.mktemp("review_job")
    db = make_shop(tmp / "shop.duckdb")
    store = tmp / "store"
    ids = issues_run(db, str(store), "events")
    res = resources(database=f"duckdb://{db}", store=str(store))
    return {"ids": ids, "store": store, "resources": {"database": res["database"], "store": res["store"]}}


def review_run(reviewable, config: dict, reviewer=None, **kwargs):
    from cataloger_dagster.jobs import REVIEW_OP, build_review_job

    defs = dg.Definitions(jobs=[build_review_job(reviewer)], resources=reviewable["resources"])
    return defs.resolve_job_def("review_issue").execute_in_process(
        run_config={"ops": {REVIEW_OP: {"config": config}}}, **kwargs)


def test_review_issue_appends_to_the_tables_log(reviewable):
    from cataloger_dagster.resources.store import LocalStore

    issue = reviewable["ids"][0]
    note = "known: $(id) `id`\n<script>alert(1)</script>"
    with dg.instance_for_test() as instance:
        result = review_run(reviewable, {"table": "events", "issue_id": issue, "verdict": "expected", "note": note},
                            reviewer="from-settings", instance=instance)
        assert result.success
        # the review shows on the table's catalog_page partition in the UI
        observed = instance.fetch_observations(dg.AssetKey("catalog_page"), limit=5).records
        assert observed and observed[0].event_log_entry.asset_observation.partition == "events"
    entry = LocalStore(root=str(reviewable["store"])).read_reviews("shop.duckdb/events")[-1]
    assert (entry.issue_id, entry.verdict, entry.note, entry.reviewer) == (issue, "expected", note, "from-settings")
    assert entry.via == f"dagster run {result.run_id}" and entry.issue is not None


def test_the_reviewer_in_the_run_config_wins_over_the_setting(reviewable):
    result = review_run(reviewable, {"table": "events", "issue_id": reviewable["ids"][1], "verdict": "accept",
                                     "reviewer": "ana"}, reviewer="from-settings")
    assert result.success
    from cataloger_dagster.resources.store import LocalStore
    assert LocalStore(root=str(reviewable["store"])).read_reviews("shop.duckdb/events")[-1].reviewer == "ana"


def test_an_unknown_issue_fails_the_run_with_the_known_ids(reviewable):
    result = review_run(reviewable, {"table": "events", "issue_id": "nope", "verdict": "dismiss"},
                        raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure).step_failure_data.user_failure_data
    assert "no issue 'nope'" in failure.description and reviewable["ids"][0] in failure.description


def test_the_launchpad_config_a_page_shows_runs_the_job(reviewable):
    import yaml

    from cataloger_dagster.core.reviews import commands
    from cataloger_dagster.jobs import REVIEW_JOB, REVIEW_OP

    assert (commands.JOB, commands.OP) == (REVIEW_JOB, REVIEW_OP)
    assert defs.resolve_job_def(REVIEW_JOB).name == REVIEW_JOB   # in the code location
    control = commands.review_control("events", reviewable["ids"][2])
    pasted = yaml.safe_load(commands.launchpad_config(control["head"], "accept", "seen by 'ops'"))
    from cataloger_dagster.jobs import build_review_job
    result = dg.Definitions(jobs=[build_review_job()], resources=reviewable["resources"]) \
        .resolve_job_def(REVIEW_JOB).execute_in_process(run_config=pasted)
    assert result.success


def test_the_run_config_is_typed_for_the_launchpad():
    from cataloger_dagster.jobs import REVIEW_OP, build_review_job

    fields = build_review_job().graph.node_named(REVIEW_OP).definition.config_schema.config_type.fields
    assert set(fields) == {"table", "issue_id", "verdict", "note", "reviewer"}
    assert [v.config_value for v in fields["verdict"].config_type.enum_values] == ["accept", "dismiss", "expected"]
    assert fields["table"].is_required and not fields["note"].is_required
