"""The mixed_units check, run by a session script against a real DuckDB table: several notations
of one quantity are confirmed; a column where one notation covers 99% or more is refuted."""

import pytest

from cataloger_dagster.core.issues.detectors.units import spellings
from session_checks import database, made, run_checks

pytestmark = pytest.mark.slow

HEIGHTS_SQL = """
CREATE TABLE people AS
  SELECT i AS id, CASE WHEN i % 10 = 0 THEN '5''' || (i % 12) || '"' WHEN i % 10 = 1 THEN (150 + i % 40) || 'cm'
                       WHEN i = 5 THEN 'NA' ELSE CAST(150 + i % 40 AS VARCHAR) END AS height,
         CASE WHEN i = 3 THEN '170' ELSE (150 + i % 40) || ' cm' END AS height_cm
  FROM range(300) t(i);
"""


def test_several_notations_of_one_length_are_confirmed(tmp_path):
    db = database(tmp_path / "p.duckdb", HEIGHTS_SQL)
    issue = made("people", "mixed_units", ["height"], dimension="length", placeholders={"NA": 1})
    found = run_checks(db, "people", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "confirmed", found
    notations = {k: v["rows"] for k, v in found["evidence"]["notations"].items()}
    assert notations == {"number without unit": 239, "ft+in": 30, "cm": 30}
    assert spellings("length")["inches"] == "in"


def test_one_notation_covering_99_percent_is_refuted(tmp_path):
    db = database(tmp_path / "p.duckdb", HEIGHTS_SQL)
    issue = made("people", "mixed_units", ["height_cm"], dimension="length", placeholders={})
    found = run_checks(db, "people", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "refuted" and "99" in found["reason"], found
