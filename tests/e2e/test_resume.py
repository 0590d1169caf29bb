"""A `cataloger run` killed halfway, run again: only the tables without a finished run for their
current data are cataloged, and nothing stored is lost.

The real command in a subprocess over a DuckDB file and a store folder, killed with SIGKILL (its
whole process group, the sandboxes included) once two tables have finished.
"""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

from cataloger_dagster.core.layout import RUN_SUMMARY
from cli_support import CATALOGER, cataloger, cataloger_env
from store_folders import run_folders

pytestmark = pytest.mark.slow

TABLES = [f"t{n}" for n in range(4)]


def finished(store: Path) -> dict[str, list[str]]:
    """Table -> its run folders that wrote their summary."""
    out = {}
    for table in (store / "data.duckdb").glob("t*"):
        done = [p.name for p in run_folders(table) if (p / RUN_SUMMARY).is_file()]
        if done:
            out[table.name] = done
    return out


def test_a_killed_run_resumes_with_the_tables_it_had_not_finished(tmp_path):
    db = tmp_path / "data.duckdb"
    with duckdb.connect(str(db)) as con:
        for n, table in enumerate(TABLES):
            con.execute(f"CREATE TABLE {table} AS SELECT range AS id, range % {n + 3} AS grp, "
                        f"'x' || (range % 7) AS label FROM range({500 + 100 * n})")
    store = tmp_path / "store"
    # one table per run, so that the kill can come between two tables; the rerun batches them
    first = subprocess.Popen([CATALOGER, "run", "--database", f"duckdb://{db}", "--store", str(store), "--batch", "1"],
                             env=cataloger_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 300
    try:
        while len(finished(store)) < 2:
            assert first.poll() is None, f"the run ended before it could be killed: {first.stderr.read()}"
            assert time.monotonic() < deadline, "two tables did not finish within 5 minutes"
            time.sleep(0.2)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(30)
    before = finished(store)
    folders_before = {t.name: [p.name for p in run_folders(t)] for t in (store / "data.duckdb").glob("t*")}
    assert len(before) < len(TABLES), "every table finished before the kill"
    assert not (store / "data.duckdb" / "index.html").exists()
    # one finished table's data changes before the rerun: it is cataloged again
    changed = sorted(before)[0]
    with duckdb.connect(str(db)) as con:
        con.execute(f"INSERT INTO {changed} VALUES (100000, 1, 'new')")

    second = cataloger("run", "--database", f"duckdb://{db}", "--store", str(store), "--json")
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout)
    assert report["resumed_from"] is not None
    tables = {t["table"]: t for t in report["tables"]}
    assert set(tables) == set(TABLES) and all(t["status"] == "ok" for t in tables.values())
    kept = {name for name, t in tables.items() if t["resumed"]}
    assert kept == set(before) - {changed}
    for name in kept:   # the earlier run stands: no new folder, the report points at it
        assert tables[name]["run"] == before[name][-1] and Path(tables[name]["html"]).is_file()
        assert [p.name for p in run_folders(store / "data.duckdb" / name)] == folders_before[name]
    for name in set(TABLES) - kept:
        folders = [p.name for p in run_folders(store / "data.duckdb" / name)]
        assert tables[name]["run"] == folders[-1] and tables[name]["run"] not in folders_before.get(name, [])
        # the killed run's half-written folder (if it had begun this table) is still there
        assert set(folders_before.get(name, [])) <= set(folders)
    index = (store / "data.duckdb" / "index.html").read_text()
    assert all(name in index for name in TABLES)

    # that run finished: the next one catalogs every table again
    third = cataloger("run", "--database", f"duckdb://{db}", "--store", str(store), "--json", "--table", "t0")
    assert third.returncode == 0, third.stderr
    again = json.loads(third.stdout)
    assert again["resumed_from"] is None and not again["tables"][0]["resumed"]
