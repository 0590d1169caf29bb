"""The sensitive class check, run by a session script against a real DuckDB table: a column's class,
decided by the classifier from its first values, re-validated on a larger seeded sample."""

import datetime as dt
import json

import duckdb

import pytest

from cataloger_dagster.core.models import ColumnProfile, SensitiveClass
from cataloger_dagster.core.sensitive.classifier import ColumnValues, SAMPLE_VALUES, classify
from cataloger_dagster.core.sensitive.hypotheses import class_hypotheses
from session_checks import database, run_checks, scalar

pytestmark = pytest.mark.slow

# 6,000 contacts: `email` holds a real address in every row; `contact` holds one in its first 200
# rows only (all the classifier samples) and an order reference after them; `card` holds card
# numbers that pass Luhn; `ip` a few addresses among words
CONTACTS_SQL = """
CREATE TABLE contacts AS
  SELECT i AS id,
         'person' || i || '@mail.example.org' AS email,
         CASE WHEN i <= 200 THEN 'buyer' || i || '@shop.example.net' ELSE 'ORD-' || i END AS contact,
         CASE WHEN i % 2 = 0 THEN '4111 1111 1111 1111' ELSE '5555 5555 5555 4444' END AS card,
         CASE WHEN i <= 200 THEN '10.0.' || (i % 250) || '.1' ELSE 'unknown host ' || i END AS ip
  FROM range(1, 6001) t(i);
"""


@pytest.fixture(scope="module")
def contacts_db(tmp_path_factory):
    return database(tmp_path_factory.mktemp("contacts") / "contacts.duckdb", CONTACTS_SQL)


def _profile_of(db, columns):
    """The table's profile with the classes the classifier gives its first rows, as the profile
    stage keeps them: the classifier reads SAMPLE_VALUES values, in the table's order."""
    import duckdb

    from cataloger_dagster.core.models import Fingerprint, TableProfile

    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(f"SELECT {', '.join(columns)} FROM contacts ORDER BY id LIMIT {SAMPLE_VALUES}").fetchall()
    sampled = [ColumnValues(c, "string", [r[i] for r in rows]) for i, c in enumerate(columns)]
    found = classify(sampled, "contacts")
    cols = [ColumnProfile.model_construct(name=c, kind="string", sensitive=found.get(c, [])) for c in columns]
    return TableProfile.model_construct(database="contacts.duckdb", table="contacts", columns=cols)


def test_a_real_email_column_is_confirmed_and_one_that_changes_after_the_sample_is_refuted(contacts_db, tmp_path):
    profile = _profile_of(contacts_db, ["email", "contact"])
    # the classifier, on the first 200 rows, takes both columns for e-mail addresses
    assert [[c.name for c in col.sensitive] for col in profile.columns] == [["email"], ["email"]]
    issues = class_hypotheses(profile, today=dt.date(2026, 1, 1))
    found = run_checks(contacts_db, "contacts", issues, tmp_path)
    by_column = {i.affectedColumns[0]: found[i.id] for i in issues}

    real, changed = by_column["email"], by_column["contact"]
    assert real["verdict"] == "confirmed"
    assert real["evidence"]["valid"] == real["evidence"]["sampled"] > 10 * SAMPLE_VALUES
    assert changed["verdict"] == "refuted"
    # of the seeded sample, about the 200 of 6,000 rows that hold an address validate
    e = changed["evidence"]
    assert e["sampled"] > 10 * SAMPLE_VALUES and 0 < e["valid"] < 0.1 * e["sampled"]
    assert e["invalid"] == e["sampled"] - e["valid"]
    assert e["non_null"] == scalar(contacts_db, "SELECT count(*) FROM contacts")


def test_the_sample_is_seeded_the_same_rows_each_run(contacts_db, tmp_path):
    issues = class_hypotheses(_profile_of(contacts_db, ["contact"]), today=dt.date(2026, 1, 1))
    first = run_checks(contacts_db, "contacts", issues, tmp_path)
    again = run_checks(contacts_db, "contacts", issues, tmp_path)
    assert first == again and first[issues[0].id]["evidence"]["seed"] is not None


def test_the_sample_is_the_same_on_postgresql_as_on_duckdb(contacts_db, tmp_path, postgres_admin_url):
    """The stored script reruns the check against the source database: the same values sampled."""
    import uuid

    import psycopg

    issues = class_hypotheses(_profile_of(contacts_db, ["email", "contact"]), today=dt.date(2026, 1, 1))
    table = f"contacts_{uuid.uuid4().hex[:8]}"
    with duckdb.connect(str(contacts_db), read_only=True) as con:
        rows = con.execute("SELECT id, email, contact FROM contacts").fetchall()
    with psycopg.connect(postgres_admin_url.replace("postgres://", "postgresql://"), autocommit=True) as pg:
        pg.execute(f"CREATE TABLE {table} (id bigint, email text, contact text)")
        try:
            with pg.cursor() as cur:
                cur.executemany(f"INSERT INTO {table} VALUES (%s, %s, %s)", rows)
            renamed = [i.model_copy(update={"id": i.id.replace("contacts", table)}) for i in issues]
            on_pg = run_checks(postgres_admin_url, table, renamed, tmp_path)
        finally:
            pg.execute(f"DROP TABLE {table}")
    on_duckdb = run_checks(contacts_db, "contacts", issues, tmp_path)
    assert [on_pg[i.id.replace("contacts", table)] for i in issues] == [on_duckdb[i.id] for i in issues]


