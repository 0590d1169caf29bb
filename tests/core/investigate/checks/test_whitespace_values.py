"""The whitespace values check, run by a session script against a real DuckDB table: text with stray spaces."""

import pytest

from session_checks import database, made, run_checks

pytestmark = pytest.mark.slow


def test_padded_twins_are_confirmed(tmp_path):
    db = database(tmp_path / "w.duckdb", """
        CREATE TABLE orders AS SELECT i AS id, ['shipped', 'pending', 'delivered'][1 + i % 3] AS status
        FROM range(300) t(i);
        UPDATE orders SET status = 'shipped ' WHERE id IN (3, 6);
        UPDATE orders SET status = ' delivered' WHERE id = 5;
    """)
    issue = made("orders", "whitespace_values", ["status"])
    found = run_checks(db, "orders", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "confirmed" and found["affected"] == 3
    assert found["evidence"]["values_beside_their_trimmed_form"] == ["delivered", "shipped"]


def test_a_fixed_width_column_is_laid_out_on_purpose(tmp_path):
    # CHAR(6)-like codes: every value padded to six characters
    db = database(tmp_path / "w.duckdb", """
        CREATE TABLE parts AS SELECT i AS id, rpad(['A1', 'B22', 'C333'][1 + i % 3], 6, ' ') AS code
        FROM range(90) t(i);
    """)
    issue = made("parts", "whitespace_values", ["code"])
    found = run_checks(db, "parts", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "refuted" and "fixed-width" in found["reason"]


def test_trimmed_values_are_refuted(tmp_path):
    db = database(tmp_path / "w.duckdb", "CREATE TABLE orders AS SELECT i AS id, 'shipped' AS status FROM range(9) t(i);")
    issue = made("orders", "whitespace_values", ["status"])
    assert run_checks(db, "orders", [issue], tmp_path)[issue.id]["verdict"] == "refuted"


def test_a_doubled_space_counts_only_beside_the_same_text_spaced_right(tmp_path):
    db = database(tmp_path / "w.duckdb", """
        CREATE TABLE products AS SELECT i AS id, ['Home & Kitchen', 'Books', 'BE-58  BARON'][1 + i % 3] AS category
        FROM range(30) t(i);
        UPDATE products SET category = 'Home  & Kitchen' WHERE id = 3;
    """)
    issue = made("products", "whitespace_values", ["category"])
    found = run_checks(db, "products", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "confirmed" and found["affected"] == 1
    assert found["evidence"]["examples"] == ["Home  & Kitchen"]
