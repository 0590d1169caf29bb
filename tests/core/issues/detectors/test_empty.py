"""core/issues/detectors/empty.py: a table without rows is one finding, the only one of the
detectors, and costs the table's health; on real DuckDB tables."""

from __future__ import annotations

import duckdb
import ibis
import pytest

from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.models import TABLE_STATE_ISSUE_TYPES, AnalysisResultModel
from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.core.health import health_band, health_score


@pytest.fixture
def detected(tmp_path):
    """(profile, findings) of a table made by the given SQL statements."""
    path = tmp_path / "t.duckdb"

    def run(*statements: str):
        with duckdb.connect(str(path)) as con:
            for statement in statements:
                con.execute(statement)
        conn = ibis.duckdb.connect(str(path), read_only=True)
        try:
            table = conn.table("e")
            profile = compute_profile(table, database="t", table_name="e", fingerprint=compute_fingerprint(table))
            return profile, detect_issues(table, profile, catalog={"e": table})
        finally:
            conn.disconnect()

    return run


def test_an_empty_table_is_one_finding_and_the_only_one(detected):
    _, found = detected("CREATE TABLE e (id INTEGER, name VARCHAR, amount DOUBLE)")
    [empty] = found
    assert empty.id == "e_empty_table" and empty.type == "empty_table" and empty.type in TABLE_STATE_ISSUE_TYPES
    assert empty.severity == "medium" and empty.category == "smart_fixes" and empty.source == "detector"
    # table-wide: it names no column, and counts no affected rows
    assert empty.affectedColumns == [] and empty.affectedRows is None
    assert empty.description == "e has no rows: its 3 columns hold nothing to profile or check."
    assert "load" in empty.suggestedAction and empty.details == {"rows": 0, "columns": 3}


def test_a_table_with_one_row_is_judged_as_any_other(detected):
    _, found = detected("CREATE TABLE e (id INTEGER, name VARCHAR)", "INSERT INTO e VALUES (1, 'a')")
    assert not [i for i in found if i.type == "empty_table"]


def test_an_empty_tables_health_is_not_full(detected):
    profile, found = detected("CREATE TABLE e (id INTEGER, name VARCHAR)")
    result = AnalysisResultModel(issues=found, summary="", completedAt="")
    # a medium issue touching the whole table, confirmed by its check: 100 x (1 - 12/100)
    assert health_score(profile, result, pass_rate=1.0) == 88.0 and health_band(88.0) == "good"
    assert health_score(profile, AnalysisResultModel(issues=[], summary="", completedAt="")) == 100.0
