"""What every benchmark reports: the machine, and its own section of BENCHMARKS.md."""

from __future__ import annotations

import os
import platform
import re
from datetime import datetime, timezone
from pathlib import Path

BENCHMARKS_MD = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    import duckdb
    import ibis

    return (f"{os.cpu_count()} CPUs ({cpu}), {mem:.1f} GiB RAM, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}, "
            f"duckdb {duckdb.__version__}, ibis {ibis.__version__}")


def today() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def write_section(title: str, body: str, md: Path = BENCHMARKS_MD) -> None:
    """Replace the `## title` section of BENCHMARKS.md (or add it); other sections stay."""
    text = md.read_text() if md.exists() else "# Benchmarks\n"
    section = f"## {title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _m: section + "\n", text).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + section
    md.write_text(text)
