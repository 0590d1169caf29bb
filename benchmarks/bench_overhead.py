"""Where a small table's seconds go in `cataloger run`, this checkout against an older one, in one benchmark.

    .venv/bin/python benchmarks/bench_overhead.py [--baseline 62dea9f] [--sizes 100,1000]
        [--sample 100] [--batch 20] [--jobs 1] [--baseline-sample 100] [--no-write]

Builds one DuckDB file of max(--sizes) tables of one shape (5 columns: an id, a text label, an
amount, a date and a category with NULLs; 20,000 to 119,000 rows, as the tables of the per-table
overhead measured in BENCHMARKS.md).  Each catalog run is a fresh process doing what `cataloger run` does
(``catalog_database``: the baseline one Dagster run per table, this checkout ``--batch`` tables per
run and ``--jobs`` runs at once; then the index), heuristic agent, local sandbox,
exploration rate 0, into a fresh store and a fresh persistent Dagster instance (DAGSTER_HOME: its
runs are the ones the UI shows), started with its checkout's package on PYTHONPATH (checked).

The runs alternate: the baseline on the first N tables, this checkout on the same N, for each
size N; at the largest size the baseline catalogs only its first ``--baseline-sample`` tables (the
per-table cost of a sample is the same measure, and the benchmark takes half the time).

Per table, from Dagster's run and event storage: its share of its run's start (from the run's
creation to its first step, plus the last step to the run's end) and of each step, plus the index
run divided by the tables; the store's requests (reads, writes, listings, claims)
and the events in the run storage; the peak memory of the whole process tree (RSS and PSS sums), sampled.
Writes the "Per-table overhead" section of BENCHMARKS.md and benchmarks/results/per_table_costs.json
(the fleet simulation reads the per-stage costs of two table sizes from it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402
from bench_investigation_cost import baseline_checkout, git_head  # noqa: E402

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
RESULTS = HERE.parent / "results" / "per_table_costs.json"
STEPS = ("table_profile", "table_understanding", "quality_issues", "investigations", "recent_summary",
         "catalog_page")
STAGES = ("run_start", *STEPS, "index")
MIN_ROWS, ROW_STEP, ROW_SPAN = 20_000, 1_000, 100_000
# the two table sizes of per_table_costs.json: the tables of each band, by rows
BANDS = {"small": (MIN_ROWS, 45_000), "large": (95_000, MIN_ROWS + ROW_SPAN)}


def table_rows(i: int) -> int:
    """Rows of table i: the sizes cycle through 20,000..119,000 so every sample holds each size."""
    return MIN_ROWS + (i * 37 % 100) * ROW_STEP


def table_name(i: int) -> str:
    return f"t{i:04d}"


def build_database(path: Path, tables: int) -> None:
    import duckdb

    with duckdb.connect(str(path)) as con:
        for i in range(tables):
            # the same shape each time; the name is ours (t0000...), the row count a number
            con.execute(
                f"CREATE TABLE {table_name(i)} AS SELECT i AS id, 'name ' || (i % 997) AS name, "
                "(hash(i) % 10000) / 100.0 AS amount, DATE '2020-01-01' + (i % 1500)::INTEGER AS day, "
                "['a', 'b', 'c', 'd', NULL][(i % 5 + 1)::BIGINT] AS category "
                f"FROM range({table_rows(i)}) r(i)")


# ------------------------------------------------------------------ the child: one catalog run
def child(db: str, store: str, count: int, first: int = 0, database_tables: int = 0, batch: int = 0,
          jobs: int = 1) -> None:
    """Catalog tables first..first+count-1 in this process; prints its figures as JSON on the last
    line.  `database_tables`: the tables of the database the store holds (the index lists them all).
    `batch`, `jobs`: tables per Dagster run and runs at once, for a checkout that has them (0: its default)."""
    import inspect

    import dagster as dg

    import cataloger_dagster
    from cataloger_dagster.cli import runner
    from cataloger_dagster.resources.store.local import LocalStore

    requests = {"n": 0}
    for method in ("_read", "_write_new", "_replace", "_list", "_claim", "_release"):
        def counted(self, *args, _orig=getattr(LocalStore, method), **kwargs):
            requests["n"] += 1
            return _orig(self, *args, **kwargs)
        setattr(LocalStore, method, counted)

    names = [table_name(i) for i in range(first, first + count)]
    options = {}
    if batch and "batch" in inspect.signature(runner.catalog_database).parameters:
        options = {"batch": batch, "jobs": jobs}
    started = time.time()
    with dg.DagsterInstance.get() as instance:
        if database_tables:   # the tables cataloged before this run: partitions, as they would be
            instance.add_dynamic_partitions("tables", [table_name(i) for i in range(database_tables)])
        result = runner.catalog_database(database=f"duckdb://{db}", store=store, tables=names,
                                         exploration_rate=0.0, instance=instance, **options)
        ended = time.time()
        failed = [(t.table, t.error) for t in result.failed]
        if failed or result.index is None:
            raise SystemExit(f"catalog run failed: {failed[:3]} index={result.index}")
        tables, index_started = _stages(instance, {t.table: t.dagster_run_id for t in result.tables})
    # the requests of this process: all of them, unless worker processes made the runs
    per_table_requests = requests["n"] / count if options.get("jobs", 1) == 1 else None
    for figures in tables.values():
        figures["store_requests"] = per_table_requests
    print(json.dumps({"package": cataloger_dagster.__file__, "seconds": ended - started,
                      "index_seconds": ended - index_started, "tables": tables, "runs": len(set(
                          t.dagster_run_id for t in result.tables)), **options}))


def _stages(instance, run_of: dict[str, str]) -> tuple[dict, float]:
    """Each table's share of its run's stages, from Dagster's run and event storage: a run over n
    tables gives each 1/n of its start (creation to first step, and last step to its end) and of
    each step.  With when the index run began (the end of the last table run)."""
    tables_of: dict[str, list[str]] = {}
    for table, run_id in run_of.items():
        tables_of.setdefault(run_id, []).append(table)
    figures, last_end = {}, 0.0
    for run_id, tables in tables_of.items():
        record = instance.get_run_record_by_id(run_id)
        starts: dict[str, float] = {}
        seconds = dict.fromkeys(STEPS, 0.0)
        first = last = None
        records = instance.all_logs(run_id)
        for entry in records:
            event = entry.dagster_event
            if event is None:
                continue
            if event.event_type_value == "STEP_START":
                starts[entry.step_key] = entry.timestamp
                first = entry.timestamp if first is None else first
            elif event.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE") and entry.step_key in starts:
                if entry.step_key in seconds:
                    seconds[entry.step_key] += entry.timestamp - starts[entry.step_key]
                last = entry.timestamp
        created, ended = record.create_timestamp.timestamp(), record.end_time or last
        last_end = max(last_end, ended)
        seconds["run_start"] = (first - created) + (ended - last)
        n = len(tables)
        for table in tables:
            figures[table] = {"wall": (ended - created) / n, "seconds": {k: v / n for k, v in seconds.items()},
                              "run_storage_events": len(records) / n}
    return figures, last_end


# ------------------------------------------------------------------ the parent
class TreePeak:
    """The peak memory of a process and all its descendants, sampled every 0.2 s: the sum of their
    RSS (pages shared between processes counted in each, as the baseline's figures were) and of
    their PSS (each shared page split between its sharers: what the tree really holds), and the
    processes at the PSS peak."""

    def __init__(self, pid: int) -> None:
        import psutil

        self._root = psutil.Process(pid)
        self.peak_mb = 0.0
        self.peak_pss_mb = 0.0
        self.at_peak: list[tuple[str, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        import psutil

        while not self._stop.wait(0.2):
            try:
                procs = [self._root, *self._root.children(recursive=True)]
            except psutil.NoSuchProcess:
                return
            rss, pss, parts = 0, 0, []
            for proc in procs:
                try:
                    memory = proc.memory_full_info()
                    rss, pss = rss + memory.rss, pss + memory.pss
                    parts.append((_kind(proc.cmdline()), memory.pss / 2**20))
                except psutil.Error:
                    pass
            self.peak_mb = max(self.peak_mb, rss / 2**20)
            if pss / 2**20 > self.peak_pss_mb:
                self.peak_pss_mb, self.at_peak = pss / 2**20, parts

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak_mb

    def make_up(self) -> dict[str, float]:
        """MB of PSS at the peak, by kind of process."""
        kinds: dict[str, float] = {}
        for kind, mb in self.at_peak:
            kinds[kind] = round(kinds.get(kind, 0.0) + mb, 1)
        return dict(sorted(kinds.items(), key=lambda kv: -kv[1]))


def _kind(cmdline: list[str]) -> str:
    text = " ".join(cmdline)
    if "cataloger_dagster.cli.worker" in text:
        return "worker processes"
    if "--child" in text:
        return "the run's process"
    if "_fd = int(sys.argv[1])" in text:
        return "sandboxes"
    return "other"


def run_once(checkout: Path, db: Path, work: Path, count: int, label: str, *, first: int = 0,
             prefilled_from: Path | None = None, batch: int = 0, jobs: int = 1) -> dict:
    """One catalog run of `count` tables from table `first`; with `prefilled_from` (the store of an
    earlier run of the first tables), the store first holds tables 0..first-1, copied from it."""
    store, home = work / f"store-{label}", work / f"home-{label}"
    home.mkdir()
    if prefilled_from is not None:
        prefill(prefilled_from, store, first)
    env = {**os.environ, "PYTHONPATH": str(checkout), "DAGSTER_HOME": str(home)}
    load = os.getloadavg()[0]
    proc = subprocess.Popen([sys.executable, str(HERE), "--child", str(db), str(store), str(count), str(first),
                             str(first + count if first else 0), str(batch), str(jobs)],
                            cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = TreePeak(proc.pid)
    out, err = proc.communicate()
    peak_mb = peak.stop()
    peak_pss_mb, make_up = peak.peak_pss_mb, peak.make_up()
    if proc.returncode:
        raise SystemExit(f"run {label} in {checkout} failed:\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    if not Path(result["package"]).resolve().is_relative_to(checkout.resolve()):
        raise SystemExit(f"run in {checkout} imported {result['package']}, not its own package")
    result.update(peak_mb=peak_mb, peak_pss_mb=peak_pss_mb, peak_make_up=make_up, load_before=load,
                  load_after=os.getloadavg()[0], count=count,
                  database_tables=first + count)
    print(f"  {label}: {count} tables in {result['seconds']:.1f} s ({result['seconds'] / count:.3f} s a table), "
          f"peak {peak_mb:.0f} MB RSS, {peak_pss_mb:.0f} MB PSS {make_up}, load {load:.1f} -> "
          f"{result['load_after']:.1f}", file=sys.stderr, flush=True)
    return result


def prefill(source: Path, store: Path, tables: int) -> None:
    """`store` holding tables 0..tables-1 as cataloged: each a copy of a table of `source` (a store
    of an earlier run of the first tables, same shapes), renamed, and its facts in the database's
    log when the checkout writes one: what a run over a database of that many tables finds."""
    import shutil

    database = next(p.name for p in source.iterdir() if p.is_dir())
    cataloged = sorted(p.name for p in (source / database).iterdir() if p.name.startswith("t") and p.name[1:].isdigit())
    (store / database).mkdir(parents=True)
    facts = []
    for i in range(tables):
        name, original = table_name(i), cataloged[i % len(cataloged)]
        shutil.copytree(source / database / original, store / database / name)
        for run_file in (store / database / name).glob("*/run.json"):
            info = json.loads(run_file.read_text())
            run_file.write_text(json.dumps({**info, "table": name}))
        facts.append((name, sorted((store / database / name).glob("*/keys.json"))))
    log = source / database / "table_facts"
    if log.is_dir():   # this checkout's store: the copies' facts too
        sys.path.insert(0, str(ROOT))
        from cataloger_dagster.core.models import TableProfile
        from cataloger_dagster.resources.store import LocalStore
        from cataloger_dagster.resources.store.database_log import table_facts

        local = LocalStore(root=str(store))
        for name, keys_files in facts:
            keys = TableProfile.model_validate_json(keys_files[-1].read_text()).model_copy(update={"table": name})
            local.append_table_facts(database, table_facts(keys, keys_files[-1].parent.name, keys))
        local.read_table_facts(database)   # folded, as the runs before would have left it


def per_table(run: dict, rows: tuple[int, int] | None = None) -> dict:
    """Mean seconds of each stage per table (the index shared out), store requests and events."""
    tables = [t for name, t in run["tables"].items()
              if rows is None or rows[0] <= table_rows(int(name[1:])) < rows[1]]
    n = len(tables)
    seconds = {s: statistics.fmean(t["seconds"][s] for t in tables) for s in ("run_start", *STEPS)}
    seconds["index"] = run["index_seconds"] / run.get("database_tables", run["count"])   # it covers them all
    return {"tables": n, "seconds": seconds,
            "store_requests": _mean_or_none(t.get("store_requests") for t in tables),
            "run_storage_events": statistics.fmean(t["run_storage_events"] for t in tables),
            "whole": run["seconds"] / run["count"]}


def _mean_or_none(values) -> float | None:
    """The mean, or None when a value is unknown (requests made in worker processes are not counted)."""
    values = list(values)
    return None if any(v is None for v in values) else statistics.fmean(values)


def _count(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}"


def write_results(new_runs: dict[int, dict], machine: str) -> None:
    largest = new_runs[max(new_runs)]
    sizes = []
    for low, high in BANDS.values():
        costs = per_table(largest, (low, high))
        rows = [table_rows(int(n[1:])) for n in largest["tables"] if low <= table_rows(int(n[1:])) < high]
        sizes.append({"rows": round(statistics.fmean(rows)), "columns": 5,
                      "seconds": {k: round(v, 4) for k, v in costs["seconds"].items()},
                      "store_requests": None if costs["store_requests"] is None else round(costs["store_requests"]),
                      "run_storage_events": round(costs["run_storage_events"]),
                      "peak_mb": round(largest["peak_mb"], 1)})
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "measured": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine,
        "tables_in_run": largest["count"],
        "note": "seconds per table by stage of one `cataloger run` (tables in batches, one Dagster run per "
                "batch: each stage of a run shared out over its tables); run_start holds the run's start and "
                "its end; index is the index run shared out over the tables; peak_mb is the whole process "
                "tree's over the run",
        "sizes": sizes}, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=7, help=argparse.SUPPRESS)
    parser.add_argument("--baseline", default="62dea9f", help="older checkout folder or git revision")
    parser.add_argument("--sizes", default="100,1000", help="tables per run, comma-separated")
    parser.add_argument("--sample", type=int, default=0,
                        help="at the sizes after the first, catalog only the last SAMPLE tables, the "
                        "others copied into the store from the first size's run (0: every table)")
    parser.add_argument("--baseline-sample", type=int, default=100,
                        help="tables the baseline catalogs at the largest size (without --sample)")
    parser.add_argument("--batch", type=int, default=20, help="this checkout's tables per Dagster run")
    parser.add_argument("--jobs", type=int, default=2, help="this checkout's Dagster runs at once (worker processes)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md and results")
    parser.add_argument("--raw", type=Path, help="a JSON file each run's figures are added to as it ends "
                        "(a long benchmark that is stopped keeps the runs it made)")
    args = parser.parse_args()
    if args.child:
        db, store, count, first, database_tables, batch, jobs = args.child
        return child(db, store, int(count), int(first), int(database_tables), int(batch), int(jobs))
    sizes = sorted(int(s) for s in args.sizes.split(","))
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        work = Path(tmp)
        old = baseline_checkout(args.baseline, work)
        db = work / "tables.duckdb"
        build_database(db, max(sizes))
        runs: dict[str, dict[int, dict]] = {"old": {}, "new": {}}
        new_options = {"batch": args.batch, "jobs": args.jobs}
        for size in sizes:
            print(f"{size} tables:", file=sys.stderr)
            if args.sample and size != sizes[0]:
                # the last tables of a run over `size` tables: the store holds the others already
                for side, checkout in (("old", old), ("new", ROOT)):
                    runs[side][size] = run_once(checkout, db, work, args.sample, f"{side}-{size}", first=size - args.sample,
                                                prefilled_from=work / f"store-{side}-{sizes[0]}",
                                                **(new_options if side == "new" else {}))
                    _save(args.raw, runs)
                continue
            old_count = min(size, args.baseline_sample) if size == max(sizes) and len(sizes) > 1 else size
            runs["old"][size] = run_once(old, db, work, old_count, f"old-{size}")
            _save(args.raw, runs)
            runs["new"][size] = run_once(ROOT, db, work, size, f"new-{size}", **new_options)
            _save(args.raw, runs)
    text = render(runs, sizes, args.baseline, git_head(ROOT), args.baseline_sample, args.sample,
                  args.batch, args.jobs)
    print(text)
    if not args.no_write:
        write_results(runs["new"], report.machine())
        report.write_section("Per-table overhead", text)


def _peak(run: dict) -> str:
    pss = run.get("peak_pss_mb")
    return f"{run['peak_mb']:,.0f} / {pss:,.0f}" if pss is not None else f"{run['peak_mb']:,.0f} / n/a"


def _save(raw: Path | None, runs: dict) -> None:
    if raw is not None:
        raw.write_text(json.dumps(runs))


def render(runs: dict, sizes: list[int], baseline: str, head: str, sample: int, last_tables: int = 0,
           batch: int = 0, jobs: int = 1) -> str:
    rows = []
    for size in sizes:
        old, new = per_table(runs["old"][size]), per_table(runs["new"][size])
        rows.append(f"| {size:,} | {runs['old'][size]['count']:,} / {runs['new'][size]['count']:,} | {old['whole']:.3f} | {new['whole']:.3f} | "
                    f"{new['whole'] / old['whole']:.2f} | {_peak(runs['old'][size])} | {_peak(runs['new'][size])} | "
                    f"{runs['old'][size]['load_before']:.1f}, "
                    f"{runs['new'][size]['load_before']:.1f}, {runs['new'][size]['load_after']:.1f} |")
    stage_rows = []
    for size in sizes:
        old, new = per_table(runs["old"][size]), per_table(runs["new"][size])
        for stage in STAGES:
            stage_rows.append(f"| {size:,} | {stage} | {old['seconds'][stage]:.3f} | {new['seconds'][stage]:.3f} |")
        stage_rows.append(f"| {size:,} | store requests / table | {_count(old['store_requests'])} | "
                          f"{_count(new['store_requests'])} |")
        stage_rows.append(f"| {size:,} | run storage events / table | {old['run_storage_events']:.0f} | "
                          f"{new['run_storage_events']:.0f} |")
    first, last = per_table(runs["new"][sizes[0]]), per_table(runs["new"][sizes[-1]])
    flat = last["whole"] / first["whole"]
    how = (f"--sample {last_tables}: at {', '.join(f'{n:,}' for n in sizes[1:])} tables, each side catalogs the last {last_tables:,} "
           f"tables of the database in one run, its store holding the others already (copies, renamed, of "
           f"the tables its {sizes[0]:,}-table run cataloged, and their entries in the database's logs): "
           "what the last tables of a whole run meet, where the store is fullest. The index run covers "
           "every table and is shared out over all of them."
           if last_tables else f"--baseline-sample {sample}: at the largest size the baseline catalogs a sample "
           "(its first tables, every row count among them).")
    old_requests = [_count(per_table(runs['old'][size])['store_requests']) for size in (sizes[0], sizes[-1])]
    if jobs > 1:
        requests = (f"Store requests a table: the baseline's {old_requests[0]} and {old_requests[1]}, those of its "
                    "table runs; this checkout's are made in its worker processes, and not counted.")
    else:
        requests = (f"Store requests a table: {_count(first['store_requests'])} and {_count(last['store_requests'])}, "
                    f"against the baseline's {old_requests[0]} and {old_requests[1]}: this checkout's are all its "
                    "process made, the index run's included, shared out over the tables it cataloged (the index "
                    "reads every table of the database); the baseline's, those of its table runs.")
    runs_made = ", ".join(f"{runs['new'][size].get('runs', '?'):,} at {size:,}" for size in sizes)
    return f"""Run: `.venv/bin/python benchmarks/bench_overhead.py --baseline {baseline} --sizes {','.join(map(str, sizes))} {how.split(':')[0]} --batch {batch} --jobs {jobs}` (this checkout: {head})
Machine: {report.machine()}. Date: {report.today()}.

Tables of one shape (5 columns, 20,000 to 119,000 rows), cataloged by `catalog_database` (what
`cataloger run` does, then the index) in a fresh process with its checkout on PYTHONPATH, a fresh
store and a fresh persistent Dagster instance, heuristic agent, local sandbox (bubblewrap).
Baseline {baseline}: one Dagster run per table, one at a time.  This checkout: `--batch {batch}
--jobs {jobs}`, up to {batch} tables per Dagster run (a range of partitions), {f"{jobs} runs at once in worker processes" if jobs > 1 else "one run at a time in its process"}
(Dagster runs made: {runs_made}).  Baseline and this checkout alternate, on the same tables.
{how}
The machine is shared with other work: the load average (1 min) is given before each run and
after the last; only ratios of runs made next to each other count.

| tables in the database | tables cataloged (baseline / this) | baseline s / table | this checkout s / table | ratio | baseline peak MB, RSS / PSS | this checkout's | load |
|---:|---:|---:|---:|---:|---|---|---|
{chr(10).join(rows)}

Peak memory: the sums over the process tree of RSS (pages shared by several processes, such as
the libraries every Python maps and a sandbox's zygote and its forked worker, counted in each) and
of PSS (each shared page split among its sharers: what the tree holds). This checkout's peak (PSS),
by kind of process: {"; ".join(f"{size:,} tables: " + ", ".join(f"{kind} {mb:.0f}" for kind, mb in runs['new'][size].get('peak_make_up', {}).items()) for size in sizes)}.

Flatness: this checkout's seconds a table at {sizes[-1]:,} tables / at {sizes[0]:,}: {flat:.2f}. {requests}

Seconds a table by stage (means; run_start holds the run's start and its end, index is the index
run shared out over the tables):

| tables | stage | baseline | this checkout |
|---:|---|---:|---:|
{chr(10).join(stage_rows)}
"""


if __name__ == "__main__":
    main()
