"""The scale_errors check, run by a session script against a real DuckDB table: flagged values a
factor off their group's peers are confirmed; a group that lives at that level, or values at no
such factor, refute it."""

import pytest

from session_checks import database, made, run_checks

pytestmark = pytest.mark.slow

# 40 firms in two sectors; revenue in thousands (100 to 300), three answers in units (x1000);
# the 'holding' sector really is a thousand times larger
SURVEY_SQL = """
CREATE TABLE survey AS
  SELECT i AS id, CASE WHEN i % 2 = 0 THEN 'retail' ELSE 'farming' END AS sector,
         CASE WHEN i IN (4, 9, 17) THEN (100 + (i * 37) % 200) * 1000.0 ELSE 100 + (i * 37) % 200 END AS revenue
  FROM range(1, 41) t(i)
  UNION ALL SELECT 100 + i, 'holding', 150000 + i * 3000.0 FROM range(20) t(i);
"""


def _flagged(values, group="sector"):
    return [{"value": v, "group": {group: None}} for v in values]


def test_values_a_thousand_times_their_peers_are_confirmed(tmp_path):
    db = database(tmp_path / "survey.duckdb", SURVEY_SQL)
    values = [248000.0, 233000.0, 129000.0]
    issue = made("survey", "scale_errors", ["revenue"], values=values, factor=1000.0, flagged=_flagged(values))
    found = run_checks(db, "survey", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "confirmed", found
    assert found["evidence"]["at_factor"] == 3 and found["affected"] == 3


def test_values_of_a_group_that_lives_at_that_level_are_refuted(tmp_path):
    db = database(tmp_path / "survey.duckdb", SURVEY_SQL)
    values = [150000.0, 153000.0]          # two of the holdings: their sector is all at that level
    issue = made("survey", "scale_errors", ["revenue"], values=values, factor=1000.0, flagged=_flagged(values))
    found = run_checks(db, "survey", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "refuted" and "consistently" in found["reason"], found


def test_values_at_no_such_factor_are_refuted(tmp_path):
    db = database(tmp_path / "survey.duckdb", SURVEY_SQL)
    values = [248000.0, 233000.0, 129000.0]
    issue = made("survey", "scale_errors", ["revenue"], values=values, factor=10.0, flagged=_flagged(values))
    found = run_checks(db, "survey", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "refuted" and found["evidence"]["at_factor"] == 0, found


# 300 incomes on a power law (the quantiles of a Pareto, no randomness): the largest about twelve
# times the median, but the tail thins out towards it value after value
TAIL_SQL = """
CREATE TABLE incomes AS
  SELECT i AS id, round(100 * power(1 - i / 301.0, -0.5), 2) AS income FROM range(0, 301) t(i);
"""


def test_the_last_value_of_a_thinning_tail_is_refuted(tmp_path):
    db = database(tmp_path / "incomes.duckdb", TAIL_SQL)
    top = 1734.94
    issue = made("incomes", "scale_errors", ["income"], values=[top], factor=10.0, flagged=[{"value": top}])
    found = run_checks(db, "incomes", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "refuted" and "tail" in found["reason"], found
    assert found["evidence"]["on_a_tail"] == 1


def test_the_same_value_cut_off_from_a_tight_bulk_is_confirmed(tmp_path):
    db = database(tmp_path / "incomes.duckdb", """
        CREATE TABLE incomes AS SELECT i AS id, 150.0 + (i * 7) % 40 AS income FROM range(0, 300) t(i)
        UNION ALL SELECT 300, 1734.94;""")
    issue = made("incomes", "scale_errors", ["income"], values=[1734.94], factor=10.0, flagged=[{"value": 1734.94}])
    found = run_checks(db, "incomes", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "confirmed" and found["evidence"]["on_a_tail"] == 0, found
