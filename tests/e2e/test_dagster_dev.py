"""`dagster dev -w workspace.yaml` as a user runs it (`make ui`): the instance is deploy/dagster.yaml,
the change sensor catalogs the new table, catalog_index follows by itself, and Ctrl-C (SIGINT to
the process group, as a terminal sends it) stops everything within 10 s, even with a run and
its sandbox in flight: no process and no bubblewrap sandbox is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import duckdb
import psutil
import pytest

from e2e_support import REPO, CatalogStack, DagsterDev, wait_for
from tests.conftest import sandbox_problem, service_unavailable

pytestmark = [pytest.mark.slow, pytest.mark.bwrap]

TABLE = "small"
STOP_WITHIN_S = 10
INDEX_MATERIALIZATIONS = """{
  assetOrError(assetKey: {path: ["catalog_index"]}) {
    ... on Asset { assetMaterializations(limit: 1) { runId metadataEntries { label } } }
  }
}"""
RUN_TAGS = "query Run($id: ID!) { runOrError(runId: $id) { ... on Run { status tags { key value } } } }"


def sandboxes(dev: DagsterDev) -> list[psutil.Process]:
    dev.remember_descendants()
    found = []
    for pid, created in dev.seen.items():
        try:
            p = psutil.Process(pid)
            if p.create_time() == created and p.name() == "bwrap" and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            pass
    return found


@pytest.fixture
def dev(tmp_path):
    problem = sandbox_problem("local")
    if problem:
        service_unavailable(problem)
    database = tmp_path / "small.duckdb"
    with duckdb.connect(str(database)) as con:
        con.execute(f"CREATE TABLE {TABLE} AS SELECT range AS id, range % 3 AS grp, 'v' || range AS label FROM range(40)")
    dev = DagsterDev(home=tmp_path / "dagster_home", dagster_yaml=(REPO / "deploy" / "dagster.yaml").read_text(),
                     env={"CATALOGER_DATABASE": f"duckdb:///{database}", "CATALOGER_STORE": str(tmp_path / "store"),
                          "CATALOGER_SENSOR_INTERVAL_S": "5"})
    dev.start(timeout=600)
    try:
        yield dev
    finally:
        left = dev.stop()
        assert not left, f"processes left running after stopping dagster dev: {left}"


def test_the_sensor_catalogs_the_table_the_index_follows_and_ctrl_c_stops_everything(dev, tmp_path):
    # the change sensor's run of the table, then catalog_index_sensor's run of the index
    def index_run():
        mats = dev.graphql(INDEX_MATERIALIZATIONS)["assetOrError"].get("assetMaterializations")
        return mats[0]["runId"] if mats else None

    run_id = wait_for("catalog_index materialized after the sensor's table run", index_run, timeout=900, every=5)
    tags = {t["key"]: t["value"] for t in dev.graphql(RUN_TAGS, {"id": run_id})["runOrError"]["tags"]}
    assert "catalog_index_sensor" in tags.values(), tags
    assert (tmp_path / "store" / "small.duckdb" / "index.html").is_file()

    # a run with its sandbox up when Ctrl-C comes
    bound = STOP_WITHIN_S * machine_slowness()
    stack = CatalogStack(dev=dev, database=None, store=tmp_path / "store")
    stack.launch_partition(TABLE)
    sandbox = wait_for("the run's sandbox (bwrap) to start", lambda: sandboxes(dev), timeout=600, every=0.5)
    dev.remember_descendants()
    processes = {pid: describe(pid) for pid in dev.seen} | {dev.proc.pid: "dagster dev"}
    started = time.monotonic()
    os.killpg(dev.proc.pid, signal.SIGINT)
    ended: dict[int, float] = {}
    while time.monotonic() < started + bound + 2 and len(ended) < len(processes):
        for pid in set(processes) - set(ended):
            if not alive(dev, pid):
                ended[pid] = time.monotonic() - started
        time.sleep(0.1)
    timeline = "\n".join(f"  {ended[pid]:5.1f} s  {cmd}" if pid in ended else f"  alive    {cmd}"
                          for pid, cmd in sorted(processes.items(), key=lambda i: ended.get(i[0], 1e9)))
    assert dev.proc.poll() is not None and ended[dev.proc.pid] <= bound, \
        f"dagster dev still running {bound:.0f} s after SIGINT:\n{timeline}"
    assert len(ended) == len(processes) and max(ended.values()) <= bound + 2, f"left after SIGINT:\n{timeline}"
    assert not [p for p in sandbox if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    print(f"stopped within {bound:.0f} s of SIGINT:\n{timeline}")   # shown with -s or -rP


def machine_slowness() -> float:
    """How many times its CPU time a Python start with Dagster's imports takes now: about 1 on an
    idle machine, more while other work shares the cores.  The bound of STOP_WITHIN_S holds on an
    idle machine; a loaded one stretches every process's shutdown by this factor."""
    begin = time.monotonic()
    out = subprocess.run([sys.executable, "-c", "import os, dagster; t = os.times(); print(t.user + t.system)"],
                         capture_output=True, text=True, check=True, timeout=300)
    return max(1.0, (time.monotonic() - begin) / max(float(out.stdout), 0.1))


def describe(pid: int) -> str:
    try:
        return f"{pid} " + " ".join(psutil.Process(pid).cmdline())[:110]
    except psutil.Error:
        return f"{pid} (gone)"


def alive(dev: DagsterDev, pid: int) -> bool:
    if pid == dev.proc.pid:
        return dev.proc.poll() is None
    try:
        p = psutil.Process(pid)
        return p.create_time() == dev.seen[pid] and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
