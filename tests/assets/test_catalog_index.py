"""assets/catalog_index.py: index.html over every table of the catalog, materialized by Dagster after real runs.

The shop database with `events` catalogued in full, `odd name#1?` (a name that needs escaping in
paths and links) catalogued in full, and `customers` only profiled; then the index, with an
error for a table reported by the config.  The entries link the latest run that has a page.
"""

from pathlib import Path
from urllib.parse import quote, unquote, urljoin, urlparse

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.assets.catalog_index import catalog_index, index_entry
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.core.models import AnalysisResultModel, TableProfile, severity_counts
from cataloger_dagster.core.health import health_score
from cataloger_dagster.jobs import ALL_ASSETS, TABLE_ASSETS
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.settings.factories import resources
from shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

ODD = "odd name#1?"


def build_index(instance, res, errors=None):
    config = {"ops": {"catalog_index": {"config": {"errors": errors or {}}}}}
    result = dg.materialize(ALL_ASSETS, selection=[catalog_index], instance=instance, resources=res,
                            run_config=config)
    assert result.success
    return result.asset_materializations_for_node("catalog_index")[0].metadata


@pytest.fixture(scope="module")
def catalogued(tmp_path_factory, local_sandbox_for_module):
    tmp = tmp_path_factory.mktemp("catalog_index")
    db = make_shop(tmp / "shop.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute(f'CREATE TABLE "{ODD}" AS SELECT range AS id, range % 4 AS grp FROM range(40)')
    store = tmp / "store"
    res = resources(database=f"duckdb://{db}", store=str(store), sandbox="local")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events", ODD, "customers"])
        done = {}
        for table in ("events", ODD):
            result = dg.materialize(TABLE_ASSETS, partition_key=table, instance=instance, resources=res)
            assert result.success
            done[table] = result.asset_materializations_for_node("catalog_page")[0].metadata["run_folder"].value
        assert dg.materialize([table_profile], partition_key="customers", instance=instance, resources=res).success
        yield {"instance": instance, "res": res, "store": store, "done": done}


def test_the_index_lists_every_stored_table_and_every_reported_error(catalogued):
    store = catalogued["store"]
    # partitions of another database in the same instance are none of this catalog's tables
    catalogued["instance"].add_dynamic_partitions("tables", ["another_databases_table"])
    meta = build_index(catalogued["instance"], catalogued["res"], {"a...b": "not a partition key"})
    assert Path(meta["index"].value) == store / "shop.duckdb" / "index.html"
    assert meta["tables"].value == 4  # three tables with results and the name only the errors know
    assert meta["failed"].value == 2  # customers has no page yet; a...b failed
    page = (store / "shop.duckdb" / "index.html").read_text()
    for text in ("events", "customers", "a...b", "not a partition key", "not cataloged yet"):
        assert text in page
    assert "another_databases_table" not in page


def test_a_cataloged_table_is_summarised_from_its_stored_run(catalogued):
    store = LocalStore(root=str(catalogued["store"]))
    ts = catalogued["done"]["events"]
    entry = index_entry(store, "shop.duckdb", "events", None)
    profile = TableProfile.model_validate(store.read_json("shop.duckdb/events", ts, "profile.json"))
    issues = AnalysisResultModel.model_validate(store.read_json("shop.duckdb/events", ts, "issues.json"))
    metrics = store.read_metrics("shop.duckdb/events", ts, "catalog_script.py")
    assert (entry.status, entry.error, entry.updated) == ("ok", None, ts)
    assert (entry.row_count, entry.column_count) == (2030, 5)
    assert entry.issues_by_severity == severity_counts(i.severity for i in issues.issues)
    assert entry.pass_rate == metrics["pass_rate"] == 1.0
    assert entry.health == health_score(profile, issues, 1.0) < 100
    # relative to index.html; the timestamp's colons percent-encoded
    assert entry.href == f"events/{quote(ts, safe='')}/catalog.html"


def test_links_resolve_from_the_index_to_the_page_even_for_odd_names(catalogued):
    root = catalogued["store"] / "shop.duckdb"
    entry = index_entry(LocalStore(root=str(catalogued["store"])), "shop.duckdb", ODD, None)
    assert entry.status == "ok" and entry.row_count == 40
    # what a browser does with the link on file:///.../shop/index.html
    target = urlparse(urljoin((root / "index.html").as_uri(), entry.href))
    assert Path(unquote(target.path)).is_file()
    assert Path(unquote(target.path)).name == "catalog.html" and not target.query and not target.fragment


def test_a_later_run_without_a_page_does_not_hide_the_last_page(catalogued):
    instance, res, store_root = catalogued["instance"], catalogued["res"], catalogued["store"]
    assert dg.materialize([table_profile], partition_key="events", instance=instance, resources=res).success
    store = LocalStore(root=str(store_root))
    assert len(store.list_runs("shop.duckdb/events")) == 2
    entry = index_entry(store, "shop.duckdb", "events", None)
    assert entry.updated == catalogued["done"]["events"] and entry.status == "ok"


def test_missing_and_failed_tables(catalogued):
    store = LocalStore(root=str(catalogued["store"]))
    missing = index_entry(store, "shop.duckdb", "customers", None)
    assert (missing.status, missing.href, missing.health) == ("missing", "", 0.0)
    assert "not cataloged yet" in missing.error
    failed = index_entry(store, "shop.duckdb", "never_seen", "profile: boom")
    assert (failed.status, failed.error, failed.href) == ("failed", "profile: boom", "")
    # a failed run of a table with an earlier page: marked failed, the last page still linked
    stale = index_entry(store, "shop.duckdb", "events", "investigations: sandbox died")
    assert stale.status == "failed" and stale.error == "investigations: sandbox died"
    assert stale.href.endswith("/catalog.html") and stale.row_count == 2030


def test_every_index_is_kept_in_the_history(catalogued):
    build_index(catalogued["instance"], catalogued["res"])
    build_index(catalogued["instance"], catalogued["res"])
    history = list((catalogued["store"] / "shop.duckdb" / "index_history").iterdir())
    assert len(history) >= 2
    latest = (catalogued["store"] / "shop.duckdb" / "index.html").read_text()
    assert latest in [p.read_text() for p in history]


def test_the_index_links_each_cataloged_tables_timelapse(catalogued):
    meta = build_index(catalogued["instance"], catalogued["res"])
    index = Path(meta["index"].value)
    html = index.read_text()
    store = LocalStore(root=str(catalogued["store"]))
    for table in ("events", ODD):
        entry = index_entry(store, "shop.duckdb", table, None)
        assert entry.timelapse and f'href="{entry.timelapse}"' in html.replace("&amp;", "&")
        # the link opens the file the run wrote, even for a name escaped in paths and URLs
        target = Path(unquote(urlparse(urljoin(index.as_uri(), entry.timelapse)).path))
        assert target.is_file() and target.name == "timelapse.html"
    assert index_entry(store, "shop.duckdb", "customers", None).timelapse == ""   # only profiled: no page, no timelapse


def test_the_index_carries_what_its_search_runs_over(catalogued):
    """The entry holds the table's description, its columns with their meanings, its open findings
    (as Dagster's catalog shows them) and its owner; the page embeds them for the search."""
    from cataloger_dagster.resources.store.cataloged import cataloged

    store = LocalStore(root=str(catalogued["store"]))
    entry = index_entry(store, "shop.duckdb", "events", None, {"events": "team:web", "*": "ops@example.com"})
    same = cataloged(store, "shop.duckdb", "events")
    assert entry.description == same.description and entry.description
    assert [(c.name, c.type, c.description) for c in entry.columns] == [
        (c.name, c.type, c.description) for c in same.columns]
    assert any(c.description for c in entry.columns)
    assert [(f.id, f.severity) for f in entry.findings] == [(f.id, f.severity) for f in same.findings]
    assert entry.owner == "team:web"
    assert index_entry(store, "shop.duckdb", ODD, None, {"events": "team:web", "*": "ops@example.com"}).owner \
        == "ops@example.com"
    assert index_entry(store, "shop.duckdb", ODD, None).owner == ""
    # found by the only run: first seen then
    assert {f.since for f in entry.findings} <= {catalogued["done"]["events"]}

    config = {"ops": {"catalog_index": {"config": {"owners": {"events": "team:web"}}}}}
    result = dg.materialize(ALL_ASSETS, selection=[catalog_index], instance=catalogued["instance"],
                            resources=catalogued["res"], run_config=config)
    html = Path(result.asset_materializations_for_node("catalog_index")[0].metadata["index"].value).read_text()
    assert "owner: team:web" in html and 'id="search"' in html
    assert '<option value="team:web">team:web</option>' in html


def test_a_finding_is_dated_from_the_first_run_of_its_unbroken_line(tmp_path):
    from cataloger_dagster.assets.catalog_index import first_seen
    from cataloger_dagster.core.layout import RUN_SUMMARY

    store = LocalStore(root=str(tmp_path))
    prefix = "shop/t"
    runs = [store.open_run(prefix, f"run-{i}", table="t") for i in range(4)]
    found = [["a"], ["a", "b"], ["a", "b", "c"]]
    for run, ids in zip(runs[:3], found):
        store.write_json(prefix, run, RUN_SUMMARY, {"timestamp": run, "issue_ids": ids})
    # the last run: a since the first, b since the second, c since the third, d new;
    # a run that wrote no summary (stopped early) breaks nothing
    store.write_json(prefix, runs[3], RUN_SUMMARY, {"timestamp": runs[3], "issue_ids": ["a", "b", "c", "d"]})
    assert first_seen(store, prefix, runs[3], ["a", "b", "c", "d"]) == {
        "a": runs[0], "b": runs[1], "c": runs[2], "d": runs[3]}
    # a line broken by a run that did not find it: dated from after the break
    later = store.open_run(prefix, "run-4", table="t")
    store.write_json(prefix, later, RUN_SUMMARY, {"timestamp": later, "issue_ids": ["d"]})
    assert first_seen(store, prefix, later, ["d", "e"]) == {"d": runs[3], "e": later}


def test_a_table_whose_results_cannot_be_read_is_listed_failed_and_the_others_still_are(tmp_path):
    store = LocalStore(root=str(tmp_path))
    prefix = "shop/t"
    run = store.open_run(prefix, "run-0", table="t")
    for name in ("catalog.html", "profile.json", "issues.json"):
        store.write_artifact(prefix, run, name, "not json {")
    entry = index_entry(store, "shop", "t", None)
    assert entry.status == "failed" and "cannot be read" in entry.error and "valid JSON" in entry.error
