"""cli/batches.py: several tables per Dagster run, a failing table split out, and worker processes.

Real Dagster runs over DuckDB files with the local sandbox: a batch is one run over a range of
the `tables` partitions, each table keeps its own materializations, metadata and store folder,
finds what it finds alone, and a table that fails is run again alone while the others of its
batch succeed without it.  Worker processes are real interpreters started by
`catalog_in_workers`; one that dies reports its tables failed.
"""

import json
import os
import signal
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.cli.batches import (
    RANGE_END, RANGE_START, catalog_in_workers, catalog_tables, sandbox_spares, table_batches,
)
from cataloger_dagster.cli.runner import catalog_database
from cataloger_dagster.cli.stopping import Interrupted, stop_on_signals
from shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")


def test_batches_are_runs_of_neighbour_partitions_of_at_most_the_size():
    order = ["a", "b", "c", "d", "e", "f", "g"]
    assert table_batches(order, ["a", "b", "c", "d", "e"], 2) == [["a", "b"], ["c", "d"], ["e"]]
    # a table not asked for (c) ends a range: a run covers every partition between its ends
    assert table_batches(order, ["g", "a", "b", "d", "e"], 5) == [["a", "b"], ["d", "e"], ["g"]]
    assert table_batches(order, ["b", "b"], 3) == [["b"]]
    assert table_batches(order, [], 3) == []
    with pytest.raises(ValueError, match="at least one table"):
        table_batches(order, ["a"], 0)


def test_one_process_batching_keeps_two_sandboxes_warm_and_workers_one_each():
    assert sandbox_spares(20, 1) == 2
    assert sandbox_spares(1, 1) == 1     # one table per run: the next starts during the run's other steps
    assert sandbox_spares(20, 2) == 1    # two processes start theirs side by side already


def test_a_failure_naming_no_table_is_bisected_down_to_the_table():
    """A run that fails without naming its table (here: raising) is split in halves until the
    table is alone; every other table ends in a run that succeeded."""
    class Ok:
        success, run_id = True, "ok"

    runs = []

    def run(tables):
        runs.append(list(tables))
        if "c" in tables:
            raise RuntimeError("cannot start")
        return Ok()

    reports = catalog_tables(["a", "b", "c", "d", "e"], run,
                             lambda name, result, error: (name, "failed" if error else "ok"))
    assert reports == [("a", "ok"), ("b", "ok"), ("c", "failed"), ("d", "ok"), ("e", "ok")]
    assert runs[0] == ["a", "b", "c", "d", "e"] and ["c"] in runs
    assert all(any(t in r and "c" not in r for r in runs) for t in "abde")


