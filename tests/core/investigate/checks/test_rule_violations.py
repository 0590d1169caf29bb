"""The rule_violations check on NULL rules (kind "not_null_when"), run by a session script against a
real DuckDB table: confirmed where a column is set wherever another is but on a few rows, refuted
where it is set everywhere, where the rule holds on too few rows, or where the NULLs fall by chance."""

import pytest

from session_checks import database, made, run_checks

from cataloger_dagster.core.issues.detectors.null_rules import rule_details
from tests.support import null_shapes

pytestmark = pytest.mark.slow


def _rule(table: str, x: str, y: str):
    return made(table, "rule_violations", [x, y], **rule_details(x, y))


def test_a_null_rule_with_a_few_exceptions_is_confirmed_and_one_kept_everywhere_refuted(tmp_path):
    db = database(tmp_path / "doses.duckdb", null_shapes.DOSES + ";" + null_shapes.DOSES.replace(
        "doses", "kept").replace(" OR i IN (5, 9, 13)", ""))
    found = run_checks(db, "doses", [_rule("doses", "unit", "dose")], tmp_path)["doses_rule_violations_unit_dose"]
    assert found["verdict"] == "confirmed" and found["affected"] == 3
    assert found["evidence"]["exceptions"] == 3 and found["evidence"]["applies"] == 600
    assert sorted(r["dose"] is not None and r["unit"] is None for r in found["evidence"]["examples"]) == [True] * 3
    kept = run_checks(db, "kept", [_rule("kept", "unit", "dose")], tmp_path)["kept_rule_violations_unit_dose"]
    assert kept["verdict"] == "refuted" and kept["affected"] == 0


def test_nulls_that_fall_by_chance_or_too_often_are_no_rule(tmp_path):
    db = database(tmp_path / "survey.duckdb", null_shapes.INDEPENDENT)
    # income is NULL on 10% of the rows, wherever satisfaction is or not: far from a rule
    found = run_checks(db, "survey", [_rule("survey", "income", "satisfaction"),
                                      _rule("survey", "satisfaction", "income")], tmp_path)
    assert found["survey_rule_violations_income_satisfaction"]["verdict"] == "refuted"
    assert found["survey_rule_violations_satisfaction_income"]["verdict"] == "refuted"
    # a rule that holds on 97% of the rows but whose NULLs do not follow the operand's: chance
    db = database(tmp_path / "rare.duckdb", """CREATE TABLE rare AS SELECT i AS id,
        CASE WHEN i % 3 = 0 THEN NULL ELSE i END AS y, CASE WHEN i % 37 = 0 THEN NULL ELSE i END AS x
        FROM range(3000) r(i)""")
    rare = run_checks(db, "rare", [_rule("rare", "x", "y")], tmp_path)["rare_rule_violations_x_y"]
    assert rare["verdict"] == "refuted" and "do not follow" in rare["reason"]
