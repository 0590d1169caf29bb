"""cli/runner.py: `catalog_database`, real Dagster runs over batches of tables (local sandbox) and the index.

The database holds two good tables, a view that fails when read and a table whose name Dagster
cannot take as a partition key: the good ones are catalogued, each other one fails alone with
its reason, and the report, the callbacks, the partitions and the index all say so.
"""

import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.cli.batches import RANGE_END, RANGE_START
from cataloger_dagster.cli.runner import STEPS, CatalogReport, catalog_database, dagster_instance
from cataloger_dagster.settings.model import load_settings
from shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

BAD_NAME = "odd...name"


@pytest.fixture(scope="module")
def catalogued(tmp_path_factory, local_sandbox_for_module):
    tmp = tmp_path_factory.mktemp("runner")
    db = make_shop(tmp / "shop.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute(f'CREATE TABLE "{BAD_NAME}" AS SELECT 1 AS id')
        con.execute("CREATE TABLE gone AS SELECT 1 AS x")
        con.execute("CREATE VIEW broken AS SELECT * FROM gone")
        con.execute("DROP TABLE gone")
    store = tmp / "store"
    heard = []
    with dg.instance_for_test() as instance:
        report = catalog_database(
            database=f"duckdb://{db}", store=str(store), sandbox="local", exploration_rate=0.0,
            instance=instance, on_tables=lambda names: heard.append(("tables", names)),
            on_table_done=lambda r: heard.append(("done", r.table)),
            on_progress=lambda table, step, seconds: heard.append(("step", (table, step, seconds))),
        )
        yield {"db": db, "store": store, "instance": instance, "report": report, "heard": heard}


def by_table(report: CatalogReport) -> dict:
    return {t.table: t for t in report.tables}


def test_good_tables_are_catalogued_and_each_bad_one_fails_alone(catalogued):
    report = catalogued["report"]
    tables = by_table(report)
    assert sorted(tables) == sorted([BAD_NAME, "broken", "customers", "events"])
    assert {t.table for t in report.failed} == {BAD_NAME, "broken"}
    assert tables["customers"].status == tables["events"].status == "ok"
    # the failing step and the database's own reason
    assert tables["broken"].error.endswith("(while profiling it)") and "cannot be read" in tables["broken"].error
    assert tables["broken"].dagster_run_id and tables["broken"].html is None
    assert "Dagster does not allow in a partition key" in tables[BAD_NAME].error
    assert tables[BAD_NAME].dagster_run_id is None  # never run


def test_a_good_tables_report_is_read_from_its_run(catalogued):
    store, instance = catalogued["store"], catalogued["instance"]
    events = by_table(catalogued["report"])["events"]
    folder = store / "shop.duckdb" / "events" / events.run
    assert Path(events.html) == folder / "catalog.html" and folder.is_dir()
    assert instance.get_run_by_id(events.dagster_run_id).is_success
    stored = json.loads((folder / "issues.json").read_text())["issues"]
    assert [i.id for i in events.issues] == [i["id"] for i in stored]
    assert {i.type for i in events.issues} >= {"missing_values", "duplicate_rows", "orphan_references"}
    metrics = json.loads((folder / "catalog_script.metrics.json").read_text())
    assert events.pass_rate == metrics["pass_rate"] == 1.0
    assert events.sandbox_cells == metrics["cells"] > 0
    assert events.tokens == 0 and events.seconds > 0


def test_the_report_names_the_database_store_and_index(catalogued):
    report, store, db = catalogued["report"], catalogued["store"], catalogued["db"]
    assert report.database == f"duckdb://{db}"
    assert str(store) in report.store
    assert report.index == str(store / "shop.duckdb" / "index.html")
    index = Path(report.index).read_text()
    for table in ("events", "customers", "broken", BAD_NAME):
        assert table in index
    assert "Dagster does not allow in a partition key" in index  # the failed table's reason


def test_callbacks_hear_the_tables_first_then_each_one_as_it_ends(catalogued):
    heard = catalogued["heard"]
    assert heard[0][0] == "tables" and sorted(heard[0][1]) == sorted([BAD_NAME, "broken", "customers", "events"])
    done = [(kind, n) for kind, n in heard[1:] if kind == "done"]
    # each once (those never run first, then the others as their runs end)
    assert len(done) == 4 and sorted(n for _, n in done) == sorted(heard[0][1])
    # each step of each good table as it finished, before its batch's reports; its seconds are theirs
    steps = [n for kind, n in heard if kind == "step"]
    first_report = heard.index(next(h for h in heard if h[0] == "done" and h[1] in ("customers", "events")))
    for table in ("customers", "events"):
        mine = [(i, step, s) for i, (kind, n) in enumerate(heard) if kind == "step" for t, step, s in [n] if t == table]
        assert sorted(step for _, step, _ in mine) == sorted(STEPS) and all(s > 0 for _, _, s in mine)
        assert max(i for i, _, _ in mine) < first_report
        report = by_table(catalogued["report"])[table]
        assert report.seconds == pytest.approx(sum(s for _, _, s in mine), abs=0.002)
    assert {t for t, _, _ in steps} == {"customers", "events"}   # the broken table finished no step


def test_only_names_that_can_be_keys_become_partitions(catalogued):
    partitions = catalogued["instance"].get_dynamic_partitions("tables")
    assert sorted(partitions) == ["broken", "customers", "events"]


def test_unknown_tables_fail_with_the_tables_there_are_and_partitions_are_not_added_twice(catalogued):
    instance = catalogued["instance"]
    report = catalog_database(database=f"duckdb://{catalogued['db']}", store=str(catalogued["store"]),
                              sandbox="local", tables=["customers", "nope"], exploration_rate=0.0,
                              instance=instance)
    tables = by_table(report)
    assert [t.table for t in report.tables] == ["customers", "nope"]
    assert tables["customers"].status == "ok"
    assert "table 'nope' not found" in tables["nope"].error and "events" in tables["nope"].error
    assert sorted(instance.get_dynamic_partitions("tables")) == ["broken", "customers", "events"]
    assert len([p for p in (catalogued["store"] / "shop.duckdb" / "customers").iterdir() if p.is_dir()]) == 2
    # a name that is no table of the database is not listed in the index
    assert "nope" not in Path(report.index).read_text()


def test_explicit_arguments_replace_the_settings(tmp_path, local_sandbox):
    db = tmp_path / "one.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT range AS id FROM range(10)")
    settings = load_settings(database=f"duckdb://{tmp_path / 'elsewhere.duckdb'}", store=str(tmp_path / "a"))
    with dg.instance_for_test() as instance:
        report = catalog_database(settings=settings, database=f"duckdb://{db}", store=str(tmp_path / "b"),
                                  sandbox="local", explore=True, instance=instance)
    assert not report.failed and report.database == f"duckdb://{db}"
    assert (tmp_path / "b" / "one.duckdb" / "index.html").is_file() and not (tmp_path / "a").exists()
    metrics = json.loads(next((tmp_path / "b" / "one.duckdb" / "t").glob("*/catalog_script.metrics.json")).read_text())
    assert metrics["explored"] is True and "explore requested" in metrics["why"]


