"""What a scheduled guardrails run costs beside a catalog run, on the demo database.

    .venv/bin/python benchmarks/bench_guardrails.py [--runs 3] [--scale 1.0]

Each run, in a fresh temporary folder: builds the demo database, catalogs every table as
`cataloger run` does (heuristic agent, local sandbox), then runs the `guardrails` job of the
definitions over every table, as its schedule would, in the same process (Dagster's
`execute_in_process` on a test instance).  The yardstick is the catalog run of the same run; the
ratio is what the issue's budget bounds (at most 10%).  Also reported: the suites alone (every
table's statements on one connection, without Dagster), and the guardrails per table.

Writes the "Guardrails" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402


def one_run(scale: float) -> dict:
    import dagster as dg

    from cataloger_dagster.assets.guardrails import JOB, latest_suite
    from cataloger_dagster.cli.runner import catalog_database
    from cataloger_dagster.core.guardrails.run import ibis_query, run_suite
    from cataloger_dagster.definitions import build_definitions
    from cataloger_dagster.demo.generator import create_demo_database
    from cataloger_dagster.resources.database.resource import DatabaseResource
    from cataloger_dagster.resources.store import LocalStore
    from cataloger_dagster.settings.model import load_settings

    with tempfile.TemporaryDirectory() as tmp:
        db, store = Path(tmp) / "demo.duckdb", Path(tmp) / "store"
        create_demo_database(db, scale=scale)
        started = time.perf_counter()
        report_ = catalog_database(database=f"duckdb://{db}", store=str(store), agent="heuristic", sandbox="local")
        catalog_s = time.perf_counter() - started
        assert not report_.failed, report_.failed
        os.environ["CATALOGER_DATABASE"] = f"duckdb://{db}"
        defs = build_definitions(load_settings(store=str(store)))
        with dg.instance_for_test() as instance:
            started = time.perf_counter()
            result = defs.resolve_job_def(JOB).execute_in_process(instance=instance)
            job_s = time.perf_counter() - started
        evaluations = result.get_asset_check_evaluations()
        database = DatabaseResource(url=f"duckdb://{db}")
        local = LocalStore(root=str(store))
        tables = local.list_tables(database.database_name)
        suites = [latest_suite(local, database.database_name, t) for t in tables]
        started = time.perf_counter()
        query = ibis_query(database.connect())
        ran = [run_suite(s, query) for s in suites if s is not None]
        suites_s = time.perf_counter() - started
        database.close()
    return {
        "tables": len(tables),
        "guardrails": sum(len(r) for r in ran),
        "failing": sum(1 for r in ran for g in r if not g.passed),
        "checks_passed": sum(1 for e in evaluations if e.passed),
        "catalog_s": catalog_s,
        "job_s": job_s,
        "suites_s": suites_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    runs = [one_run(args.scale) for _ in range(args.runs)]
    for r in runs:
        print(r)
    job = statistics.median(r["job_s"] / r["catalog_s"] for r in runs)
    alone = statistics.median(r["suites_s"] / r["catalog_s"] for r in runs)
    first = runs[0]
    body = (
        f"{report.machine()}, {report.today()}; the demo database at scale {args.scale} "
        f"({first['tables']} tables, {first['guardrails']} guardrails), {args.runs} runs, each in a fresh folder.\n\n"
        "| run | seconds (median) | ratio to the catalog run (median of the per-run ratios) |\n|---|---:|---:|\n"
        f"| `cataloger run`, every table (the yardstick) | {statistics.median(r['catalog_s'] for r in runs):.1f} | 1 |\n"
        f"| the `guardrails` job, every table (Dagster, in process) | {statistics.median(r['job_s'] for r in runs):.2f} | {job:.3f} |\n"
        f"| the suites alone (one connection, no Dagster) | {statistics.median(r['suites_s'] for r in runs):.2f} | {alone:.3f} |\n\n"
        f"On the data the suites were built from, {first['failing']} guardrails failed and "
        f"{first['checks_passed']} of {first['tables']} tables' checks passed. The budget is 10% of a catalog run."
    )
    print(body)
    if not args.no_write:
        report.write_section("Guardrails", body)


if __name__ == "__main__":
    main()
