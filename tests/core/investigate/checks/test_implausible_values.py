"""The implausible_values check, run by a session script against a real DuckDB table: a value ten
times its group's median with no company is confirmed; one inside its group's tail is refuted."""

import pytest

from session_checks import database, made, run_checks

pytestmark = pytest.mark.slow

# small items weigh 2 to 3 kg, except one of 50; large ones run 40 to 200 kg with a tail to 260
SHIPMENTS_SQL = """
CREATE TABLE shipments AS
  SELECT i AS id, 'small' AS kind, CASE WHEN i = 7 THEN 50.0 ELSE 2 + (i % 10) / 10.0 END AS weight FROM range(40) t(i)
  UNION ALL SELECT 100 + i, 'large', 40 + (i * 13) % 160 + CASE WHEN i >= 37 THEN 60 ELSE 0 END FROM range(40) t(i);
"""


def _issue(values):
    return made("shipments", "implausible_values", ["weight"], values=values,
                flagged=[{"value": v, "group": {"kind": None}} for v in values])


def test_a_value_alone_far_from_its_group_is_confirmed(tmp_path):
    db = database(tmp_path / "s.duckdb", SHIPMENTS_SQL)
    issue = _issue([50.0])
    found = run_checks(db, "shipments", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "confirmed" and found["evidence"]["far"] == 1, found


def test_a_value_in_its_groups_tail_is_refuted(tmp_path):
    db = database(tmp_path / "s.duckdb", SHIPMENTS_SQL)
    top = 40 + (39 * 13) % 160 + 60.0
    issue = _issue([top])
    found = run_checks(db, "shipments", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "refuted", found
