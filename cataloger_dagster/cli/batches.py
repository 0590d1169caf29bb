"""Several tables per Dagster run, and several runs at once, for `cataloger run`.

A Dagster run of one table pays its start, its planned materializations and every step's
events in the run storage (on SQLite, a new connection and a commit each): more than the work
on a small table.  So `cataloger run` catalogs tables in batches: one run per batch, over a
range of the `tables` partitions (Dagster's partition-range tags, as a single-run backfill
makes), each asset doing its work table by table (`assets.common.each_table`).  Each table
keeps its own partition, materializations, metadata and store folder.

A range must be contiguous in the partitions' order, so a batch is a run of neighbours in
that order (`table_batches`).  Dagster records a step over a range as one success or one
failure, so a table that fails fails its batch's run, named in the failure (`FAILED_TABLE`);
`catalog_tables` then catalogs it alone, in a run of its own whose failure is its own, and
the tables before and after it again as batches: one bad table never fails another.

With ``jobs`` > 1 and a persistent instance, ``jobs`` worker processes take one batch at a
time (`catalog_in_workers`): the work of a table is mostly Python, so processes, not threads,
use the machine's cores.  Each has its own resources, warm sandbox pool and database
connections, and its runs go to the same instance (the UI shows them all).  A pool limit on the
database (`assets.pools`) still holds: each step claims a slot of its pool, whatever process
runs it.  On two cores they gain little (BENCHMARKS.md, "Per-table overhead: batches"): a
table's work already keeps both busy, its sandbox's interpreter starting beside it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from multiprocessing.connection import Connection, wait
from typing import Callable, Generator, Iterable, Sequence

import dagster as dg

from cataloger_dagster.assets.common import FAILED_TABLE
from cataloger_dagster.cli.stopping import Interrupted, check_stop, stop_requested
from cataloger_dagster.settings.environment import python_environment

# Dagster's tags of a run over a range of partitions (what a single-run backfill sets; Dagster
# exports no name for them)
RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"


def sandbox_spares(batch: int, jobs: int) -> int:
    """Sandboxes each process keeps across its tables, cleaned between them (sandbox/pool.py).
    Within a batch one table's investigations follow the last one's at once, so one process
    alone keeps two, one cleaned while the other works (about 5% faster, measured); with several
    processes, one each (a sandbox holds an interpreter with ibis loaded: about 150 MB)."""
    return 2 if batch > 1 and jobs == 1 else 1


def range_tags(tables: list[str]) -> dict:
    """The run tags (and partition) of a run over `tables`, neighbours in the partitions' order."""
    if len(tables) == 1:
        return {"partition_key": tables[0]}
    return {"tags": {RANGE_START: tables[0], RANGE_END: tables[-1]}}


def table_batches(partitions: Sequence[str], tables: Iterable[str], size: int) -> list[list[str]]:
    """`tables` (each a partition) as runs of at most `size` neighbours in `partitions`' order."""
    if size < 1:
        raise ValueError(f"a batch holds at least one table, not {size}")
    position = {name: i for i, name in enumerate(partitions)}
    batches: list[list[str]] = []
    last = None
    for name in sorted(set(tables), key=position.__getitem__):
        if batches and last == position[name] - 1 and len(batches[-1]) < size:
            batches[-1].append(name)
        else:
            batches.append([name])
        last = position[name]
    return batches


def failed_table(result: dg.ExecuteInProcessResult) -> str | None:
    """The table a failed run over several tables failed on, if a step named it."""
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data:
            data = event.step_failure_data.user_failure_data
            table = data.metadata.get(FAILED_TABLE) if data is not None else None
            if table is not None:
                return str(table.value)
    return None


def catalog_tables(
    tables: list[str],
    run: Callable[[list[str]], dg.ExecuteInProcessResult],
    report: Callable[[str, dg.ExecuteInProcessResult | None, BaseException | None], object],
) -> list:
    """One report per table of `tables` (a batch), from one run over them all when it succeeds.

    When it fails, the table it failed on is cataloged alone, and the tables before and after it
    again as two batches (each half, when the failure names no table).  A run of one table is
    not split: its failure is that table's.  ``report(table, result, error)`` makes a table's
    report from its run's result, or from the exception a run raised.  A run that a signal
    stopped raises `Interrupted`: no table failed, and none is run again."""
    try:
        result = run(tables)
    except Exception as exc:  # a definition-level failure: no run to read
        check_stop()
        if len(tables) == 1:
            return [report(tables[0], None, exc)]
        result = None
    # a run stopped by Ctrl-C or SIGTERM failed because of it, not because of a table
    check_stop()
    if result is not None and (result.success or len(tables) == 1):
        return [report(name, result, None) for name in tables]
    culprit = failed_table(result) if result is not None else None
    if culprit in tables:
        at = tables.index(culprit)
        parts = [tables[:at], [culprit], tables[at + 1 :]]
    else:
        half = len(tables) // 2
        parts = [tables[:half], tables[half:]]
    return [r for part in parts if part for r in catalog_tables(part, run, report)]


# ------------------------------------------------------------------ worker processes
# a worker's messages: ("progress", table, (step, seconds)) as each step finishes a table,
# ("report", table, report JSON) for each table, then ("done", None, None); ("stopped", None, signal)
# when a signal stopped it
PROGRESS, REPORT, DONE, STOPPED = "progress", "report", "done", "stopped"
STOP_GRACE_S = 15.0  # how long stopped workers get to close their run and sandboxes before being killed


