"""The feedback loop: a cold catalog run against a warm one, and cross-table transfer.

    .venv/bin/python benchmarks/bench_feedback_loop.py [--scale 1.0] [--sandbox local] [--no-write]

Builds the demo database plus `orders_archive` (a copy of `orders`, so a table
with no history has a similar table to learn from), then:

1. cold: every demo table cataloged into an empty store (no earlier script);
2. warm: the same again, each table starting from its best earlier script;
3. transfer: `orders_archive` cataloged after `orders`, starting from its script,
   against `orders_archive` explored from scratch in a separate store.

Reports per table: sandbox cells, seconds inside sandbox cells, the whole
Dagster run's seconds, and whether the verdicts were identical.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import dagster as dg
import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import machine, today, write_section  # noqa: E402

from cataloger_dagster.demo import create_demo_database  # noqa: E402
from cataloger_dagster.runner import catalog_database  # noqa: E402


def verdicts(store: Path, table: str, run: str) -> dict:
    data = json.loads((store / "demo" / table / run / "investigations.json").read_text())
    return {i["issue_id"]: (i["verdict"], i["evidence"]) for i in data["investigations"]}


def metrics(store: Path, table: str, run: str) -> dict:
    return json.loads((store / "demo" / table / run / "catalog_script.metrics.json").read_text())


def catalog(db: Path, store: Path, instance, tables, sandbox, **kw):
    report = catalog_database(database=f"duckdb://{db}", store=str(store), tables=tables,
                              sandbox=sandbox, exploration_rate=0.0, instance=instance, **kw)
    failed = [(t.table, t.error) for t in report.tables if t.status != "ok"]
    if failed:
        raise SystemExit(f"catalog run failed: {failed}")
    return {t.table: t for t in report.tables}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--sandbox", default="local")
    ap.add_argument("--repeat", type=int, default=3, help="cold/warm pairs, each in a fresh store")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cataloger-bench-loop-"))
    db = work / "demo.duckdb"
    create_demo_database(db, scale=args.scale)
    with duckdb.connect(str(db)) as con:
        tables = sorted(r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall())
        con.execute("CREATE TABLE orders_archive AS SELECT * FROM orders")

    # each repetition: a fresh store, a cold run, then a warm run; the median pair is reported
    pairs = []
    for i in range(args.repeat):
        store_i = work / f"store-{i}"
        with dg.DagsterInstance.ephemeral() as instance:
            cold_i = catalog(db, store_i, instance, tables, args.sandbox)
            warm_i = catalog(db, store_i, instance, tables, args.sandbox)
            transfer_i = catalog(db, store_i, instance, ["orders_archive"], args.sandbox)["orders_archive"]
        ratio_i = (sum(metrics(store_i, t, warm_i[t].run)["seconds"] for t in tables)
                   / sum(metrics(store_i, t, cold_i[t].run)["seconds"] for t in tables))
        pairs.append((ratio_i, store_i, cold_i, warm_i, transfer_i))
    ratios = sorted(p[0] for p in pairs)
    _, store, cold, warm, transfer = sorted(pairs, key=lambda p: p[0])[len(pairs) // 2]
    with dg.DagsterInstance.ephemeral() as instance:
        alone = catalog(db, work / "store-alone", instance, ["orders_archive"], args.sandbox)["orders_archive"]

    rows, totals = [], {"cold": [0, 0.0, 0.0], "warm": [0, 0.0, 0.0]}
    all_same = True
    for table in tables:
        c, w = cold[table], warm[table]
        mc, mw = metrics(store, table, c.run), metrics(store, table, w.run)
        same = verdicts(store, table, c.run) == verdicts(store, table, w.run)
        all_same &= same
        rows.append(
            f"| {table} | {len(c.issues)} | {mc['cells']} | {mw['cells']} | {mc['seconds']:.2f} | "
            f"{mw['seconds']:.2f} | {mw['seconds'] / mc['seconds']:.2f} | {c.seconds:.1f} | {w.seconds:.1f} | "
            f"{'yes' if same else 'NO'} |"
        )
        for name, m, r in (("cold", mc, c), ("warm", mw, w)):
            totals[name][0] += m["cells"]
            totals[name][1] += m["seconds"]
            totals[name][2] += r.seconds
    tc, tw = totals["cold"], totals["warm"]
    rows.append(f"| **total** | | {tc[0]} | {tw[0]} | {tc[1]:.2f} | {tw[1]:.2f} | {tw[1] / tc[1]:.2f} | "
                f"{tc[2]:.1f} | {tw[2]:.1f} | {'yes' if all_same else 'NO'} |")

    first_cell = {name: sum(metrics(store, t, r[t].run)["cell_seconds"][0] for t in tables)
                  for name, r in (("cold", cold), ("warm", warm))}
    max_warm_cells = max(metrics(store, t, warm[t].run)["cells"] for t in tables)
    ratio = tw[1] / tc[1]
    saved = tc[1] - first_cell["cold"]  # what a cold run spends after its set-up cell
    reading = (
        f"Reading: warm runs use at most {max_warm_cells} cell(s) per table (target 3) "
        f"{'with' if all_same else 'WITHOUT'} identical verdicts and evidence. Time inside the sandbox is "
        f"{ratio:.0%} of the cold run's (target at most 50%: {'met' if ratio <= 0.5 else 'not met'}). "
        f"The cold runs' first cells alone (import ibis, connect, count: no investigation yet) take "
        f"{first_cell['cold']:.2f} s of their {tc[1]:.2f} s; the warm run pays the same set-up inside its "
        f"single cell. So at most {saved:.2f} s ({saved / tc[1]:.0%}) of the cold sandbox time is exploration "
        "and per-issue round trips that a warm run can save, and at this table size the checks "
        "themselves are tens of milliseconds. The fixed cost of a fresh interpreter reaching its first "
        "ibis query dominates both; the sandbox's warm-up starts it while the snapshot is written, "
        "which is not enough to hide it. Wall time per table (run s) is where the warm run's saving "
        "would show on larger tables or with a language model, whose exploration turns are expensive."
    )
    mt = metrics(store, "orders_archive", transfer.run)
    ma = metrics(work / "store-alone", "orders_archive", alone.run)
    body = f"""Run: `.venv/bin/python benchmarks/bench_feedback_loop.py --scale {args.scale} --sandbox {args.sandbox}`
