"""The date as text check, run by a session script against a real DuckDB table: text that reads as dates."""

import pytest

from session_checks import made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_dates_in_text_are_confirmed(orders_db, tmp_path):
    issue = made("orders", "date_as_text", ["day"])
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "confirmed"
    assert found["evidence"]["dates"] == scalar(orders_db, "SELECT count(*) FROM orders")


def test_dates_written_as_integers_are_confirmed(tmp_path):
    from session_checks import database
    db = database(tmp_path / "co2.duckdb", """CREATE TABLE co2 AS SELECT
        CAST(strftime(DATE '1958-03-29' + CAST(7 * i AS INTEGER), '%Y%m%d') AS INTEGER) AS day, 315 + i / 50.0 AS ppm
        FROM range(300) t(i)""")
    issue = made("co2", "date_as_text", ["day"], date_format="%Y%m%d", stored_as="integer")
    found = run_checks(db, "co2", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "confirmed" and "integers" in found["hypothesis"], found
    assert found["evidence"]["dates"] == 300


def test_integers_that_are_not_dates_are_refuted(tmp_path):
    from session_checks import database
    db = database(tmp_path / "amounts.duckdb", """CREATE TABLE amounts AS SELECT
        18000000 + (i * 7919 * 104729) % 4000000 AS amount FROM range(300) t(i)""")
    issue = made("amounts", "date_as_text", ["amount"], date_format="%Y%m%d", stored_as="integer")
    found = run_checks(db, "amounts", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "refuted", found
