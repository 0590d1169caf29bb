"""The catalog's deterministic findings on a database, computed as the assets compute them."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from parity import catalog

from cataloger_dagster.core.models import IssueModel


def detect_by_database(folder: Path, names: list[str], now: datetime | None = None
                       ) -> tuple[dict[str, list[IssueModel]], dict[str, Path]]:
    """The findings on the tables `names`, each source catalogued as its own database
    (realdata.databases) in a DuckDB file under `folder`: ({table: its issues}, {database: file})."""
    import realdata

    found: dict[str, list[IssueModel]] = {}
    files: dict[str, Path] = {}
    for database, tables in realdata.databases(names).items():
        files[database] = folder / f"{database}.duckdb"
        realdata.load_duckdb(files[database], tables)
        found.update(detect_all(files[database], now=now))
    return found, files


def detect_all(path: str | Path, now: datetime | None = None) -> dict[str, list[IssueModel]]:
    """Profile and detectors on every table of the DuckDB file, as table_profile and
    quality_issues do (tests/support/parity.py): {table: its issues}."""
    return catalog(f"duckdb://{path}", now=now or datetime.now(timezone.utc)).issues
