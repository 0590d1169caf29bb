"""History findings for 100 tables with 60 runs each, on the local store and on S3 (moto over HTTP).

    .venv/bin/python benchmarks/bench_history.py [--tables 100] [--runs 60] [--columns 12] [--no-write]

Writes ``--runs`` daily profile.json files per table (tests/support/histories.py: a weekly load
pattern, a dozen columns) into each store, then times, over every table one after the other:

- yardstick: list the table's runs and read its 60 profile.json (what the findings would read
  with no digest);
- cold: `history_findings` for run 61 with no history.json yet (it reads the 60 profiles and
  writes the digest);
- warm: `history_findings` for run 62, as every later run does (the digest, the review log,
  the digest written back).

Target: warm <= 2 s for all the tables, on each store.  Writes the "History findings" section
of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import report  # noqa: E402
from histories import Day, profile_of, run_timestamp, weekly  # noqa: E402
from s3_support import moto_s3_server  # noqa: E402

from cataloger_dagster.core.history.anomalies import history_findings  # noqa: E402
from cataloger_dagster.core.layout import PROFILE, table_prefix  # noqa: E402
from cataloger_dagster.resources.store import LocalStore, S3Store  # noqa: E402

SECTION = "History findings"
TARGET_S = 2.0


def table_days(n: int, runs: int, columns: int) -> list[Day]:
    extra = tuple(f"c{i}" for i in range(max(columns - 4, 0)))
    days = weekly(runs // 7 + 3, weekday_rows=1000 + 10 * n, weekend_rows=100 + n)[:runs + 3]
    for day in days:
        day.extra_columns = extra
    return days


def populate(store, tables: int, runs: int, columns: int) -> dict[str, list[Day]]:
    out = {}
    for n in range(tables):
        name = f"t{n:03d}"
        days = table_days(n, runs, columns)
        prefix = table_prefix("bench", name)
        for i, day in enumerate(days[:runs]):
            store.write_json(prefix, run_timestamp(i), PROFILE, profile_of(day, name, "bench"))
        out[name] = days
    return out


def yardstick(store, tables: dict[str, list[Day]]) -> float:
    start = time.perf_counter()
    for name in tables:
        prefix = table_prefix("bench", name)
        for ts in store.list_runs(prefix):
            store.read_json(prefix, ts, PROFILE)
    return time.perf_counter() - start


def findings_pass(store, tables: dict[str, list[Day]], run: int, workers: int = 1) -> tuple[float, int]:
    """Seconds for the findings of run ``run`` of every table, ``workers`` tables at a time."""
    profiles = {name: profile_of(days[run], name, "bench") for name, days in tables.items()}
    for name, profile in profiles.items():
        # as in a catalog run: table_profile wrote this run's profile before quality_issues reads the history
        store.write_json(table_prefix("bench", name), run_timestamp(run), PROFILE, profile)

    # the asset reads the review log once for the findings and the review memory, and lists the
    # table's runs once for the step (TableRun.earlier_runs: the previous issues read it too): not
    # the findings' cost
    reviews = {name: store.read_reviews(table_prefix("bench", name)) for name in profiles}
    runs = {name: store.list_runs(table_prefix("bench", name)) for name in profiles}

    def one(item) -> int:
        name, profile = item
        return len(history_findings(store, table_prefix("bench", name), run_timestamp(run), profile,
                                    reviews[name], runs=runs[name]))

    start = time.perf_counter()
    if workers == 1:
        found = sum(map(one, profiles.items()))
    else:
        with ThreadPoolExecutor(workers) as pool:
            found = sum(pool.map(one, profiles.items()))
    return time.perf_counter() - start, found


def measure(store, label: str, args) -> dict:
    t0 = time.perf_counter()
    tables = populate(store, args.tables, args.runs, args.columns)
    written = time.perf_counter() - t0
    row = {"store": label, "written_s": written, "yardstick_s": yardstick(store, tables)}
    # the yardstick's requests: a listing and a read per run, per table
    row["ms_per_read"] = 1000 * row["yardstick_s"] / (args.tables * (args.runs + 1))
    row["cold_s"], _ = findings_pass(store, tables, args.runs)
    row["warm_s"], row["findings"] = findings_pass(store, tables, args.runs + 1)
    row["warm_parallel_s"], _ = findings_pass(store, tables, args.runs + 2, args.workers)
    row["digest_kb"] = len(store.read_history(table_prefix("bench", next(iter(tables))))) / 1024
    print(f"{label}: populate {written:.1f} s, yardstick {row['yardstick_s']:.2f} s "
          f"({row['ms_per_read']:.1f} ms a read), cold {row['cold_s']:.2f} s, warm {row['warm_s']:.2f} s "
          f"({row['findings']} findings), warm with {args.workers} tables at a time {row['warm_parallel_s']:.2f} s",
          flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", type=int, default=100)
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--columns", type=int, default=12)
    ap.add_argument("--workers", type=int, default=8,
                    help="tables at a time in the last pass, as Dagster runs partitions side by side")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--out", type=Path, default=report.BENCHMARKS_MD)
    args = ap.parse_args()

    logging.getLogger("werkzeug").setLevel(logging.ERROR)      # moto's server logs every request
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rows.append(measure(LocalStore(root=tmp), "local folder", args))
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1")):
        os.environ[name] = value      # moto's: no real account is ever touched
    with moto_s3_server(own_process=True) as endpoint:
        from dagster_aws.s3 import S3Resource

        s3 = S3Resource(endpoint_url=endpoint, region_name="us-east-1")
        bucket = f"bench-{uuid.uuid4().hex[:12]}"
        s3.get_client().create_bucket(Bucket=bucket)
        rows.append(measure(S3Store(bucket=bucket, s3=s3), "S3 (moto server over HTTP)", args))

    over = [r for r in rows if r["warm_s"] > TARGET_S]
    lines = [
        f"Run {report.today()} on {report.machine()}, load average {os.getloadavg()[0]:.1f} at the end.  The "
        "moto server runs in a process of its own, as S3 is not in the client's process.",
        "",
        f"`benchmarks/bench_history.py`: {args.tables} tables x {args.runs} daily runs, {args.columns} columns "
        "each (a weekly load pattern, so nothing is found), the findings of the next run of every table.  The "
        "yardstick lists each table's runs and reads its profile.json files (what the findings would read "
        "without the digest); cold is the first run with history findings (it reads them all and writes "
        "`history.json`); warm is every later run, one table after the other as `cataloger run` does (per "
        "table: read `history.json` and write it back; the asset reads the review log and lists the table's runs "
        "once for the whole step, so neither is counted); the last "
        f"column is warm again with {args.workers} tables at a time, as Dagster runs partitions side by side.",
        "",
        "| store | yardstick: list + read the profiles | a read | cold | warm, one table at a time "
        f"(target <= 2 s) | warm, {args.workers} at a time |",
        "|---|---|---|---|---|---|",
        *(f"| {r['store']} | {r['yardstick_s']:.2f} s | {r['ms_per_read']:.1f} ms | {r['cold_s']:.2f} s | "
          f"**{r['warm_s']:.2f} s** | {r['warm_parallel_s']:.2f} s |" for r in rows),
        "",
        f"`history.json` holds {rows[0]['digest_kb']:.0f} KB a table (61 runs; histograms and top values of the "
        "latest 5 only).  Warm takes " + ", ".join(
            f"{r['warm_s'] / r['yardstick_s']:.2f} of the yardstick's time on the {r['store']}" for r in rows)
        + " (on a folder reading is cheap and the findings' computing dominates; on S3 the requests do).",
        "",
        ("Within the target on both stores." if not over else
         "Over the target one table at a time: " + "; ".join(
             f"{r['store']} by {r['warm_s'] - TARGET_S:.2f} s: {r['warm_s'] / args.tables * 1000:.0f} ms a table, "
             f"of which the findings themselves take about {rows[0]['warm_s'] / args.tables * 1000:.0f} ms (the "
             "local store's time) and the rest is its two requests to the server (read and write "
             "`history.json`), each several milliseconds on this moto server"
             for r in over) + "."),
    ]
    print("\n".join(lines))
    if not args.no_write:
        report.write_section(SECTION, "\n".join(lines), args.out)


if __name__ == "__main__":
    main()
