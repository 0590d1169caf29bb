"""assets/catalog_page.py: the table's catalog.html, materialized by Dagster on the shop database.

Three real runs (local sandbox): `events` cold, `events` warm, then `events_copy`, which starts
from the script of `events`.  The tests read the pages the asset stored, its metadata, and its
helpers `run_history` and `run_tokens` against the same store and instance.
"""

import html
import json
import re
from pathlib import Path
from urllib.parse import quote

import dagster as dg
import pytest

from cataloger_dagster.assets.catalog_page import run_history
from cataloger_dagster.jobs import TABLE_ASSETS
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.settings.factories import resources
from shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")


def run_table(db, store, instance, table):
    res = resources(database=f"duckdb://{db}", store=str(store), sandbox="local")
    result = dg.materialize(TABLE_ASSETS, partition_key=table, instance=instance, resources=res,
                            run_config={"ops": {"investigations": {"config": {"exploration_rate": 0.0}}}})
    assert result.success
    meta = result.asset_materializations_for_node("catalog_page")[0].metadata
    return {
        "result": result,
        "meta": meta,
        "folder": store / "shop.duckdb" / table / meta["run_folder"].value,
        "issues": result.output_for_node("quality_issues"),
        "investigations": result.output_for_node("investigations"),
        "page": Path(meta["catalog_page"].value).read_text(),
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory, local_sandbox_for_module):
    tmp = tmp_path_factory.mktemp("catalog_page")
    db = make_shop(tmp / "shop.duckdb", "events", "events_copy")
    store = tmp / "store"
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events", "events_copy"])
        cold = run_table(db, store, instance, "events")
        warm = run_table(db, store, instance, "events")
        copy = run_table(db, store, instance, "events_copy")
        yield {"store": store, "instance": instance, "cold": cold, "warm": warm, "copy": copy}


def test_the_page_is_stored_in_the_runs_folder_beside_its_links(runs):
    for run in (runs["cold"], runs["warm"], runs["copy"]):
        meta, folder = run["meta"], run["folder"]
        assert Path(meta["catalog_page"].value) == folder / "catalog.html"
        assert Path(meta["script"].value) == folder / "catalog_script.py"
        assert Path(meta["recent_summary"].value) == folder / "recent_summary.html"
        assert (folder / "catalog_script.py").is_file() and (folder / "recent_summary.html").is_file()
    assert runs["cold"]["folder"] != runs["warm"]["folder"]


def test_the_metadata_matches_the_results(runs):
    for run in (runs["cold"], runs["warm"]):
        meta, issues, found = run["meta"], run["issues"].issues, run["investigations"]
        assert meta["issues"].value == len(issues) > 0
        for severity in ("high", "medium", "low"):
            assert meta[f"issues_{severity}"].value == sum(1 for i in issues if i.severity == severity)
        assert meta["pass_rate"].value == found.pass_rate == 1.0
        assert meta["sandbox_cells"].value == found.cells
        assert meta["dagster/row_count"].value == 2030
    assert runs["warm"]["meta"]["sandbox_cells"].value < runs["cold"]["meta"]["sandbox_cells"].value


def test_the_page_shows_every_issue_and_investigation(runs):
    page = runs["warm"]["page"]
    for issue in runs["warm"]["issues"].issues:
        assert issue.id in page
    for inv in runs["warm"]["investigations"].investigations:
        assert html.escape(inv.code.splitlines()[0]) in page
    assert "events" in page and "2,030" in page


def test_the_run_box_says_where_the_script_came_from(runs):
    cold, warm, copy = runs["cold"], runs["warm"], runs["copy"]
    assert cold["result"].run_id in cold["page"] and "explored afresh" in cold["page"]
    assert warm["result"].run_id in warm["page"]
    assert f"events @ {cold['folder'].name}" in warm["page"] and "explored afresh" not in warm["page"]
    # a transferred script names the table it came from, not the page's own
    assert copy["investigations"].based_on_table == "events"
    assert f"events @ {copy['investigations'].based_on}" in copy["page"]


