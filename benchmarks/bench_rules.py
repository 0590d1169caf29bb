"""What the search for rules between columns costs on a wide table, beside DuckDB's SUMMARIZE.

    .venv/bin/python benchmarks/bench_rules.py [--columns 200] [--rows 1000000] [--runs 3]

Builds a DuckDB table of `--columns` numeric columns (seeded): a few that follow rules (a
total of two parts, a line amount of a quantity and a price, a share in percent, a low and a
high, a length in two units), each broken on a few rows, and many unrelated measures of
similar means and spreads, the columns whose coincidences the profile must rule out before the
one query.  Each run, in this process: the profile (compute_profile, as table_profile does),
then the rule search (core/issues/detectors/rules.rule_violations): choosing the candidates
from the profile, then the whole search (the one query, and the examples of each broken rule); and
DuckDB's SUMMARIZE of the same table.  Prints one JSON line per run and the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import ibis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cataloger_dagster.core.issues import rule_candidates  # noqa: E402
from cataloger_dagster.core.issues.detectors import rules  # noqa: E402
from cataloger_dagster.core.issues.detectors.context import Context  # noqa: E402
from cataloger_dagster.core.profile.fingerprint import compute_fingerprint  # noqa: E402
from cataloger_dagster.core.profile.profiling import compute_profile  # noqa: E402


def build(path: Path, columns: int, rows: int) -> None:
    """The wide table: planted rules first, then unrelated measures up to `columns`."""
    planted = [
        "round(10 + random() * 290, 2) AS subtotal",
        "CASE WHEN random() < 0.3 THEN 0 ELSE 4.99 END AS shipping",
        "1 + (i % 9) AS qty",
        "round(1 + random() * 49, 2) AS unit_price",
        "1 + (i % 200) AS part",
        "1 + (i % 200) + (i * 7 % 300) AS whole",
        "round(random() * 20, 1) AS temp_min",
        "round(random() * 12, 1) AS temp_spread",
        "round(10 + random() * 70, 1) AS length_in",
    ]
    unrelated = [f"round({10 + (k % 40) * 5} + random() * {5 + k % 30}, 2) AS m{k:03d}"
                 for k in range(max(0, columns - 14))]
    with duckdb.connect(str(path)) as con:
        con.execute(f"CREATE TABLE base AS SELECT {', '.join(planted + unrelated)} FROM range({rows}) t(i)")
        extra = ", ".join(f"m{k:03d}" for k in range(max(0, columns - 14)))
        con.execute(f"""CREATE TABLE wide AS SELECT subtotal, shipping,
                round(subtotal + shipping + CASE WHEN random() < 0.0001 THEN 10 ELSE 0 END, 2) AS total,
                qty, unit_price, round(qty * unit_price, 2) AS line_amount, part, whole,
                round(100.0 * part / whole, 1) AS share_pct, temp_min,
                CASE WHEN random() < 0.0001 THEN temp_min - 1 ELSE round(temp_min + temp_spread, 1) END AS temp_max,
                length_in, round(length_in * 2.54, 2) AS length_cm, temp_spread{', ' + extra if extra else ''}
            FROM base""")
        con.execute("DROP TABLE base")


def one_run(path: Path) -> dict:
    con = ibis.duckdb.connect(str(path), read_only=True)
    t = con.table("wide")
    start = time.perf_counter()
    profile = compute_profile(t, database="bench", table_name="wide", fingerprint=compute_fingerprint(t))
    profiled = time.perf_counter()
    schema = dict(t.schema().items())
    cands = rule_candidates.candidates(profile, schema)
    chosen = time.perf_counter()
    ctx = Context(t, profile, {}, datetime.now(timezone.utc))
    ctx.whole = t
    found = rules.rule_violations(ctx)
    searched = time.perf_counter()
    raw = duckdb.connect(str(path), read_only=True)
    summarize_start = time.perf_counter()
    raw.execute("SUMMARIZE wide").fetchall()
    summarized = time.perf_counter()
    raw.close()
    con.disconnect()
    return {"columns": len(schema), "rows": profile.row_count, "candidates": len(cands),
            "candidates_by_kind": {k: sum(c.kind == k for c in cands) for k in ("sum", "product", "multiple", "order")},
            "rules": len(rules.discovered(ctx)), "findings": [i.details["rule"] for i in found],
            "profile_s": round(profiled - start, 3), "choose_candidates_s": round(chosen - profiled, 3),
            "rule_search_s": round(searched - chosen, 3), "summarize_s": round(summarized - summarize_start, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--columns", type=int, default=200)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "wide.duckdb"
        build(path, args.columns, args.rows)
        runs = []
        for _ in range(args.runs):
            runs.append(one_run(path))
            print(json.dumps(runs[-1]))
        keys = ("profile_s", "choose_candidates_s", "rule_search_s", "summarize_s")
        print(json.dumps({"median": {k: statistics.median(r[k] for r in runs) for k in keys}}))


if __name__ == "__main__":
    main()
