"""Benchmark table_profile against DuckDB's SUMMARIZE (and ydata-profiling).

    .venv/bin/python benchmarks/bench_profile.py [--rows 1000000 10000000] [--runs 3]

Builds a 20-column table per size in a DuckDB file (inside DuckDB, in SQL),
then times each tool in a fresh subprocess per run, so that each peak RSS
(ru_maxrss of that child) belongs to one measurement only.  Reports medians,
the profile/SUMMARIZE ratio and writes the "table_profile" section of
BENCHMARKS.md.  ydata-profiling (minimal=True) runs on the smallest table
with the interpreter in `.venv-bench` (or --ydata-python), since its pins
clash with the package's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402
from report import machine  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TABLE = "wide"

GENERATE = """
CREATE OR REPLACE TABLE wide AS
SELECT
  i AS id,
  (hash(i) % 1000)::INTEGER AS int_small,
  (hash(i * 7) % 100000000)::BIGINT AS int_big,
  CASE WHEN i % 50 = 0 THEN NULL ELSE (hash(i * 3) % 100000) / 100.0 END::DOUBLE AS amount,
  (hash(i * 5) % 1000000) / 1000.0 AS dbl_u,
  CASE WHEN i % 101 = 0 THEN NULL ELSE sqrt(i) END AS dbl_null,
  ((hash(i * 11) % 10000) / 100.0)::DECIMAL(12, 2) AS price,
  'user' || (hash(i * 13) % 500000) || '@example.com' AS email,
  ['red', 'green', 'blue', 'Red ', 'yellow', 'NA'][(i % 6) + 1] AS color,
  'cust-' || (i % 250000) AS cust_code,
  md5(i::VARCHAR) AS hashtext,
  CASE WHEN i % 10 = 0 THEN NULL ELSE (hash(i * 17) % 1000)::VARCHAR END AS num_text,
  DATE '2020-01-01' + (hash(i * 19) % 1500)::INTEGER AS d1,
  DATE '2015-01-01' + (i % 3000)::INTEGER AS d2,
  TIMESTAMP '2020-01-01' + to_seconds((hash(i * 23) % 100000000)::BIGINT) AS ts1,
  TIMESTAMPTZ '2021-01-01 00:00:00+00' + to_seconds(i::BIGINT) AS ts2,
  (i % 3 = 0) AS flag1,
  CASE WHEN i % 7 = 0 THEN NULL ELSE hash(i) % 2 = 0 END AS flag2,
  (hash(i * 29) % 5)::SMALLINT AS tiny,
  'Some free text number ' || (i % 1000) AS free_text
