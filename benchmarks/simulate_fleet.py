"""A night of catalog runs on Kubernetes, simulated: 50,000 tables in 20 databases by default.

Discrete events (heapq, one seeded random stream): every table's run is queued at midnight;
the run coordinator dequeues them every `--dequeue-interval` seconds, first in first out,
skipping a run whose database's pool (`cataloger/<database>`, granularity run) is full, up
to `--max-runs` runs in flight; the daemon's `--launch-workers` threads launch the pods
(`--launch-seconds` each); a pod starts (`--pod-start` plus the measured import of the code
location) and runs its tables' stages with the measured seconds; the investigations hold a sandbox slot (`--sandbox-slots`); every
stage writes its share of the table's store requests to the store (`--store-rps`) and of its
Dagster events to the run storage (`--run-storage-eps`), both servers of a fixed rate that
the run waits on.  Once a database's tables are done, its index is built in one more run.

Its answers: the nightly wall time, the pods needed (peak and mean concurrent run pods), the
cost per table (pod vCPU-hours at `--vcpu-hour-usd`), and which resource saturates first:
the one whose utilisation over the night is highest (sources = the databases' pools, pods,
daemon, sandboxes, store, run storage), with the run-seconds spent waiting on each.

The per-table costs are MEASURED, never assumed: the first argument is a JSON file

    {"measured": "2026-11-23",                  # ISO date of the measurement
     "machine": "2 cores ...",                  # where
     "import_seconds": 12.3,                    # optional: importing the code location
                                                # (cataloger_dagster.definitions), paid by each
                                                # pod; --import-seconds gives it otherwise
     "sizes": [{"rows": 1000, "columns": 5,
                "seconds": {"run_start": f, "table_profile": f, "table_understanding": f,
                            "quality_issues": f, "investigations": f, "recent_summary": f,
                            "catalog_page": f, "index": f},   # index: its share per table
                "store_requests": 56,           # store reads, writes and lists per table
                "run_storage_events": 104,      # Dagster events written per table run
                "peak_mb": 313.0}, ...]}

(benchmarks/results/per_table_costs.json once the overhead benchmark writes it).  What is
ASSUMED is an option with its default printed in the report: the mix of sizes, the pod start,
the rates of the store and of the run storage, the price of a vCPU-hour.

usage: python benchmarks/simulate_fleet.py COSTS.json [--tables 50000 --databases 20 ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import math
import random
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

STAGES = ["table_profile", "table_understanding", "quality_issues", "investigations",
          "recent_summary", "catalog_page"]
SANDBOX_STAGE = "investigations"
RESOURCES = ["sources", "pods", "daemon", "sandboxes", "store", "run_storage"]


def load_costs(path: str | Path) -> dict:
    doc = json.loads(Path(path).read_text())
    sizes = doc.get("sizes") or []
    if not sizes:
        raise SystemExit(f"{path}: no 'sizes' measured; run the overhead benchmark first")
    for size in sizes:
        missing = [k for k in ["run_start", *STAGES, "index"] if k not in size.get("seconds", {})]
        if missing:
            raise SystemExit(f"{path}: size {size.get('rows')}x{size.get('columns')} lacks seconds for {missing}")
    return doc


# -- a minimal event loop: processes are generators yielding requests ---------------------------

class Loop:
    def __init__(self):
        self.now = 0.0
        self._heap: list = []
        self._seq = itertools.count()

    def at(self, when: float, fn, *args) -> None:
        heapq.heappush(self._heap, (when, next(self._seq), fn, args))

    def run(self) -> None:
        while self._heap:
            self.now, _, fn, args = heapq.heappop(self._heap)
            fn(*args)

    def start(self, process) -> None:
        self.step(process, None)

    def step(self, process, value) -> None:
        try:
            request = process.send(value)
        except StopIteration:
            return
        request(self, process)


def delay(seconds: float):
    return lambda loop, p: loop.at(loop.now + seconds, loop.step, p, None)


@dataclass
class Slots:
    """A capacity of identical slots, granted first come first served."""
    capacity: int
    used: int = 0
    waiting: deque = field(default_factory=deque)
    busy: float = 0.0           # slot-seconds held
    waited: float = 0.0         # run-seconds spent waiting for a slot
    full: float = 0.0           # seconds at capacity with someone waiting
    _since: float = 0.0

    def _account(self, now: float) -> None:
        self.busy += self.used * (now - self._since)
        if self.waiting and self.used >= self.capacity:
            self.full += now - self._since
        self._since = now

    def acquire(self):
        def request(loop, p):
            self._account(loop.now)
            if self.used < self.capacity:
                self.used += 1
                loop.at(loop.now, loop.step, p, None)
            else:
                self.waiting.append((loop.now, p))
        return request

    def release(self, loop: Loop) -> None:
        self._account(loop.now)
        if self.waiting:
            since, p = self.waiting.popleft()
            self.waited += loop.now - since
            loop.at(loop.now, loop.step, p, None)
        else:
            self.used -= 1


@dataclass
class Server:
    """A rate (requests a second) served in arrival order: the store, the run storage."""
    rate: float
    free_at: float = 0.0
    busy: float = 0.0
    waited: float = 0.0

    def serve(self, amount: float):
        def request(loop, p):
            start = max(loop.now, self.free_at)
            self.free_at = start + amount / self.rate
            self.busy += amount / self.rate
            self.waited += start - loop.now
            loop.at(self.free_at, loop.step, p, None)
        return request


# -- the fleet ---------------------------------------------------------------------------------

@dataclass
class Run:
    database: int
    tables: list            # size indexes
    index: bool = False     # the database's index run


class Fleet:
    def __init__(self, costs: dict, args: argparse.Namespace):
        self.costs, self.args = costs, args
        self.sizes = costs["sizes"]
        self.rng = random.Random(args.seed)
        self.loop = Loop()
        self.pools = [Slots(args.pool_cap) for _ in range(args.databases)]
        self.pods = Slots(args.max_runs)
        self.sandboxes = Slots(args.sandbox_slots)
        self.store = Server(args.store_rps)
        self.run_storage = Server(args.run_storage_eps)
        # dequeueNumWorkers threads launch pods side by side
        self.daemon = Server(args.launch_workers / args.launch_seconds) if args.launch_seconds > 0 else None
        # one FIFO per database; a run's number is its place in the coordinator's single queue
        self.queues: list[deque] = [deque() for _ in range(args.databases)]
        self.left = [0] * args.databases                 # tables not yet done, per database
        self.queue_wait = {"sources": 0.0, "pods": 0.0}  # run-seconds queued, by what blocked
        self._blocked = {"sources": 0, "pods": 0}
        self._saturated = {"sources": 0.0, "pods": 0.0}  # databases at their cap / pods all used
        self.saturated_seconds = {"sources": 0.0, "pods": 0.0}
        self._last_tick = 0.0
        self._tick_scheduled = False
        self.pod_seconds = 0.0
        self.concurrent = self.peak = self.finished_tables = 0
        self.end = 0.0

    def build(self) -> None:
        """The stated mix of sizes; the databases' shares of tables drawn once from the seed."""
        a = self.args
        mix = a.mix or [1.0 / len(self.sizes)] * len(self.sizes)
        if len(mix) != len(self.sizes):
            raise SystemExit(f"--mix has {len(mix)} shares for {len(self.sizes)} measured sizes")
        weights = [1.0 + a.skew * self.rng.random() for _ in range(a.databases)]
        self.per_db = [0] * a.databases
        for db in self.rng.choices(range(a.databases), weights, k=a.tables):
            self.per_db[db] += 1
        runs = []
        for db, count in enumerate(self.per_db):
            self.left[db] = count
            sizes = self.rng.choices(range(len(self.sizes)), mix, k=count)
            runs += [Run(db, sizes[i:i + a.batch]) for i in range(0, count, a.batch)]
        # the nightly schedule asks for every database at once: the queue interleaves them
        self.rng.shuffle(runs)
        for number, run in enumerate(runs):
            self.queues[run.database].append((number, run))

    def jitter(self, seconds: float) -> float:
        s = self.args.jitter
        return seconds * math.exp(self.rng.gauss(-s * s / 2, s)) if s > 0 else seconds

    def schedule_tick(self) -> None:
        if self._tick_scheduled:
            return
        self._tick_scheduled = True
        interval = self.args.dequeue_interval
        when = self.loop.now if interval <= 0 else (math.floor(self.loop.now / interval) + 1) * interval
        self.loop.at(when, self.tick)

    def tick(self) -> None:
        """The QueuedRunCoordinator: first in first out, skipping runs whose pool is full."""
        self._tick_scheduled = False
        now = self.loop.now
        for reason, count in self._blocked.items():
            self.queue_wait[reason] += count * (now - self._last_tick)
            self.saturated_seconds[reason] += self._saturated[reason] * (now - self._last_tick)
        self._last_tick = now
        heads = [(q[0][0], db) for db, q in enumerate(self.queues)
                 if q and self.pools[db].used < self.pools[db].capacity]
        heapq.heapify(heads)
        while heads and self.pods.used < self.pods.capacity:
            _, db = heapq.heappop(heads)
            _, run = self.queues[db].popleft()
            for slots in (self.pods, self.pools[db]):
                slots._account(now)
                slots.used += 1
            self.loop.start(self.execute(run))
            if self.queues[db] and self.pools[db].used < self.pools[db].capacity:
                heapq.heappush(heads, (self.queues[db][0][0], db))
        self._blocked = {"sources": 0, "pods": 0}
        self._saturated = {"sources": 0.0, "pods": 0.0}
        for db, q in enumerate(self.queues):
            if q:
                full = self.pools[db].used >= self.pools[db].capacity
                self._blocked["sources" if full else "pods"] += len(q)
                self._saturated["sources"] += full / len(self.queues)
        self._saturated["pods"] = float(self._blocked["pods"] > 0)
        if any(self._blocked.values()) and self.args.dequeue_interval > 0:
            self.schedule_tick()

    def execute(self, run: Run):
        a, loop = self.args, self.loop
        if self.daemon is not None:
            yield self.daemon.serve(1)
        self.concurrent += 1
        self.peak = max(self.peak, self.concurrent)
        pod_up = loop.now
        yield delay(a.pod_start + a.import_seconds)
        # the index run reads every table of its database: its measured share times their number
        scale = len(run.tables) if run.index else 1
        for n, size_ix in enumerate(run.tables[:1] if run.index else run.tables):
            size = self.sizes[size_ix]
            stages = ["index"] if run.index else STAGES
            if n == 0 or not a.batch_shares_run_start:
                yield delay(self.jitter(size["seconds"]["run_start"]))
            for stage in stages:
                seconds = size["seconds"][stage] * scale
                if stage in ("table_profile", "quality_issues"):
                    seconds *= a.source_slowdown
                if stage == SANDBOX_STAGE:
                    yield self.sandboxes.acquire()
                    yield delay(self.jitter(seconds))
                    self.sandboxes.release(loop)
                else:
                    yield delay(self.jitter(seconds))
                # the index is one more run's events; its store reads are counted in the tables'
                # measured requests (the measurement divides a whole database run's by its tables)
                yield self.run_storage.serve(size["run_storage_events"] / len(stages))
                if not run.index:
                    yield self.store.serve(size["store_requests"] / len(stages))
            if not run.index:
                self.finished_tables += 1
                self.left[run.database] -= 1
        self.concurrent -= 1
        self.pod_seconds += loop.now - pod_up
        self.end = max(self.end, loop.now)
        for slots in (self.pods, self.pools[run.database]):
            slots._account(loop.now)
            slots.used -= 1
        if not run.index and self.left[run.database] == 0:
            self.queues[run.database].appendleft((-1, Run(run.database, [0] * self.per_db[run.database], index=True)))
        self.schedule_tick()

    def simulate(self) -> dict:
        self.build()
        self.schedule_tick()
        self.loop.run()
        return self.report()

    def report(self) -> dict:
        a, wall = self.args, max(self.end, 1e-9)
        for slots in (self.pods, self.sandboxes, *self.pools):
            slots._account(wall)
        # a slot resource saturates when it is full with runs waiting on it; a rate when it is busy
        saturated = {
            **{k: v / wall for k, v in self.saturated_seconds.items()},
            "daemon": (self.daemon.busy / wall) if self.daemon else 0.0,
            "sandboxes": self.sandboxes.full / wall,
            "store": self.store.busy / wall,
            "run_storage": self.run_storage.busy / wall,
        }
        utilisation = {
            "sources": sum(p.busy for p in self.pools) / (wall * a.pool_cap * a.databases),
            "pods": self.pods.busy / (wall * a.max_runs),
            "daemon": (self.daemon.busy / wall) if self.daemon else 0.0,
            "sandboxes": self.sandboxes.busy / (wall * a.sandbox_slots),
            "store": self.store.busy / wall,
            "run_storage": self.run_storage.busy / wall,
        }
        waited = {
            **self.queue_wait,
            "daemon": self.daemon.waited if self.daemon else 0.0,
            "sandboxes": self.sandboxes.waited, "store": self.store.waited,
            "run_storage": self.run_storage.waited,
        }
        first = max(RESOURCES, key=lambda r: (round(saturated[r], 2), waited[r]))
        vcpu_hours = self.pod_seconds * a.pod_vcpu / 3600
        return {
            "tables": self.finished_tables, "databases": a.databases, "batch": a.batch,
            "wall_seconds": round(wall, 1), "wall_hours": round(wall / 3600, 2),
            "peak_pods": self.peak, "mean_pods": round(self.pod_seconds / wall, 1),
            "vcpu_hours": round(vcpu_hours, 1),
            "usd_per_table": vcpu_hours * a.vcpu_hour_usd / max(self.finished_tables, 1),
            "pod_memory_mb": max(s["peak_mb"] for s in self.sizes),
            "utilisation": {k: round(v, 3) for k, v in utilisation.items()},
            "saturated_fraction": {k: round(v, 3) for k, v in saturated.items()},
            "waited_run_hours": {k: round(v / 3600, 2) for k, v in waited.items()},
            "saturates_first": first,
        }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("costs", help="per-table costs JSON (the format above)")
    p.add_argument("--tables", type=int, default=50_000)
    p.add_argument("--databases", type=int, default=20)
    p.add_argument("--mix", type=lambda s: [float(x) for x in s.split(",")], default=None,
                   help="share of tables of each measured size, in the file's order (default: equal)")
    p.add_argument("--skew", type=float, default=1.0,
                   help="databases' sizes vary: weight 1 + skew * uniform(0, 1) (0: equal)")
    p.add_argument("--pool-cap", type=int, default=4, help="runs at once per database (its pool)")
    p.add_argument("--max-runs", type=int, default=200, help="run pods at once (maxConcurrentRuns)")
    p.add_argument("--batch", type=int, default=1, help="tables per run")
    p.add_argument("--batch-shares-run-start", action="store_true",
                   help="a batch pays the in-run start once, not per table")
    p.add_argument("--dequeue-interval", type=float, default=5.0,
                   help="the coordinator's dequeue interval, seconds (Dagster's default: 5)")
    p.add_argument("--launch-seconds", type=float, default=0.25,
                   help="the daemon's time to launch one run pod (a Kubernetes Job), seconds")
    p.add_argument("--launch-workers", type=int, default=4,
                   help="the coordinator's dequeue threads (dequeueNumWorkers in deploy/helm/values.yaml)")
    p.add_argument("--pod-start", type=float, default=5.0,
                   help="scheduling and container start of a run pod before Python, seconds")
    p.add_argument("--import-seconds", type=float, default=None,
                   help="importing the code location in each pod (default: the costs file's import_seconds, else 0)")
    p.add_argument("--sandbox-slots", type=int, default=None,
                   help="sandboxes at once (default: --max-runs, one in each run pod)")
    p.add_argument("--store-rps", type=float, default=3500.0,
                   help="store requests a second (S3: 3,500 writes/s per prefix)")
    p.add_argument("--run-storage-eps", type=float, default=1500.0,
                   help="Dagster events the run storage (PostgreSQL) writes a second")
    p.add_argument("--source-slowdown", type=float, default=1.0,
                   help="profile and detectors' seconds times this (a remote warehouse vs local DuckDB)")
    p.add_argument("--pod-vcpu", type=float, default=1.0, help="vCPU requested by a run pod")
    p.add_argument("--vcpu-hour-usd", type=float, default=0.04, help="price of a vCPU-hour")
    p.add_argument("--jitter", type=float, default=0.2, help="log-normal sigma on each stage's seconds")
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--json", help="also write the result here")
    return p


def simulate(costs: dict, args: argparse.Namespace) -> dict:
    if args.sandbox_slots is None:
        args.sandbox_slots = args.max_runs
    if args.import_seconds is None:
        args.import_seconds = float(costs.get("import_seconds", 0.0))
    return Fleet(costs, args).simulate()


def main(argv: list[str] | None = None) -> dict:
    args = parser().parse_args(argv)
    costs = load_costs(args.costs)
    result = simulate(costs, args)
    result["assumptions"] = {k: v for k, v in vars(args).items() if k not in ("costs", "json")}
    result["measured"] = {"date": costs.get("measured"), "machine": costs.get("machine")}
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
