"""How many Dagster events a second a PostgreSQL run storage takes from many run pods at once.

The events of one real catalog run (a small table, `cataloger run` on an ephemeral instance)
are replayed under fresh run ids by WRITERS processes at once into dagster-postgres's
PostgresEventLogStorage, the storage the Helm chart configures, in a scratch database made
and dropped here.  The rate is benchmarks/simulate_fleet.py's --run-storage-eps.

Run: CATALOGER_TEST_POSTGRES_URL=postgresql://... .venv/bin/python benchmarks/bench_run_storage.py [--writers 1,4,16]
(needs the `bench` extra: dagster-postgres)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
import uuid
from urllib.parse import urlsplit, urlunsplit

import dagster as dg
import duckdb
import psycopg
from dagster._serdes import deserialize_value, serialize_value
from dagster_postgres import PostgresEventLogStorage

from cataloger_dagster.cli.runner import catalog_database

SCRATCH = "cataloger_bench_run_storage"


def one_run_of_events() -> list:
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "one.duckdb")
        con = duckdb.connect(db)
        con.execute("CREATE TABLE orders AS SELECT i AS id, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 70 END AS qty,"
                    " ['a','b','NA'][1 + i % 3] AS code FROM range(1000) r(i)")
        con.close()
        with dg.DagsterInstance.ephemeral() as instance:
            ids = []
            catalog_database(database=f"duckdb://{db}", store=os.path.join(work, "store"), sandbox="local",
                             instance=instance, on_table_done=lambda r: ids.append(r.dagster_run_id))
            return list(instance.all_logs(ids[0]))


def _writer(url: str, events: str, runs: int, start, done) -> None:
    storage = PostgresEventLogStorage(url, should_autocreate_tables=False)
    entries = deserialize_value(events, as_type=list)
    start.wait()
    for _ in range(runs):
        run_id = str(uuid.uuid4())
        for entry in entries:
            storage.store_event(entry._replace(run_id=run_id))
    storage.dispose()
    done.put(runs * len(entries))


def rate(url: str, events: list, writers: int, seconds_goal: float = 8.0) -> float:
    """Events a second stored by `writers` processes, each replaying whole runs."""
    payload = serialize_value(events)
    ctx = multiprocessing.get_context("spawn")
    start, done = ctx.Barrier(writers + 1), ctx.Queue()
    runs = max(2, int(seconds_goal * 400 / len(events) / max(1, writers ** 0.5)))
    procs = [ctx.Process(target=_writer, args=(url, payload, runs, start, done)) for _ in range(writers)]
    for p in procs:
        p.start()
    start.wait()
    t0 = time.perf_counter()
    try:
        stored = sum(done.get(timeout=600) for _ in procs)
    except Exception:
        for p in procs:
            p.kill()
        raise SystemExit(f"a writer failed: exit codes {[p.exitcode for p in procs]}")
    elapsed = time.perf_counter() - t0
    for p in procs:
        p.join()
    return stored / elapsed


def scratch_url(base: str) -> str:
    # dagster-postgres speaks psycopg2 (its NOTIFY takes no server-side parameters)
    parts = urlsplit(base)
    return urlunsplit(parts._replace(scheme="postgresql+psycopg2", path=f"/{SCRATCH}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", default="1,4,16")
    args = parser.parse_args()
    base = os.environ["CATALOGER_TEST_POSTGRES_URL"].replace("postgres://", "postgresql://", 1)
    events = one_run_of_events()
    with psycopg.connect(base, autocommit=True) as con:
        con.execute(f"DROP DATABASE IF EXISTS {SCRATCH}")
        con.execute(f"CREATE DATABASE {SCRATCH}")
    url = scratch_url(base)
    try:
        PostgresEventLogStorage(url, should_autocreate_tables=True).dispose()
        print(f"one catalog run: {len(events)} events")
        for writers in (int(w) for w in args.writers.split(",")):
            print(f"{writers:>3} writers: {rate(url, events, writers):,.0f} events/s", flush=True)
    finally:
        with psycopg.connect(base, autocommit=True) as con:
            con.execute(f"DROP DATABASE IF EXISTS {SCRATCH} WITH (FORCE)")


if __name__ == "__main__":
    main()
