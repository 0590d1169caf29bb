"""Tokens and turns of the Anthropic agent: a cold and a warm catalog run of the demo database.

    .venv/bin/python benchmarks/bench_agent_tokens.py [--scale 0.05] [--no-write]

Runs `catalog_database(agent="anthropic")` twice against the local stand-in of
the Messages API (tests/support/anthropic_standin.py), reached through
ANTHROPIC_BASE_URL, and counts what went over the wire: the stand-in's usage
for every answered request (uncached input, cache reads, cache writes, output),
the requests, and the execute_python calls per table (tool_use blocks in each
table's last investigation request, the replay of the previous script included).
Targets: the warm run sends at most 30% of the cold run's input tokens and makes
at most 3 tool calls per table, with the same issue set.  Writes the
"Anthropic agent tokens" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from anthropic_standin import StandIn  # noqa: E402

SECTION = "Anthropic agent tokens"


def measure(standin: StandIn, since: int, usages_since: int) -> dict:
    usages = standin.usages[usages_since:]
    total = {k: sum(u[k] for _, u in usages) for k in
             ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")}
    last_by_table: dict[str, dict] = {}
    for body in standin.requests[since:]:
        if standin.stage(body) == "investigation":
            table = re.search(r"Investigate the \d+ issues of (\S+)\.", body["messages"][0]["content"][0]["text"])
            last_by_table[table.group(1)] = body
    tool_calls = {t: sum(1 for m in b["messages"] if m["role"] == "assistant" for c in m["content"]
                         if c.get("type") == "tool_use") for t, b in last_by_table.items()}
    return {**total, "sent": total["input_tokens"] + total["cache_read_input_tokens"]
            + total["cache_creation_input_tokens"], "requests": len(standin.requests) - since,
            "tool_calls": tool_calls}


def run(scale: float) -> tuple[dict, dict, bool]:
    from cataloger_dagster.demo import create_demo_database
    from cataloger_dagster.cli.runner import catalog_database

    with tempfile.TemporaryDirectory() as tmp, StandIn() as standin:
        db = Path(tmp) / "demo.duckdb"
        create_demo_database(db, scale=scale)
        os.environ.update(ANTHROPIC_BASE_URL=standin.url, ANTHROPIC_API_KEY="sk-ant-bench-not-a-key")
        os.environ.pop("DAGSTER_HOME", None)
        results = []
        for _ in ("cold", "warm"):
            since, usages_since = len(standin.requests), len(standin.usages)
            report = catalog_database(database=f"duckdb://{db}", store=str(Path(tmp) / "store"),
                                      agent="anthropic", sandbox="local", exploration_rate=0.0)
            assert not report.failed, [t.error for t in report.failed]
            results.append((measure(standin, since, usages_since),
                            {t.table: sorted(i.id for i in t.issues) for t in report.tables}))
    (cold, cold_issues), (warm, warm_issues) = results
    return cold, warm, cold_issues == warm_issues


def section(cold: dict, warm: dict, same: bool, scale: float) -> str:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{platform.node()} ({platform.machine()}, {platform.system()} {platform.release()}, " \
              f"Python {platform.python_version()}, {os.cpu_count()} CPUs)"
    fresh = {k: v["input_tokens"] + v["cache_creation_input_tokens"] for k, v in (("cold", cold), ("warm", warm))}
    rows = []
    for name, m in (("cold", cold), ("warm", warm)):
        calls = m["tool_calls"]
        rows.append(f"| {name} | {m['sent']:,} | {m['input_tokens']:,} | {m['cache_creation_input_tokens']:,} | "
                    f"{m['cache_read_input_tokens']:,} | {m['output_tokens']:,} | {m['requests']} | "
                    f"{sum(calls.values())} (max {max(calls.values(), default=0)} per table) |")
    ratio = warm["sent"] / cold["sent"]
    max_calls = max(warm["tool_calls"].values(), default=0)
    verdict = "met" if ratio <= 0.30 and max_calls <= 3 and same else "missed"
    return f"""## {SECTION}

Run {stamp} on {machine}; demo database at scale {scale}, local sandbox,
`benchmarks/bench_agent_tokens.py` against the stand-in of the Messages API
(tokens ~ 4 characters, counted by the stand-in from the requests it received;
cache reads and writes as the API keeps them, per model and prefix).
Targets: warm run <= 30% of the cold run's input tokens and <= 3 tool calls per table,
same issue set. **Targets {verdict}.**

| run | input tokens sent (all) | uncached | cache writes | cache reads | output | requests | execute_python calls |
|---|---:|---:|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

Warm / cold input tokens sent: **{ratio:.0%}**; fresh (uncached + cache writes): {fresh['warm'] / fresh['cold']:.0%}.
Same issue set in both runs: {'yes' if same else 'NO'}. Tool calls per table, warm: {warm['tool_calls']}.
The warm run reuses each table's understanding (same fingerprint and prompt version) and its
issue review (same findings), replays the previous script as the first tool call and needs one
answer per table; the cold run explores with a setup call and one call per issue.
"""


def write(text: str) -> None:
    path = ROOT / "BENCHMARKS.md"
    old = path.read_text() if path.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^## {re.escape(SECTION)}\n.*?(?=^## |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: text + "\n", old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    path.write_text(new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.05)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    cold, warm, same = run(args.scale)
    text = section(cold, warm, same, args.scale)
    print(text)
    if not args.no_write:
        write(text)


if __name__ == "__main__":
    main()
