"""What a catalog page is rendered from, made by the real stages over a DuckDB file: the table's
profile, its heuristic understanding and the detectors' findings."""

from __future__ import annotations

from pathlib import Path

import ibis

from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.models import AnalysisResultModel, DatasetUnderstandingModel, TableProfile
from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.core.understanding import heuristic_understanding


def page_inputs(path: Path, table_name: str, database: str = "shop") -> tuple[
        TableProfile, DatasetUnderstandingModel, AnalysisResultModel]:
    """(profile, understanding, findings) of `table_name` in the DuckDB file `path`."""
    backend = ibis.duckdb.connect(path, read_only=True)
    try:
        table = backend.table(table_name)
        profile = compute_profile(table, database=database, table_name=table_name,
                                  fingerprint=compute_fingerprint(table))
        found = detect_issues(table, profile)
    finally:
        backend.disconnect()
    return profile, heuristic_understanding(profile), AnalysisResultModel(issues=found, summary="", completedAt="")
