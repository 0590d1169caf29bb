"""rule_violations of kind "not_null_when": a column set wherever another is, but on a few rows."""

from __future__ import annotations

from tests.support import null_shapes


def test_the_rows_against_a_null_rule_are_one_finding(tables):
    tables.sql(null_shapes.DOSES)
    found = tables.detect("doses")
    [rule] = [i for i in found.values() if i.type == "rule_violations"]
    assert rule.affectedColumns == ["unit", "dose"] and rule.affectedRows == 3
    assert rule.details["rule_kind"] == "not_null_when" and rule.details["rule"] == "unit IS NOT NULL WHEN dose IS NOT NULL"
    assert (rule.details["column"], rule.details["when_column"], rule.details["exceptions"]) == ("unit", "dose", 3)
    # the doses of the rows that break it: prescriptions 5, 9 and 13
    assert len(rule.details["when_examples"]) == 3 and all(isinstance(v, int) for v in rule.details["when_examples"])
    assert rule.description.startswith("unit holds a value wherever dose does, but on 3 rows")
    assert rule.id == "doses_rule_violations_unit"


def test_nulls_that_fall_independently_break_no_rule(tables):
    tables.sql(null_shapes.INDEPENDENT)
    assert not [i for i in tables.detect("survey").values() if i.type == "rule_violations"]


def test_a_rule_kept_on_every_row_is_no_finding(tables):
    # the unit is NULL exactly where the dose is: nothing to report
    tables.sql(null_shapes.DOSES.replace(" OR i IN (5, 9, 13)", ""))
    assert not [i for i in tables.detect("doses").values() if i.type == "rule_violations"]


def test_a_rule_needs_enough_rows_where_both_are_null(tables):
    # three rows where both are NULL: too few to call it a rule of the data
    tables.sql("""CREATE TABLE few AS SELECT i AS id, CASE WHEN i < 3 THEN NULL ELSE i END AS a,
                  CASE WHEN i < 3 OR i = 50 THEN NULL ELSE i END AS b FROM range(400) r(i)""")
    assert not [i for i in tables.detect("few").values() if i.type == "rule_violations"]
