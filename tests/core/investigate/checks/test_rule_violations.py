"""The rule-violations check, run by a session script against a real DuckDB table: it re-tests the
rule the detector found, and refutes it where most rows break it or where the exceptions are rounding."""

from datetime import datetime, timezone

import ibis
import pytest

from session_checks import database, made, run_checks, scalar

from cataloger_dagster.core.issues.detectors import rules
from cataloger_dagster.core.issues.detectors.null_rules import rule_details
from cataloger_dagster.core.issues.detectors.context import Context
from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
from cataloger_dagster.core.profile.profiling import compute_profile

from tests.support import null_shapes

pytestmark = pytest.mark.slow

# order lines: a total of two parts (wrong on rows 17 and 151), a share in percent of a whole,
# a low and a high (swapped on row 99); totals that differ from their parts by a cent on rows 5, 6, 7
LINES_SQL = """
CREATE TABLE lines AS
  SELECT i AS id,
         round(10 + (i * 37 % 500) / 10.0, 2) AS subtotal,
         CASE WHEN i % 3 = 0 THEN 0 ELSE 4.99 END AS shipping,
         round(10 + (i * 37 % 500) / 10.0 + CASE WHEN i % 3 = 0 THEN 0 ELSE 4.99 END
               + CASE WHEN i IN (17, 151) THEN 25 ELSE 0 END, 2) AS total,
         round(10 + (i * 37 % 500) / 10.0 + CASE WHEN i % 3 = 0 THEN 0 ELSE 4.99 END
               + CASE WHEN i IN (5, 6, 7) THEN 0.01 ELSE 0 END, 2) AS total_cents,
         CASE WHEN i = 99 THEN 30.5 ELSE (i % 13) + 0.5 END AS price_low,
         CASE WHEN i = 99 THEN 2.5 ELSE (i % 13) + 3.5 + (i % 5) END AS price_high,
         (i % 40) + 1 AS part,
         (i % 40) + 1 + (i * 7 % 60) AS whole
  FROM range(1, 201) t(i);
ALTER TABLE lines ADD COLUMN share_pct DOUBLE;
UPDATE lines SET share_pct = round(100.0 * part / whole, 1);
"""


@pytest.fixture(scope="module")
def lines_db(tmp_path_factory):
    return database(tmp_path_factory.mktemp("lines") / "lines.duckdb", LINES_SQL)


def _detected(db):
    """The detector's own findings on `lines`, and the rules it found."""
    con = ibis.duckdb.connect(str(db), read_only=True)
    try:
        t = con.table("lines")
        profile = compute_profile(t, database="t", table_name="lines", fingerprint=compute_fingerprint(t))
        ctx = Context(t, profile, {}, datetime(2026, 6, 1, tzinfo=timezone.utc))
        found = rules.rule_violations(ctx)
        return {tuple(i.affectedColumns): i for i in found}, rules.discovered(ctx)
    finally:
        con.disconnect()


def test_the_detectors_broken_total_and_swapped_bounds_are_confirmed(lines_db, tmp_path):
    found, _ = _detected(lines_db)
    total, bounds = found[("total", "subtotal", "shipping")], found[("price_low", "price_high")]
    records = run_checks(lines_db, "lines", [total, bounds], tmp_path)
    assert records[total.id]["verdict"] == "confirmed", records[total.id]
    assert records[total.id]["affected"] == 2 == total.affectedRows
    assert sorted(r["total"] for r in records[total.id]["evidence"]["examples"]) == sorted(
        scalar(lines_db, f"SELECT total FROM lines WHERE id = {i}") for i in (17, 151))
    assert records[bounds.id]["verdict"] == "confirmed" and records[bounds.id]["affected"] == 1


def test_a_rule_that_holds_on_every_row_is_knowledge_and_its_check_refutes_a_violation(lines_db, tmp_path):
    _, known = _detected(lines_db)
    share = next(r for r in known if r.kind == "product")
    assert share.formula == "share_pct = 100 * part / whole" and share.holds == share.applies == 200
    issue = made("lines", "rule_violations", share.columns, rule=share.formula, **share.model_dump(exclude={"formula"}))
    record = run_checks(lines_db, "lines", [issue], tmp_path)[issue.id]
    assert record["verdict"] == "refuted" and record["affected"] == 0


def test_a_rule_most_rows_break_is_no_rule(lines_db, tmp_path):
    # total = subtotal: true only where shipping is free, a third of the rows
    issue = made("lines", "rule_violations", ["total", "subtotal"], rule="total = 1 * subtotal", kind="multiple",
                 result="total", operands=["subtotal"], factor=1.0, steps={"total": 0.01, "subtotal": 0.01})
    record = run_checks(lines_db, "lines", [issue], tmp_path)[issue.id]
    assert record["verdict"] == "refuted" and "no rule" in record["reason"]
    assert record["evidence"]["holds"] < 0.95 * record["evidence"]["applies"]


def test_exceptions_within_a_wider_rounding_are_refuted(lines_db, tmp_path):
    # rounded to the mill, the cent of difference on three rows breaks the rule; with ten times
    # that rounding it does not: the exceptions are rounding
    steps = {"total_cents": 0.001, "subtotal": 0.001, "shipping": 0.001}
    issue = made("lines", "rule_violations", ["total_cents", "subtotal", "shipping"],
                 rule="total_cents = subtotal + shipping", kind="sum", result="total_cents",
                 operands=["subtotal", "shipping"], steps=steps, relative=1e-6)
    record = run_checks(lines_db, "lines", [issue], tmp_path)[issue.id]
    assert record["evidence"]["exceptions"] == 3 and record["evidence"]["exceptions_with_wider_rounding"] == 0
    assert record["verdict"] == "refuted" and "rounding" in record["reason"]


# --- NULL rules (kind "not_null_when") -------------------------------------------------------

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
