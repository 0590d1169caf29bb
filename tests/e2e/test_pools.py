"""A database's pool holds in a real deployment: 4 tables, a limit of 2 catalog runs at once.

`dagster dev` (webserver and daemon, with the run queue) runs on a DAGSTER_HOME holding
deploy/dagster.yaml, over a SQLite file of 4 tiny tables, with CATALOGER_DATABASE_CONCURRENCY=2.
The database-change sensor's first tick sets the pool's limit and requests one run per table;
the test samples the runs through the webserver's GraphQL while they drain.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from cataloger_dagster.assets.pools import database_pool
from e2e_support import REPO, RUN_DONE, DagsterDev, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.bwrap]

# twice the limit: every run but the first two waits its turn, and a pool that let them all
# start would be seen holding twice its slots; more tables only add waves of the same
TABLES = 4
LIMIT = 2
RUNS = """{
  runsOrError(filter: {pipelineName: "catalog_table"}) {
    ... on Runs { results { runId status startTime endTime allPools tags { key value } } }
  }
}"""
POOL_LIMIT = """query Pool($pool: String!) {
  instance { concurrencyLimit(concurrencyKey: $pool) { slotCount } }
}"""
HOLDING = ("STARTING", "STARTED", "CANCELING")
STALL_S = 240


def make_database(path: Path) -> list[str]:
    names = [f"t{i:02d}" for i in range(TABLES)]
    with sqlite3.connect(path) as con:
        for i, name in enumerate(names):
            con.execute(f"CREATE TABLE {name} (id INTEGER PRIMARY KEY, label TEXT)")
            con.executemany(f"INSERT INTO {name} VALUES (?, ?)", [(k, f"v{(k * i) % 3}") for k in range(5)])
    return names


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    """The largest number of the intervals that overlap at one instant."""
    edges = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals],
                   key=lambda e: (e[0], e[1]))   # an end before a start at the same instant
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


# past the suite's 600 s on a busy machine; a stalled queue fails it sooner (STALL_S)
@pytest.mark.timeout(1800)
def test_more_runs_of_one_database_than_its_pool_never_exceed_it(tmp_path, local_sandbox):
    tables = make_database(tmp_path / "shop.sqlite")
    pool = database_pool("shop.sqlite")   # the catalog of shop.sqlite: its file's name
    dev = DagsterDev(
        home=tmp_path / "dagster_home",
        dagster_yaml=(REPO / "deploy" / "dagster.yaml").read_text(),   # telemetry off, as deployed
        env={"CATALOGER_DATABASE": f"sqlite://{tmp_path / 'shop.sqlite'}",
             "CATALOGER_STORE": str(tmp_path / "store"),
             "CATALOGER_SENSOR_INTERVAL_S": "5",
             # below deploy/dagster.yaml's default_limit (4): the setting, not the file, must decide
             "CATALOGER_DATABASE_CONCURRENCY": str(LIMIT)},
    )
    dev.start()
    try:
        # the sensor's first tick requests every table; from then on, sample until all are done
        wait_for("the sensor's run requests", lambda: len(runs(dev)) >= TABLES, timeout=120, every=1)
        most_holding, queued_seen, done = 0, {}, 0
        progress = time.monotonic()
        while True:
            now = runs(dev)
            dev.remember_descendants()
            holding = [r for r in now if r["status"] in HOLDING]
            most_holding = max(most_holding, len(holding))
            queued_seen.update({r["runId"]: r for r in now if r["status"] == "QUEUED"})
            finished = sum(r["status"] in RUN_DONE for r in now)
            if len(now) >= TABLES and finished == len(now):
                break
            if finished > done:
                done, progress = finished, time.monotonic()
            # about half a minute in all on an idle 2-core machine, mostly each run's process start
            # (2 waves of 2); on a busy one far longer, so what fails the test is a queue that stalls
            assert time.monotonic() - progress < STALL_S, (
                f"no run finished for {STALL_S}s: {_statuses(now)}\n{dev.log_tail()}")
            time.sleep(1)
        slots = dev.graphql(POOL_LIMIT, {"pool": pool})["instance"]["concurrencyLimit"]["slotCount"]
    finally:
        left = dev.stop()
    assert not left, f"processes left running: {left}"

    assert slots == LIMIT   # CATALOGER_DATABASE_CONCURRENCY reached the pool, above dagster.yaml's default
    assert len(now) == TABLES, _statuses(now)
    assert {_tag(r, "dagster/partition") for r in now} == set(tables)
    assert all(r["status"] == "SUCCESS" for r in now), _statuses(now)
    assert all(r["allPools"] == [pool] for r in now), {r["allPools"][0] if r["allPools"] else None for r in now}
    # while they waited, the webserver listed them as queued runs of the pool
    assert len(queued_seen) >= TABLES - LIMIT, f"only {len(queued_seen)} runs were ever seen queued"
    assert all(r["allPools"] == [pool] for r in queued_seen.values())
    # never more than the limit at once: in every sample, and over the runs' own start and end times
    assert 0 < most_holding <= LIMIT, f"{most_holding} runs of {pool} held a slot at once"
    overlap = most_at_once([(r["startTime"], r["endTime"]) for r in now])
    # at most the limit; not always reached: the daemon launches queued runs one after another,
    # and a run shorter than a launch (about 9 s a run here) ends before the next starts
    assert 0 < overlap <= LIMIT, f"{overlap} runs ran at once; the limit is {LIMIT}"


def runs(dev: DagsterDev) -> list[dict]:
    return dev.graphql(RUNS)["runsOrError"]["results"]


def _tag(run: dict, key: str) -> str | None:
    return next((t["value"] for t in run["tags"] if t["key"] == key), None)


def _statuses(found: list[dict]) -> dict[str, str]:
    return {_tag(r, "dagster/partition") or r["runId"]: r["status"] for r in found}
