"""The inconsistent categories check, run by a session script against a real DuckDB table: one label written two ways."""

import pytest

from session_checks import database, made, run_checks, scalar

pytestmark = pytest.mark.slow


def test_one_label_in_two_cases_is_confirmed_with_its_spellings(orders_db, tmp_path):
    issue = made("orders", "inconsistent_categories", ["status"], groups={"shipped": ["shipped", "Shipped"]})
    found = run_checks(orders_db, "orders", [issue], tmp_path)[issue.id]
    rows = scalar(orders_db, "SELECT count(*) FROM orders")
    minority = scalar(orders_db, "SELECT count(*) FROM orders WHERE status = 'Shipped'")
    pending = scalar(orders_db, "SELECT count(*) FROM orders WHERE status = 'pending'")
    assert found["evidence"]["spellings"] == {"shipped": {"shipped": rows - minority - pending, "Shipped": minority}}
    assert found["evidence"]["rows_with_variant"] == minority
    assert found["verdict"] == "confirmed"


def test_a_rare_value_of_another_region_is_another_country(tmp_path):
    # 'Zambia' is one letter from 'Gambia', but its rows lie in another region: another country
    db = database(tmp_path / "c.duckdb", """
        CREATE TABLE trade AS
        SELECT i AS id, CASE WHEN i < 40 THEN 'Gambia' WHEN i < 43 THEN 'Zambia' ELSE 'Kenya' END AS country,
               CASE WHEN i < 40 THEN 'Western Africa' WHEN i < 43 THEN 'Southern Africa' ELSE 'Eastern Africa' END
                 AS region
        FROM range(80) t(i);
    """)
    issue = made("trade", "inconsistent_categories", ["country"], groups={"Gambia": ["Gambia", "Zambia"]})
    found = run_checks(db, "trade", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "refuted"
    assert "region" in found["evidence"]["apart"]["Zambia"]


def test_a_rare_spelling_among_the_same_rows_is_not_refuted(tmp_path):
    # 'blond' and 'blonde' people of the same kinds: nothing sets the rare spelling apart
    db = database(tmp_path / "c.duckdb", """
        CREATE TABLE people AS
        SELECT i AS id, CASE WHEN i < 30 THEN 'blonde' WHEN i < 32 THEN 'blond' ELSE 'brown' END AS hair,
               ['human', 'droid'][1 + i % 2] AS species
        FROM range(80) t(i);
    """)
    issue = made("people", "inconsistent_categories", ["hair"], groups={"blonde": ["blonde", "blond"]})
    found = run_checks(db, "people", [issue], tmp_path)[issue.id]
    assert found["verdict"] != "refuted"


def test_a_code_in_another_case_than_the_others(tmp_path):
    db = database(tmp_path / "c.duckdb", """
        CREATE TABLE storms AS SELECT i AS id, 'AL2011' || lpad(CAST(i % 20 AS VARCHAR), 2, '0') AS code
        FROM range(400) t(i);
        UPDATE storms SET code = 'Al201107' WHERE id IN (7, 27);
    """)
    issue = made("storms", "inconsistent_categories", ["code"], groups={"AL201107": ["Al201107"]})
    found = run_checks(db, "storms", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "confirmed" and found["affected"] == 2


def test_codes_of_mixed_case_refute_a_case_variant(tmp_path):
    db = database(tmp_path / "c.duckdb", """
        CREATE TABLE links AS SELECT i AS id, ['aB3x', 'Qz81', 'MM0P', 'k9dd'][1 + i % 4] AS code FROM range(40) t(i);
    """)
    issue = made("links", "inconsistent_categories", ["code"], groups={"K9DD": ["k9dd"]})
    found = run_checks(db, "links", [issue], tmp_path)[issue.id]
    assert found["verdict"] == "refuted" and "no one case" in found["reason"]