def test_no_value_of_the_column_leaves_the_check(contacts_db, tmp_path):
    issues = class_hypotheses(_profile_of(contacts_db, ["email", "contact", "card", "ip"]), today=dt.date(2026, 1, 1))
    assert {i.details["data_class"] for i in issues} >= {"email", "payment_card"}
    found = run_checks(contacts_db, "contacts", issues, tmp_path)
    printed = json.dumps(found)
    for fragment in ("@mail.example.org", "@shop.example.net", "ORD-", "4111", "5555", "10.0.", "unknown host"):
        assert fragment not in printed
    card = next(found[i.id] for i in issues if i.details["data_class"] == "payment_card")
    assert card["verdict"] == "confirmed"


def test_the_classes_hypotheses_are_made_for_are_those_the_sandbox_has_a_rule_for(contacts_db, tmp_path):
    from cataloger_dagster.core.models import TableProfile
    from cataloger_dagster.core.sensitive.classes import KEYS, label
    from cataloger_dagster.core.sensitive.hypotheses import CHECKED

    claims = [SensitiveClass(name=k, share=1.0, sampled=200, matched=200, signals=[]) for k in KEYS]
    profile = TableProfile.model_construct(database="contacts.duckdb", table="contacts", columns=[
        ColumnProfile.model_construct(name="email", kind="string", sensitive=claims)])
    made = class_hypotheses(profile)
    assert sorted(i.details["data_class"] for i in made) == sorted(CHECKED)
    # every class asked of the check: the ones without a hypothesis are those it cannot prove
    asked = [made[0].model_copy(update={"id": f"ask_{k}", "details": {**made[0].details, "data_class": k,
                                                                      "label": label(k), "pattern": ""}})
             for k in KEYS if k not in CHECKED]
    found = run_checks(contacts_db, "contacts", asked, tmp_path)
    assert {k: found[f"ask_{k}"]["verdict"] for k in KEYS if k not in CHECKED} == {
        k: "inconclusive" for k in KEYS if k not in CHECKED}
    assert "phone number" in found["ask_phone"]["reason"]


# values near each class's edge: valid ones, a wrong check digit, a wrong shape
EDGE_VALUES = {
    "date_of_birth": ["1980-02-29", "1981-02-29", "01/02/1990", "31.12.1905", "1899-01-01", "2999-01-01", "soon"],
    "email": ["a.b@example.com", "x+tag@sub.example.co.uk", "no-at.example.com", "two@@example.com", "a@b",
              "a@example.123", "first last@example.com", "ü@exämple.de", ".dot@example.com"],
    "iban": ["GB82WEST12345698765432", "GB82WEST12345698765433", "DE89370400440532013000", "DE89 3704 0044 0532 0130 00",
             "NL91ABNA0417164300", "XX00", "FR1420041010050500013M02606"],
    "payment_card": ["4111111111111111", "4111111111111112", "5555 5555 5555 4444", "378282246310005", "1234567812345670",
                     "4111-1111-1111-1111", "4111x1111"],
    "postcode": ["12345", "SW1A 1AA", "1234 AB", "K1A 0B1", "ABCDE", "12-345", "123"],
    "mac_address": ["00:1A:2B:3C:4D:5E", "00-1a-2b-3c-4d-5e", "001a.2b3c.4d5e", "00:1A:2B:3C:4D", "zz:1A:2B:3C:4D:5E"],
    "ip_address": ["10.0.0.1", "2001:db8::1", "300.1.1.1", "1.2.3", "::1"],
}


@pytest.mark.parametrize("data_class", sorted(EDGE_VALUES))
def test_the_sandbox_rule_of_a_class_agrees_with_the_host_validator(data_class, tmp_path):
    from cataloger_dagster.core.sensitive.classifier import RULES

    values = EDGE_VALUES[data_class]
    rows = " UNION ALL ".join(f"SELECT {i} AS id, '{v}' AS v" for i, v in enumerate(values))
    db = database(tmp_path / "edge.duckdb", f"CREATE TABLE edge AS {rows};")
    cls = SensitiveClass(name=data_class, share=1.0, sampled=len(values), matched=len(values), signals=[])
    profile_cols = [ColumnProfile.model_construct(name="v", kind="string", sensitive=[cls])]
    from cataloger_dagster.core.models import TableProfile

    profile = TableProfile.model_construct(database="edge.duckdb", table="edge", columns=profile_cols)
    issue = class_hypotheses(profile)[0]
    found = run_checks(db, "edge", [issue], tmp_path)[issue.id]
    host = next(r.validate for r in RULES if r.key == data_class)
    assert found["evidence"]["valid"] == sum(map(host, values)), [(v, host(v)) for v in values]