@pytest.fixture(scope="module")
def shop_db(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("batches")
    db = make_shop(tmp / "shop.duckdb", "events", "events_copy")
    with duckdb.connect(str(db)) as con:
        # fails when profiled: its rows raise an error once read
        con.execute("CREATE VIEW flaky AS SELECT range AS id, CASE WHEN range > 3 THEN error('flaky broke') END AS x "
                    "FROM range(10)")
        con.execute("CREATE TABLE zeta AS SELECT range AS id, range % 3 AS kind FROM range(50)")
    return db


@pytest.fixture(scope="module")
def batched(shop_db, tmp_path_factory, local_sandbox_for_module):
    """The shop's tables in one batch (flaky among them), then one table per run, into two stores."""
    out = {}
    for batch in (10, 1):
        store = tmp_path_factory.mktemp(f"store-{batch}")
        with dg.instance_for_test() as instance:
            report = catalog_database(database=f"duckdb://{shop_db}", store=str(store), sandbox="local",
                                      exploration_rate=0.0, instance=instance, batch=batch)
            out[batch] = {"report": report, "store": store, "runs": instance.get_run_records(),
                          # read while the test instance's DAGSTER_HOME (where the log goes) exists
                          "logs": {t.table: Path(t.log).read_text() for t in report.failed if t.log},
                          "materializations": {t.table: instance.fetch_materializations(
                              dg.AssetRecordsFilter(asset_key=dg.AssetKey("catalog_page"), asset_partitions=[t.table]),
                              limit=5).records for t in report.tables}}
    return out


def test_a_batch_is_one_run_and_a_failing_table_fails_alone(batched):
    report, runs = batched[10]["report"], batched[10]["runs"]
    by_table = {t.table: t for t in report.tables}
    assert sorted(by_table) == ["customers", "events", "events_copy", "flaky", "zeta"]
    assert {t.table for t in report.failed} == {"flaky"}
    assert "flaky broke" in by_table["flaky"].error and by_table["flaky"].error.endswith("(while profiling it)")
    assert "flaky broke" in batched[10]["logs"]["flaky"] and 'File "' in batched[10]["logs"]["flaky"]
    table_runs = [r.dagster_run for r in reversed(runs) if {RANGE_START, "dagster/partition"} & set(r.dagster_run.tags)]
    ranges = [(r.tags.get(RANGE_START), r.tags.get(RANGE_END)) for r in table_runs if RANGE_START in r.tags]
    alone = [r.tags["dagster/partition"] for r in table_runs if "dagster/partition" in r.tags]
    # the batch over all five failed on flaky: flaky again alone, the tables before and after it
    # again (those after it, one here, alone)
    assert ranges == [("customers", "zeta"), ("customers", "events_copy")] and alone == ["flaky", "zeta"]
    failed_runs = {r.run_id for r in table_runs if r.is_failure}
    assert len(failed_runs) == 2 and by_table["flaky"].dagster_run_id in failed_runs
    for name in ("customers", "events", "events_copy", "zeta"):
        table = by_table[name]
        # degraded, not failed: the reference search cannot read flaky either (as when run alone)
        assert table.status in ("ok", "degraded") and table.dagster_run_id not in failed_runs
        # its last catalog_page materialization is from the run its report names, with its own folder
        latest = batched[10]["materializations"][name][0]
        assert latest.run_id == table.dagster_run_id
        assert latest.asset_materialization.metadata["run_folder"].value == table.run
        assert (batched[10]["store"] / "shop.duckdb" / name / table.run / "catalog.html").is_file()
    assert not batched[10]["materializations"]["flaky"]


def test_tables_batched_together_share_a_run_and_find_what_they_find_alone(batched):
    together, alone = batched[10]["report"], batched[1]["report"]
    ok = [t for t in together.tables if t.status != "failed"]
    assert len({t.dagster_run_id for t in ok}) < len(ok)   # some shared a run
    assert len({t.dagster_run_id for t in alone.tables}) == len(alone.tables)
    alone_by_table = {t.table: t for t in alone.tables}
    for table in ok:
        single = alone_by_table[table.table]
        assert [i.model_dump() for i in table.issues] == [i.model_dump() for i in single.issues], table.table
        assert table.pass_rate == single.pass_rate and table.sandbox_cells == single.sandbox_cells
        assert (table.status, table.degradations) == (single.status, single.degradations)
        stored = json.loads((batched[10]["store"] / "shop.duckdb" / table.table / table.run / "issues.json").read_text())
        assert [i["id"] for i in stored["issues"]] == [i.id for i in table.issues]
    assert {i.type for i in alone_by_table["events"].issues} >= {"missing_values", "duplicate_rows"}


def test_worker_processes_catalog_batches_into_one_instance(shop_db, tmp_path, monkeypatch, local_sandbox):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    tables = ["customers", "events", "events_copy", "zeta"]
    heard = []
    with dg.DagsterInstance.get() as instance:
        report = catalog_database(database=f"duckdb://{shop_db}", store=str(tmp_path / "store"), sandbox="local",
                                  exploration_rate=0.0, instance=instance, tables=tables, batch=1, jobs=2,
                                  on_table_done=lambda r: heard.append(r.table))
        runs = {r.dagster_run.run_id: r.dagster_run for r in instance.get_run_records()}
        pids = {t.table: {e.dagster_event.pid for e in instance.all_logs(t.dagster_run_id) if e.dagster_event and e.dagster_event.pid}
                for t in report.tables}
    assert not report.failed and sorted(heard) == sorted(tables) and report.index
    assert [t.table for t in report.tables] == tables
    for table in report.tables:
        assert runs[table.dagster_run_id].is_success
        assert runs[table.dagster_run_id].tags["dagster/partition"] == table.table
        assert (tmp_path / "store" / "shop.duckdb" / table.table / table.run / "catalog.html").is_file()
    # each run in one process, two processes in all, neither of them this one
    assert all(len(p) == 1 for p in pids.values()), pids
    workers = set().union(*pids.values())
    assert len(workers) == 2 and os.getpid() not in workers


@pytest.mark.slow
def test_a_worker_that_dies_reports_its_tables_failed():
    # a setup the worker cannot unpack: it exits at once, as one killed would
    got = list(catalog_in_workers([["a", "b"], ["c"]], 2, ("not", "a setup")))
    assert sorted(got) == [("a", None), ("b", None), ("c", None)]


def test_a_batch_a_signal_stopped_is_not_run_again_table_by_table():
    """Dagster turns a Ctrl-C during a step into a failed run; that is a stop, never a table's failure."""
    class Failed:
        success, run_id = False, "stopped"
        all_events = []

    runs = []

    def run(tables):
        runs.append(list(tables))
        swallowed = signal.signal(signal.SIGINT, lambda *_: None)   # as Dagster's handler does in a run
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.1)
        finally:
            signal.signal(signal.SIGINT, swallowed)
        return Failed()

    with stop_on_signals(), pytest.raises(Interrupted):
        catalog_tables(["a", "b", "c"], run, lambda name, result, error: pytest.fail("no table is reported"))
    assert runs == [["a", "b", "c"]]
