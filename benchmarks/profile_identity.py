"""One SHA-256 per table of its profile, to show that a change of the profiler's code changes no profile.

    .venv/bin/python benchmarks/profile_identity.py OUT [--kinds duckdb sqlite postgres mysql]

Profiles every table of the real-data corpus (tests/support/realdata, both halves: this
compares profiles, it tunes nothing) and of the demo database (cataloger_dagster/demo, scale
0.05), each loaded into a fresh database of every backend in `--kinds` by the tests' loader
(tests/support/backends.py), and writes one line per table: backend, source, mode, table and
the SHA-256 of the profile's JSON (`model_dump_json`) to OUT.  Run it on the old code and the
new and compare the files (`diff`); they must be equal.

Two fields are left out of the JSON because they change on every run whatever the code:
`duration_s` (the wall time) and `profiled_at` (the clock).  DuckDB runs on one thread here:
on several, its seeded sample and its t-digest quantiles depend on how the threads share the
rows, and two runs of the same code gave different sampled profiles.

Each table is profiled twice: with the defaults ("default": the corpus's tables are below the
approximate threshold but nyc_flights) and with small thresholds ("small": approx_distinct_above
1,000 and sample_rows 5,000), so that the approximate and sampled paths (HyperLogLog, t-digest,
the seeded sample, the scaled counts) are compared on many tables too.

PostgreSQL and MySQL/MariaDB are read from CATALOGER_TEST_POSTGRES_URL and
CATALOGER_TEST_MYSQL_URL (their databases are dropped afterwards).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

import duckdb  # noqa: E402
from backends import Scratch, load_tables  # noqa: E402

import realdata  # noqa: E402
from cataloger_dagster.core.profile.profiling import compute_profile  # noqa: E402
from cataloger_dagster.demo import create_demo_database  # noqa: E402
from cataloger_dagster.resources.database.resource import DatabaseResource  # noqa: E402

MODES = {"default": {}, "small": {"approx_distinct_above": 1_000, "sample_rows": 5_000}}
VOLATILE = {"duration_s", "profiled_at"}
SERVERS = {"postgres": "CATALOGER_TEST_POSTGRES_URL", "mysql": "CATALOGER_TEST_MYSQL_URL"}


def sources(workdir: Path) -> dict[str, dict]:
    demo = workdir / "demo.duckdb"
    create_demo_database(demo, scale=0.05)
    with duckdb.connect(str(demo), read_only=True) as con:
        names = [row[0] for row in con.execute("SHOW TABLES").fetchall()]
        demo_tables = {name: con.table(name).to_arrow_table() for name in names}
    return {"demo": demo_tables, "realdata": realdata.corpus_tables()}


def digests(url: str) -> list[tuple[str, str, str]]:
    """(mode, table, sha256) of every table of the database at `url`."""
    out = []
    db = DatabaseResource(url=url)
    try:
        tables = db.catalog()
        if url.startswith("duckdb:") and tables:
            next(iter(tables.values())).get_backend().raw_sql("SET threads TO 1")
        for name in sorted(tables):
            fingerprint = db.fingerprint(name)
            for mode, options in MODES.items():
                profile = _profile(tables[name], name, fingerprint, options)
                text = profile.model_dump_json(exclude=VOLATILE)
                out.append((mode, name, hashlib.sha256(text.encode()).hexdigest()))
    finally:
        db.close()
    return out


def _profile(table, name: str, fingerprint, options: dict):
    """compute_profile with `options`, as ProfileOptions where the code has them: the script
    compares the profiler before and after its options became one argument."""
    try:
        from cataloger_dagster.core.profile.profiling import ProfileOptions
    except ImportError:
        return compute_profile(table, database="identity", table_name=name, fingerprint=fingerprint, **options)
    return compute_profile(
        table, database="identity", table_name=name, fingerprint=fingerprint, options=ProfileOptions(**options)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--kinds", nargs="+", default=["duckdb", "sqlite"])
    ap.add_argument("--sources", nargs="+", default=["demo", "realdata"])
    args = ap.parse_args()
    lines: list[str] = []
    args.out.write_text("")
    with tempfile.TemporaryDirectory() as tmp:
        where = Scratch(Path(tmp), lambda kind: os.environ[SERVERS[kind]])
        try:
            data = sources(Path(tmp))
            for kind in args.kinds:
                for source in args.sources:
                    started = time.perf_counter()
                    url = load_tables(kind, data[source], where)
                    found = digests(url)
                    block = [f"{kind}\t{source}\t{mode}\t{table}\t{sha}" for mode, table, sha in found]
                    with args.out.open("a") as out:  # each block as it is done: a long run can be read early
                        out.write("".join(line + "\n" for line in block))
                    lines += block
                    print(f"{kind} {source}: {len(found)} profiles in {time.perf_counter() - started:.0f} s", flush=True)
        finally:
            where.close()
    print(f"{len(lines)} digests written to {args.out}")


if __name__ == "__main__":
    main()