def test_dagster_instance_is_persistent_under_dagster_home_and_makes_it(tmp_path, monkeypatch):
    home = tmp_path / "fresh" / ".dagster_home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dagster_instance() as instance:
        assert not instance.is_ephemeral
        instance.add_dynamic_partitions("tables", ["kept"])
    assert home.is_dir()
    with dagster_instance() as instance:
        assert instance.get_dynamic_partitions("tables") == ["kept"]
    monkeypatch.delenv("DAGSTER_HOME")
    with dagster_instance() as instance:
        assert instance.is_ephemeral


def test_each_tables_run_is_in_its_databases_pool(catalogued):
    from cataloger_dagster.assets.pools import database_pool

    records = catalogued["instance"].get_run_records()
    table_runs = [r.dagster_run for r in records if {RANGE_START, "dagster/partition"} & set(r.dagster_run.tags)]
    # the three in one run, which failed on broken; then broken alone, the other two together
    assert {(r.tags.get("dagster/partition") or f"{r.tags[RANGE_START]}..{r.tags[RANGE_END]}")
            for r in table_runs} >= {"broken", "broken..events", "customers..events"}
    # the daemon counts these runs against the limit of the database's pool
    assert all(r.run_op_concurrency.all_pools == {database_pool("shop.duckdb")} for r in table_runs)
