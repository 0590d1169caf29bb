"""Sandbox latency: warm round trip (p50/p95) and cold start, per backend, beside a Jupyter kernel.

Run: .venv/bin/python benchmarks/bench_sandbox.py [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone

from cataloger_dagster.resources.sandbox import SandboxResource

WARM = 300
COLD = 5


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def bench_sandbox(backend: str, data_dir: str) -> dict:
    sb = SandboxResource(backend=backend)
    colds = []
    for _ in range(COLD):
        t0 = time.perf_counter()
        with sb.session(data_dir) as rt:
            assert rt.execute("1").result == "1"
            colds.append(time.perf_counter() - t0)
    with sb.session(data_dir) as rt:
        rt.execute("x = 0")
        warm = []
        for _ in range(WARM):
            t0 = time.perf_counter()
            rt.execute("x += 1")
            warm.append(time.perf_counter() - t0)
    return {"p50_ms": pct(warm, .5) * 1e3, "p95_ms": pct(warm, .95) * 1e3, "cold_s": statistics.median(colds)}


def bench_jupyter() -> dict:
    from jupyter_client.manager import start_new_kernel

    colds = []
    for _ in range(COLD):
        t0 = time.perf_counter()
        km, kc = start_new_kernel(kernel_name="python3")
        kc.execute_interactive("1", timeout=30)
        colds.append(time.perf_counter() - t0)
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        kc.execute_interactive("x = 0", timeout=30)
        warm = []
        for _ in range(WARM):
            t0 = time.perf_counter()
            kc.execute_interactive("x += 1", timeout=30)
            warm.append(time.perf_counter() - t0)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return {"p50_ms": pct(warm, .5) * 1e3, "p95_ms": pct(warm, .95) * 1e3, "cold_s": statistics.median(colds)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", help="append the Markdown section to this file")
    ap.add_argument("--backends", default="local,docker")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as data_dir:
        for backend in args.backends.split(","):
            rows.append((f"sandbox {backend}", bench_sandbox(backend, data_dir)))
    rows.append(("jupyter_client + ipykernel (yardstick)", bench_jupyter()))
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cpu = platform.processor() or platform.machine()
    lines = ["", "## Sandbox", "",
             f"Run {stamp} on {platform.node()} ({cpu}, Linux {platform.release()}, Python "
             f"{platform.python_version()}); {WARM} warm cells, cold start median of {COLD}.",
             "Targets: warm p50 <= 2 ms local, <= 5 ms Docker; cold <= 0.5 s local, <= 1.5 s Docker.", "",
             "| runtime | warm p50 (ms) | warm p95 (ms) | cold start to first result (s) |",
             "|---|---|---|---|"]
    for name, r in rows:
        lines.append(f"| {name} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} | {r['cold_s']:.2f} |")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.append:
        with open(args.append, "a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
