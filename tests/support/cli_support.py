"""The `cataloger` command as a user runs it, for the end-to-end tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CATALOGER = str(Path(sys.executable).parent / "cataloger")


def cataloger_env(env: dict | None = None) -> dict:
    """This environment without the settings a test passes as options (nor a DAGSTER_HOME)."""
    full_env = {**os.environ, **(env or {})}
    for name in ("DAGSTER_HOME", "CATALOGER_DATABASE", "CATALOGER_STORE"):
        full_env.pop(name, None)
    return full_env


def cataloger(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([CATALOGER, *args], capture_output=True, text=True, timeout=600, cwd=cwd,
                          env=cataloger_env(env))


def database_with_a_broken_view(path: Path, rows: int) -> Path:
    """A DuckDB file holding `good` (`rows` rows) and `broken`, a view whose table was dropped,
    so that reading it fails every time: one table of a run that fails for real."""
    import duckdb

    with duckdb.connect(str(path)) as con:
        con.execute(f"CREATE TABLE good AS SELECT range AS id, range % 3 AS grp FROM range({rows})")
        con.execute("CREATE TABLE gone AS SELECT 1 AS x")
        con.execute("CREATE VIEW broken AS SELECT * FROM gone")
        con.execute("DROP TABLE gone")
    return path