def test_the_script_diff_is_against_the_script_the_run_started_from(runs):
    assert "First script for this table" in runs["cold"]["page"]
    # events_copy has no script of its own before: its diff is against the script of events
    for run in (runs["warm"], runs["copy"]):
        assert "First script for this table" not in run["page"]
        assert 'id="script"' in run["page"]


def test_run_history_lists_every_run_newest_first(runs):
    store = runs["store"]
    history = run_history(LocalStore(root=str(store)), "shop.duckdb/events")
    cold, warm = runs["cold"], runs["warm"]
    assert [h["timestamp"] for h in history] == [warm["folder"].name, cold["folder"].name]
    for row, run in zip(history, (warm, cold)):
        metrics = json.loads((run["folder"] / "catalog_script.metrics.json").read_text())
        assert row["row_count"] == 2030
        assert row["issues"] == len(run["issues"].issues)
        assert row["high"] == sum(1 for i in run["issues"].issues if i.severity == "high")
        assert row["pass_rate"] == metrics["pass_rate"] == 1.0
        assert row["cells"] == run["investigations"].cells
        assert row["fingerprint"] == run["result"].output_for_node("table_profile").fingerprint.value
    assert [h["explored"] for h in history] == [False, True]
    # the page of the warm run shows both runs
    assert cold["folder"].name in warm["page"] and warm["folder"].name in warm["page"]
    assert len(run_history(LocalStore(root=str(store)), "shop.duckdb/events", limit=1)) == 1
    assert run_history(LocalStore(root=str(store)), "shop.duckdb/nothing") == []


def test_the_run_writes_its_summary_and_the_tables_timelapse(runs):
    import json

    from cataloger_dagster.core.history.timelapse import RunSummary

    table_dir = runs["store"] / "shop.duckdb" / "events"
    for run in (runs["cold"], runs["warm"]):
        summary = RunSummary.model_validate(json.loads((run["folder"] / "run_summary.json").read_text()))
        assert summary.timestamp == run["folder"].name and summary.rows == run["meta"]["dagster/row_count"].value
        assert summary.cells == run["investigations"].cells
    timelapse = Path(runs["warm"]["meta"]["timelapse"].value)
    assert timelapse == table_dir / "timelapse.html"
    text = timelapse.read_text()
    assert text.count('<tr class="run"') == 2      # both runs of events (the copy has its own)
    assert f'{quote(runs["cold"]["folder"].name, safe="")}/catalog.html' in text


def test_each_issue_has_a_review_control_naming_this_store_and_database(runs):
    import shlex

    page = runs["warm"]["page"]
    tails = [html.unescape(t) for t in re.findall(r'data-tail="([^"]*)"', page)]
    assert len(tails) == len(runs["warm"]["issues"].issues)
    for tail, issue in zip(sorted(tails, key=lambda t: shlex.split(t)[-1]),
                           sorted(runs["warm"]["issues"].issues, key=lambda i: i.id)):
        assert shlex.split(tail) == ["--name", "shop.duckdb", "--store", str(runs["store"]), "--", "events", issue.id]


def test_the_page_offers_the_runs_guardrails_in_each_tools_format(runs):
    from cataloger_dagster.core.guardrails.downloads import DOWNLOADS
    from cataloger_dagster.core.guardrails.model import GuardrailSuite

    folder, page = runs["warm"]["folder"], runs["warm"]["page"]
    suite = GuardrailSuite.model_validate_json((folder / "guardrails.json").read_text())
    assert suite.guardrails
    for download in DOWNLOADS:
        assert (folder / download.filename).stat().st_size > 0, download
        assert f'href="{download.filename}"' in page, download
    assert len(json.loads((folder / "guardrails.gx_suite.json").read_text())["expectations"]) == len(suite.guardrails)
