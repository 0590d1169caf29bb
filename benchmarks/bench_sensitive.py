"""What classifying personal data adds to a whole-database run: the demo database cataloged with
and without the classifier, in one benchmark.

    .venv/bin/python benchmarks/bench_sensitive.py [--runs 2] [--scale 1.0]

Builds the demo database, then catalogs all its tables as `cataloger run` does (``catalog_database``:
heuristic agent, local sandbox, exploration rate 0, a fresh store each time) in one process, the
runs alternating: without the classifier (ProfileOptions(classify=False), patched into the
table_profile asset), then with it.  Besides the wall time of each run it times the classifier's
own calls (the classify() of core/sensitive), so that the share is not lost in the runs' noise,
and the sandbox time of the investigations of the classes it found (each class is a hypothesis
the investigations stage tests, core/sensitive/hypotheses.py: the time of their cells, read from
the stored investigations.json of each table; a fresh store runs each investigation in a cell of
its own, the first one of a table also defining the check and importing its rules).
Prints the medians and the ratio; the budget is 10% of the run.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import machine  # noqa: E402

BUDGET = 0.10


def hypotheses_seconds(store: Path) -> tuple[float, int]:
    """The sandbox seconds of the investigations of classes of personal data stored in `store`, and
    how many there were."""
    import json

    from cataloger_dagster.core.sensitive.hypotheses import TYPE

    seconds, n = 0.0, 0
    for path in store.rglob("investigations.json"):
        for inv in json.loads(path.read_text())["investigations"]:
            if f"_{TYPE}_" in inv.get("issue_id", ""):
                seconds += (inv.get("execution_time_ms") or 0.0) / 1000
                n += 1
    return seconds, n


def one_run(db: Path, work: Path, classify: bool, spent: list[float], checked: list[tuple[float, int]]) -> float:
    import dagster as dg

    from cataloger_dagster.assets import table_profile as asset
    from cataloger_dagster.cli import runner
    from cataloger_dagster.core.profile import profiling

    asset.compute_profile = functools.partial(profiling.compute_profile, options=profiling.ProfileOptions(classify=classify))  # type: ignore[attr-defined]
    store = work / f"store-{len(list(work.iterdir()))}"
    started = time.perf_counter()
    with dg.DagsterInstance.ephemeral() as instance:
        result = runner.catalog_database(database=f"duckdb://{db}", store=str(store), exploration_rate=0.0,
                                         instance=instance, jobs=1)
    seconds = time.perf_counter() - started
    if result.failed or result.index is None:
        raise SystemExit(f"catalog run failed: {[(t.table, t.error) for t in result.failed][:3]}")
    if classify:
        checked.append(hypotheses_seconds(store))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2, help="runs of each kind (they alternate)")
    parser.add_argument("--scale", type=float, default=1.0, help="the demo database's scale")
    args = parser.parse_args()

    from cataloger_dagster.core.profile import profiling
    from cataloger_dagster.core.sensitive import classifier
    from cataloger_dagster.demo.generator import create_demo_database

    spent: list[float] = []
    checked: list[tuple[float, int]] = []  # each classified run's hypotheses: (sandbox seconds, how many)
    original = classifier.classify

    def timed(*a, **k):
        t = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            spent.append(time.perf_counter() - t)

    profiling.sensitive.classify = timed  # the module the profile calls it through

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = work / "demo.duckdb"
        create_demo_database(db, scale=args.scale)
        one_run(db, work, True, spent, checked)  # warm-up: imports, the sandbox's first start
        spent.clear()
        checked.clear()
        without, with_ = [], []
        for _ in range(args.runs):
            without.append(one_run(db, work, False, spent, checked))
            before = sum(spent)
            with_.append(one_run(db, work, True, spent, checked))
            classified = sum(spent) - before
        per_run_classify = sum(spent) / args.runs
    a, b = statistics.median(without), statistics.median(with_)
    print(f"machine: {machine()}")
    print(f"demo database (scale {args.scale}), {args.runs} runs of each, alternating")
    print(f"whole run without classification: {a:.2f} s (median)")
    print(f"whole run with classification:    {b:.2f} s (median); ratio {b / a:.3f}")
    print(f"the classifier's own time: {per_run_classify:.3f} s a run = {per_run_classify / b:.1%} of the run "
          f"(budget {BUDGET:.0%}); last run {classified:.3f} s")
    investigated = statistics.median(s for s, _ in checked)
    print(f"the investigations of its classes: {checked[-1][1]} hypotheses, {investigated:.3f} s of sandbox cells a run "
          f"(median) = {investigated / b:.1%} of the run; with the classifier {(per_run_classify + investigated) / b:.1%}")
    if per_run_classify / b > BUDGET:
        raise SystemExit("over budget")


if __name__ == "__main__":
    main()