FROM range({rows}) r(i)
"""


def ensure_table(path: Path, rows: int) -> None:
    import duckdb

    if path.exists():
        with duckdb.connect(str(path), read_only=True) as con:
            try:
                if con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0] == rows:
                    return
            except duckdb.Error:
                pass
        path.unlink()
    started = time.perf_counter()
    with duckdb.connect(str(path)) as con:
        con.execute(GENERATE.format(rows=rows))
    print(f"  generated {rows:,} rows in {time.perf_counter() - started:.1f}s", flush=True)


# --------------------------------------------------------------------------
# one measurement (runs in a child process)
# --------------------------------------------------------------------------


def measure(tool: str, path: str) -> dict:
    import resource

    extra: dict = {}
    if tool == "summarize":
        import duckdb

        con = duckdb.connect(path, read_only=True)
        started = time.perf_counter()
        con.execute(f"SUMMARIZE {TABLE}").fetchall()
        seconds = time.perf_counter() - started
    elif tool == "profile":
        import ibis

        sys.path.insert(0, str(ROOT))
        from cataloger_dagster.core.models import Fingerprint
        from cataloger_dagster.core.profile.profiling import compute_profile

        con = ibis.duckdb.connect(path, read_only=True)
        table = con.table(TABLE)
        rows = table.count().execute()
        started = time.perf_counter()
        prof = compute_profile(table, database="bench", table_name=TABLE,
                               fingerprint=Fingerprint(schema_hash="-", row_count=rows, value="-"))
        seconds = time.perf_counter() - started
        extra = {"queries": prof.queries, "approximate": prof.approximate,
                 "sampled": any("seeded random sample" in n for c in prof.columns for n in c.notes)}
    elif tool == "ydata":
        import duckdb
        from ydata_profiling import ProfileReport

        started = time.perf_counter()
        df = duckdb.connect(path, read_only=True).execute(f"SELECT * FROM {TABLE}").df()
        loaded = time.perf_counter()
        ProfileReport(df, minimal=True, progress_bar=False).to_json()
        seconds = time.perf_counter() - started
        extra = {"load_s": loaded - started}
    else:
        raise SystemExit(f"unknown tool {tool!r}")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": seconds, "peak_mib": peak_kib / 1024, **extra}


def run_child(tool: str, path: Path, python: str) -> dict:
    out = subprocess.run([python, __file__, "_measure", tool, str(path)],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"{tool} on {path.name} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------


def write_section(md: Path, body: str) -> None:
    report.write_section("table_profile", body, md)


def reading(verdicts: list[tuple[int, float, float]]) -> str:
    rows, ratio, peak = max(verdicts)
    ok = ratio <= 1.5 and peak < 1.5 * 1024
    return (f"Reading: at {rows:,} rows compute_profile took {ratio:.2f}x SUMMARIZE's time "
            f"(median over median) with a highest peak of {peak / 1024:.2f} GiB; the target "
            f"(<= 1.5x, < 1.5 GiB) is {'met' if ok else 'NOT met'}. SUMMARIZE computes no top "
            "values, histograms or text patterns; the profile does, in 3 queries.")


def fmt(results: list[dict], key: str, spec: str) -> str:
    return format(statistics.median(r[key] for r in results), spec)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "_measure":
        print(json.dumps(measure(sys.argv[2], sys.argv[3])))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/cataloger-bench"))
    ap.add_argument("--ydata-python", default=str(ROOT / ".venv-bench/bin/python"))
    ap.add_argument("--no-ydata", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)

    rows_out, notes, verdicts = [], [], []
    for rows in args.rows:
        path = args.workdir / f"wide_{rows}.duckdb"
        print(f"{rows:,} rows:", flush=True)
        ensure_table(path, rows)
        res: dict[str, list[dict]] = {"summarize": [], "profile": []}
        for run in range(args.runs):     # interleaved so noise hits both alike
            for tool in res:
                r = run_child(tool, path, sys.executable)
                res[tool].append(r)
                print(f"  run {run + 1} {tool}: {r['seconds']:.2f}s, peak {r['peak_mib']:.0f} MiB",
                      flush=True)
        s = statistics.median(r["seconds"] for r in res["summarize"])
        p = statistics.median(r["seconds"] for r in res["profile"])
        # Each run's profile/SUMMARIZE pair ran back to back, under about the
        # same load from other processes: their ratios are the steadier figure.
        pairs = [a["seconds"] / b["seconds"] for a, b in zip(res["profile"], res["summarize"])]
        verdicts.append((rows, p / s, max(r["peak_mib"] for r in res["profile"])))
        runs_of = lambda tool: " / ".join(f"{r['seconds']:.1f}" for r in res[tool])  # noqa: E731
        rows_out.append((rows, "DuckDB SUMMARIZE", fmt(res["summarize"], "seconds", ".2f"),
                         "1.00", fmt(res["summarize"], "peak_mib", ".0f"),
                         f"runs {runs_of('summarize')} s"))
        rows_out.append((rows, "compute_profile", fmt(res["profile"], "seconds", ".2f"),
                         f"{p / s:.2f}", fmt(res["profile"], "peak_mib", ".0f"),
                         f"runs {runs_of('profile')} s; per-run ratios "
                         + " / ".join(f"{r:.2f}" for r in pairs)
                         + f"; max peak {max(r['peak_mib'] for r in res['profile']):.0f} MiB; "
                         f"{res['profile'][0]['queries']} queries"
                         + (", approximate" if res["profile"][0]["approximate"] else ", exact")
                         + (", sampled" if res["profile"][0].get("sampled") else "")))
        if rows == min(args.rows) and not args.no_ydata:
            if Path(args.ydata_python).exists():
                y = run_child("ydata", path, args.ydata_python)
                print(f"  ydata-profiling: {y['seconds']:.2f}s, peak {y['peak_mib']:.0f} MiB",
                      flush=True)
                rows_out.append((rows, "ydata-profiling (minimal=True)", f"{y['seconds']:.2f}",
                                 f"{y['seconds'] / s:.2f}", f"{y['peak_mib']:.0f}",
                                 f"1 run; {y['load_s']:.1f}s of it loading into pandas"))
            else:
                notes.append(f"ydata-profiling skipped: {args.ydata_python} not found")

    table = ["| rows | tool | median s | × SUMMARIZE | peak RSS MiB | notes |",
             "|---:|---|---:|---:|---:|---|"]
    table += [f"| {r:,} | {t} | {sec} | {ratio} | {mem} | {n} |"
              for r, t, sec, ratio, mem, n in rows_out]
    body = "\n".join([
        f"Run {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()}.",
        "",
        f"`benchmarks/bench_profile.py --runs {args.runs}`: {args.runs} runs "
        "per tool and size (median), each in a fresh process; peak RSS is that process's "
        "high-water mark (ru_maxrss), interpreter and imports included. Table: 20 columns "
        "(4 integer, 3 double, 1 decimal, 6 text, 2 date, 2 timestamp, 2 boolean) with NULLs.",
        "",
        *table,
        *([""] + notes if notes else []),
        "",
        reading(verdicts),
    ])
    write_section(args.out, body)
    print(body)


if __name__ == "__main__":
    main()
