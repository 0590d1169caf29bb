"""The catalog's deterministic findings on a database, computed as the assets compute them."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.models import IssueModel
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.resources.database import DatabaseResource


def detect_all(path: str | Path, now: datetime | None = None) -> dict[str, list[IssueModel]]:
    """Profile and detectors on every table of the DuckDB file, as table_profile and
    quality_issues do: the resource's tables and fingerprints, the catalog of all tables."""
    database = DatabaseResource(url=f"duckdb://{path}")
    catalog = database.catalog()
    found = {}
    for name in sorted(catalog):
        profile = compute_profile(database.table(name), database=database.database_name,
                                  table_name=name, fingerprint=database.fingerprint(name))
        found[name] = detect_issues(database.table(name), profile, catalog=catalog, now=now)
    return found