def catalog_in_workers(
    batches: list[list[str]],
    jobs: int,
    setup: tuple,
    on_progress: Callable[[str, str, float], None] | None = None,
) -> Generator[tuple[str, str | None], None, None]:
    """(table, report as JSON) as `jobs` worker processes catalog `batches`; a table whose
    process ended first comes with None.  `on_progress(table, step, seconds)` hears each step
    of each table as a worker finishes it.

    Each worker is ``python -m cataloger_dagster.cli.worker``: a fresh interpreter (no fork of
    this process's threads and connections, no import of the caller's main module), that
    receives `setup` and then one batch at a time over a pipe, and answers each batch with
    its reports and DONE.  A worker takes the next batch when it has finished one.  When this
    process is stopped (`Interrupted`), or a worker says a signal stopped it, every worker is
    sent the signal and waited for (killed after `STOP_GRACE_S`), and `Interrupted` is raised."""
    todo = [list(batch) for batch in reversed(batches)]  # emptied as reports come: the caller's stay whole
    workers = [_Worker(setup) for _ in range(min(jobs, len(batches)))]
    busy: dict[_Worker, list[str]] = {}
    try:
        for worker in workers:
            busy[worker] = todo.pop()
            worker.send(busy[worker])
        while busy:
            for conn in wait([w.results for w in busy]):
                worker = next(w for w in busy if w.results is conn)
                try:
                    kind, table, data = worker.results.recv()
                except (EOFError, OSError):  # it died: what it had not reported fails
                    check_stop()
                    for table in busy.pop(worker):
                        yield table, None
                    worker.close()
                    continue
                if kind == STOPPED:
                    raise Interrupted(data)
                if kind == PROGRESS:
                    if on_progress is not None:
                        on_progress(table, *data)
                    continue
                if kind == REPORT:
                    busy[worker].remove(table)
                    yield table, data
                    continue
                for table in busy[worker]:  # a batch it finished without a report for them
                    yield table, None
                if todo:
                    busy[worker] = todo.pop()
                    worker.send(busy[worker])
                else:
                    del busy[worker]
                    worker.send(None)
        for batch in reversed(todo):  # no worker was left to take them
            for table in batch:
                yield table, None
    except Interrupted as stop:
        _stop_workers(workers, stop.signo)
        raise
    finally:
        # also when the signal interrupted the caller between two tables (the generator closed)
        signo = stop_requested()
        if signo is not None:
            _stop_workers(workers, signo)
        for worker in workers:
            worker.close()


def _stop_workers(workers: list["_Worker"], signo: int) -> None:
    """Each worker gets the signal (a Ctrl-C in a terminal has sent it to them already) and
    `STOP_GRACE_S` to end its run and close its sandboxes; one still there then is killed."""
    for worker in workers:
        worker.signal(signo)
    deadline = time.monotonic() + STOP_GRACE_S
    for worker in workers:
        try:
            worker.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.process.kill()
            worker.process.wait()


class _Worker:
    """One worker process and its two pipes (batches in, reports out)."""

    def __init__(self, setup: tuple) -> None:
        import cataloger_dagster

        batches_out, batches_in = os.pipe()
        reports_out, reports_in = os.pipe()
        package_root = os.path.dirname(os.path.dirname(os.path.abspath(cataloger_dagster.__file__)))
        env = python_environment(package_root)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cataloger_dagster.cli.worker", str(batches_out), str(reports_in)],
            pass_fds=(batches_out, reports_in),
            env=env,
            stdin=subprocess.DEVNULL,
        )
        os.close(batches_out)
        os.close(reports_in)
        self.batches = Connection(batches_in, readable=False)
        self.results = Connection(reports_out, writable=False)
        self.send(setup)

    def send(self, message) -> None:
        try:
            self.batches.send(message)
        except OSError:
            pass  # it has ended: its reports say so (EOF)

    def signal(self, signo: int) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signo)

    def close(self) -> None:
        if self.process.poll() is None:
            self.send(None)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for conn in (self.batches, self.results):
            if not conn.closed:
                conn.close()


def serve_batches(batches: Connection, reports: Connection, catalog: Callable[[list[str]], list]) -> None:
    """A worker's loop: each batch received is cataloged and answered (REPORT each, DONE).  It
    ends on None, or when the runner is gone (its end of the pipe closed: killed, say).  A
    signal that stops it (`Interrupted`) is told to the runner (STOPPED) and raised."""
    try:
        while (names := batches.recv()) is not None:
            for report in catalog(names):
                reports.send((REPORT, report.table, report.model_dump_json()))
            reports.send((DONE, None, None))
    except (EOFError, BrokenPipeError):
        return
    except Interrupted as stop:
        try:
            reports.send((STOPPED, None, stop.signo))
        except OSError:
            pass
        raise


def progress_sender(reports: Connection) -> Callable[[str, str, float], None]:
    """A worker's `on_progress`: each step of each table, told to the runner as it is done."""

    def send(table: str, step: str, seconds: float) -> None:
        try:
            reports.send((PROGRESS, table, (step, seconds)))
        except OSError:
            pass  # the runner is gone: the loop ends at the next batch

    return send
