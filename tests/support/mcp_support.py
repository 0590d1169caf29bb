"""A small catalog for the MCP server's tests: one DuckDB database cataloged by a real run."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import duckdb

# the table has planted defects the detectors find: missing e-mails, a sentinel, duplicate rows
TABLE = "members"


def make_database(path: Path, rows: int = 60) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute(
            f"CREATE TABLE {TABLE} AS SELECT i AS id, 'member ' || i AS name, "
            "CASE WHEN i % 4 = 0 THEN NULL ELSE 'm' || i || '@example.com' END AS email, "
            "CASE WHEN i % 10 = 0 THEN -999 ELSE 20 + i % 50 END AS age, "
            "CASE WHEN i % 3 = 0 THEN 'gold' ELSE 'basic' END AS tier "
            f"FROM range({rows}) t(i)")
        con.execute(f"INSERT INTO {TABLE} SELECT * FROM {TABLE} WHERE id < 5")
    return path


def catalog(database: Path, store: Path, **kwargs):
    """One real catalog run of every table (the heuristic agent, the local sandbox)."""
    from cataloger_dagster.cli.runner import catalog_database

    report = catalog_database(database=f"duckdb://{database}", store=str(store), agent="heuristic",
                              sandbox="local", **kwargs)
    assert not report.failed, report.failed
    return report


def server_command(database: Path, store: Path, *extra: str) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) that start `cataloger mcp` as an MCP client would."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOGER_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[2]),
                                                    env.get("PYTHONPATH", "")) if p)
    args = ["-c", "from cataloger_dagster.cli import main; main()", "mcp", "--database", f"duckdb://{database}", "--store", str(store), *extra]
    return sys.executable, args, env
