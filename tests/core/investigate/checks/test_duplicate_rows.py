"""The duplicate rows check, run by a session script against a real DuckDB table: whole rows repeated."""

import pytest

from session_checks import database, made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_a_row_written_twice_is_counted_with_an_example(orders_db, tmp_path):
    columns = ["id", "customer_id", "note", "status", "amount", "code", "day", "email", "country", "qty", "created"]
    issue = made("orders", "duplicate_rows", columns)
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    rows = scalar(orders_db, "SELECT count(*) FROM orders")
    distinct = scalar(orders_db, "SELECT count(*) FROM (SELECT DISTINCT * FROM orders)")
    assert found["evidence"]["duplicate_rows"] == rows - distinct == 1
    assert found["evidence"]["examples"][0]["id"] == 7


NEAR_SQL = """
CREATE TABLE gems AS
  SELECT i + 1 AS rownames, i % 9 AS lot, round(0.2 + i * 0.01, 2) AS carat, 300 + i * 7 AS price
  FROM range(200) t(i);
INSERT INTO gems SELECT 201, 5, carat, price FROM gems WHERE rownames = 13;
INSERT INTO gems SELECT 202, 6, carat, price FROM gems WHERE rownames = 40;
"""


def test_copies_under_a_new_row_number_are_confirmed(tmp_path):
    db = database(tmp_path / "gems.duckdb", NEAR_SQL)
    issue = made("gems", "duplicate_rows", ["carat", "price"], compared_columns=["carat", "price"],
                 ignored_columns={"rownames": "a row number: unique on every row"})
    found = run_checks(db, "gems", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "confirmed"
    assert found["evidence"]["duplicate_rows"] == 2
    assert found["evidence"]["distinct_values"] == {"rownames": 202}


def test_rows_that_differ_in_a_column_that_repeats_are_different_records(tmp_path):
    # `lot` was set aside as if it told copies apart, but it repeats across the table: it is data
    db = database(tmp_path / "gems.duckdb", NEAR_SQL)
    issue = made("gems", "duplicate_rows", ["carat", "price"], compared_columns=["carat", "price"],
                 ignored_columns={"lot": "a surrogate id: unique on every row"})
    found = run_checks(db, "gems", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "refuted"
    assert "lot" in found["reason"] and found["affected"] == 0


def test_no_copy_left_is_refuted(tmp_path):
    db = database(tmp_path / "gems.duckdb", NEAR_SQL + "DELETE FROM gems WHERE rownames > 200;")
    issue = made("gems", "duplicate_rows", ["carat", "price"], compared_columns=["carat", "price"],
                 ignored_columns={"rownames": "a row number: unique on every row"})
    assert run_checks(db, "gems", [issue], tmp_path)[issue.id]["verdict"] == "refuted"