Machine: {machine()}. Date: {today()}. Heuristic agent, {args.sandbox} sandbox, exploration rate 0.

Warm/cold sandbox-time ratios of the {args.repeat} repetitions: {", ".join(f"{r:.2f}" for r in ratios)};
the table shows the median one.

The demo database at scale {args.scale}, cataloged twice into one store: the cold run has no earlier
script; in the warm run every table starts from its best earlier script. "Sandbox s" is the time inside
sandbox cells (what the agent's code costs); "run s" is the table's whole Dagster run (profile,
detectors, snapshot, sandbox start, pages).

| table | issues | cold cells | warm cells | cold sandbox s | warm sandbox s | warm/cold | cold run s | warm run s | same verdicts and evidence |
|---|---|---|---|---|---|---|---|---|---|
""" + "\n".join(rows) + f"""

Cross-table transfer: `orders_archive` (a copy of `orders`, no history of its own) started from
`{mt.get('based_on_table')}`'s script: **{mt['cells']} cells, {mt['seconds']:.2f} s in the sandbox**, against
{ma['cells']} cells and {ma['seconds']:.2f} s when explored from scratch; pass rate {mt['pass_rate']:.2f}
against {ma['pass_rate']:.2f}.

{reading}
"""
    print(body)
    if not args.no_write:
        write_section("Feedback loop: cold and warm runs", body)


if __name__ == "__main__":
    main()
