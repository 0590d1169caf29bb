"""What the investigations' checks cost: a whole cold catalog run of the demo database, this
checkout against an older one, interleaved in one benchmark run.

    .venv/bin/python benchmarks/bench_investigation_cost.py --baseline <older checkout or git revision>
        [--pairs 3] [--scale 1.0] [--sandbox local] [--no-write]

A revision (`make bench` passes 5efc460, the code before investigations could dismiss a finding) is exported with
`git archive` into a temporary folder.

Each run is a fresh process started in its checkout's folder with that checkout on PYTHONPATH
(the child prints which package it imported, and the run fails if it is not that checkout's),
into a fresh store, heuristic agent, exploration rate 0.  The pairs alternate which checkout goes
first (ABBA), so a load that drifts during the benchmark weighs on both; on a shared machine only
the ratio of each pair is worth reading.  Reports the whole run (every table plus the index),
and the Dagster step times of `investigations` and `quality_issues` summed over the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
STEPS = ("table_profile", "quality_issues", "investigations")


def child(db: str, store: str, sandbox: str) -> None:
    """One cold catalog run in this process; prints its figures as JSON on the last line."""
    import dagster as dg

    import cataloger_dagster
    from cataloger_dagster.cli.runner import catalog_database

    started = time.monotonic()
    with dg.DagsterInstance.ephemeral() as instance:
        report = catalog_database(database=f"duckdb://{db}", store=store, sandbox=sandbox,
                                  exploration_rate=0.0, instance=instance)
        seconds = time.monotonic() - started
        failed = [(t.table, t.error) for t in report.tables if t.status == "failed"]
        if failed:
            raise SystemExit(f"catalog run failed: {failed}")
        steps = dict.fromkeys(STEPS, 0.0)
        for t in report.tables:
            for s in instance.get_run_step_stats(t.dagster_run_id):
                if s.step_key in steps and s.end_time and s.start_time:
                    steps[s.step_key] += s.end_time - s.start_time
    verdicts: dict[str, int] = {}
    for t in report.tables:
        data = json.loads((Path(store) / "demo" / t.table / t.run / "investigations.json").read_text())
        for i in data["investigations"]:
            verdicts[i["verdict"]] = verdicts.get(i["verdict"], 0) + 1
    print(json.dumps({"package": cataloger_dagster.__file__, "seconds": seconds, "steps": steps,
                      "tables": {t.table: t.seconds for t in report.tables},
                      "issues": sum(len(t.issues) + len(getattr(t, "dismissed", [])) for t in report.tables),
                      "verdicts": verdicts}))


def run_once(checkout: Path, db: Path, store: Path, sandbox: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    env.pop("DAGSTER_HOME", None)
    out = subprocess.run([sys.executable, str(HERE), "--child", str(db), str(store), sandbox],
                         cwd=checkout, env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"run in {checkout} failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not Path(result["package"]).resolve().is_relative_to(checkout.resolve()):
        raise SystemExit(f"run in {checkout} imported {result['package']}, not its own package")
    return result


def baseline_checkout(baseline: str, work: Path) -> Path:
    """The baseline's folder: the path given, or a git revision of this repository exported to `work`."""
    if Path(baseline).is_dir():
        return Path(baseline).resolve()
    target = work / f"baseline-{baseline.replace('/', '_')}"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", baseline], capture_output=True)
    if archive.returncode:
        raise SystemExit(f"--baseline {baseline!r} is neither a folder nor a git revision of {ROOT}: "
                         f"{archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def git_head(checkout: Path, given: str | None = None) -> str:
    if given and not Path(given).is_dir():
        return given
    out = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "?"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", required=True, help="an older checkout of this repository, or a git revision")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--sandbox", default="local")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))
    from report import machine, today, write_section

    from cataloger_dagster.demo import create_demo_database

    work = Path(tempfile.mkdtemp(prefix="cataloger-bench-cost-"))
    db = work / "demo.duckdb"
    create_demo_database(db, scale=args.scale)
    load = [os.getloadavg()[0]]
    runs: dict[str, list[dict]] = {"new": [], "old": []}
    checkouts = {"new": ROOT, "old": baseline_checkout(args.baseline, work)}
    for i in range(args.pairs):
        for side in (("new", "old") if i % 2 == 0 else ("old", "new")):
            r = run_once(checkouts[side], db, work / f"store-{side}-{i}", args.sandbox)
            runs[side].append(r)
            print(f"pair {i + 1} {side}: {r['seconds']:.1f} s, investigations {r['steps']['investigations']:.1f} s, "
                  f"quality_issues {r['steps']['quality_issues']:.1f} s", file=sys.stderr)
        load.append(os.getloadavg()[0])

    def med(side, key):
        return statistics.median(r["seconds"] if key == "run" else r["steps"][key] for r in runs[side])

    rows = []
    for key, label in (("run", "whole run (all tables + index)"), ("investigations", "investigations step"),
                       ("quality_issues", "quality_issues step"), ("table_profile", "table_profile step")):
        ratios = [(n["seconds"] / o["seconds"]) if key == "run" else
                  (n["steps"][key] / o["steps"][key] if o["steps"][key] else float("nan"))
                  for n, o in zip(runs["new"], runs["old"])]
        rows.append(f"| {label} | {med('old', key):.2f} | {med('new', key):.2f} | "
                    f"{statistics.median(ratios):.2f} | {' / '.join(f'{x:.2f}' for x in ratios)} |")
    run_ratios = [n["seconds"] / o["seconds"] for n, o in zip(runs["new"], runs["old"])]
    worst = max(run_ratios)
    verdicts = {side: runs[side][0]["verdicts"] for side in runs}
    body = f"""Run: `.venv/bin/python benchmarks/bench_investigation_cost.py --baseline {git_head(checkouts['old'], args.baseline)} --pairs {args.pairs} --scale {args.scale} --sandbox {args.sandbox}` (this checkout: {git_head(ROOT)})
Machine: {machine()}. Date: {today()}. Load average (1 min) before and after each pair: {', '.join(f'{x:.1f}' for x in load)}.

A whole cold catalog run of the demo database at scale {args.scale} (every table, then the index), heuristic
agent, {args.sandbox} sandbox, exploration rate 0, a fresh store each time. Each run is a fresh process
started in its checkout with that checkout's package on PYTHONPATH (checked). {args.pairs} pairs, alternating
which checkout goes first; medians of each side, and the ratio new/old of each pair (the machine is shared
with other work: the absolute seconds drift, only the ratios of runs made next to each other count).
Step times are Dagster's (start to end of the step), summed over the tables.
Target: the whole run at most 1.5x the baseline's.

| measure | baseline s (median) | this checkout s (median) | new/old (median of pairs) | per pair |
|---|---:|---:|---:|---:|
""" + "\n".join(rows) + f"""

Verdicts, baseline: {verdicts['old']}; this checkout: {verdicts['new']}.

Reading: the whole run takes {statistics.median(run_ratios):.2f}x the baseline's time (worst pair {worst:.2f}x):
target {'met' if worst <= 1.5 else 'met by the median only' if statistics.median(run_ratios) <= 1.5 else 'not met'}.
The investigations step's own ratio is the checks' cost (the hypotheses' independent evidence: group
fences, copies, shared attributes); quality_issues carries the smart-fix follow-ups; the table_profile
ratio (its code is the same in both) shows how much the machine's drift and the sandbox warming up beside it move a ratio.
"""
    print(body)
    if not args.no_write:
        write_section("Investigation cost: this checkout against a baseline", body)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:5])
    else:
        main()
