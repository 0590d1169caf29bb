"""The catalog's deterministic findings on a database, computed as the assets compute them."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from parity import catalog

from cataloger_dagster.core.models import IssueModel


def detect_all(path: str | Path, now: datetime | None = None) -> dict[str, list[IssueModel]]:
    """Profile and detectors on every table of the DuckDB file, as table_profile and
    quality_issues do (tests/support/parity.py): {table: its issues}."""
    return catalog(f"duckdb://{path}", now=now or datetime.now(timezone.utc)).issues
