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


def test_every_class_gets_a_hypothesis_whose_rules_are_the_classifiers():
    from cataloger_dagster.core.models import TableProfile
    from cataloger_dagster.core.sensitive.classes import KEYS
    from cataloger_dagster.core.sensitive.classifier import RULES
    from cataloger_dagster.core.sensitive.hypotheses import CHECKED
    from cataloger_dagster.core.sensitive.rules import RULES_BY_NAME

    assert set(CHECKED) == set(KEYS)  # a class added to classes.py without a rule fails here
    claims = [SensitiveClass(name=k, share=1.0, sampled=200, matched=200, signals=["column name: v"]) for k in KEYS]
    profile = TableProfile.model_construct(database="d.duckdb", table="d", columns=[
        ColumnProfile.model_construct(name="v", kind="string", sensitive=claims)])
    made = {i.details["data_class"]: i.details for i in class_hypotheses(profile)}
    assert set(made) == set(KEYS)
    for key, claim in made.items():
        assert claim["rules"] or key == "geolocation", key
        assert all(name in RULES_BY_NAME for name in claim["rules"]), key
    # the sandbox runs the classifier's own functions (an e-mail's syntax aside: see rules.py)
    for rule in RULES:
        if rule.key != "email":
            assert RULES_BY_NAME[rule.validate.__name__] is rule.validate, rule.key


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
    "phone": ["+44 20 7946 0018", "(212) 555-0123", "030 1234567", "12345", "555-5555", "2024-01-31", "+1 call me"],
    "national_id": ["536-22-1234", "AB123456C", "QQ123456Z", "111222333", "123456782", "12345678Z", "12345678A"],
    "crypto_wallet": ["1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3",
                      "0x52908400098527886E0F7030069857D2E4169EE7", "0x5290", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"],
    "secret": ["AKIAIOSFODNN7EXAMPLE", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "hunter2hunter2", "pw 12", "abc"],
    "person_name": ["Anna de Vries", "O'Brien", "jean-luc", "ACME-12", "Mary Ann Smith Jones Lee Wu", "x1"],
    "postal_address": ["12 High Street", "Kerkstraat 5, Utrecht", "unknown", "12", "Flat 3b"],
    "username": ["jdoe", "anna.devries", "x", "12345", "two words", "a@b.c"],
    "geolocation": ["51.50741", "-0.1278", "51.5", "91.1234", "-179.99991", "north"],
}


@pytest.mark.parametrize("data_class", sorted(EDGE_VALUES))
def test_the_sandbox_rule_of_a_class_agrees_with_the_host_validator(data_class, tmp_path):
    from cataloger_dagster.core.sensitive.classifier import RULES

    values = EDGE_VALUES[data_class]
    quoted = [v.replace("'", "''") for v in values]
    rows = " UNION ALL ".join(f"SELECT {i} AS id, '{v}' AS v" for i, v in enumerate(quoted))
    db = database(tmp_path / "edge.duckdb", f"CREATE TABLE edge AS {rows};")
    # named for its class, so that the rules which need the column's name apply too
    cls = SensitiveClass(name=data_class, share=1.0, sampled=len(values), matched=len(values),
                         signals=["column name: longitude"])
    profile_cols = [ColumnProfile.model_construct(name="longitude", kind="string", sensitive=[cls])]
    from cataloger_dagster.core.models import TableProfile

    profile = TableProfile.model_construct(database="edge.duckdb", table="edge", columns=profile_cols)
    issue = class_hypotheses(profile)[0]
    found = run_checks(db, "edge", [issue.model_copy(update={"affectedColumns": ["v"]})], tmp_path)[issue.id]
    if data_class == "geolocation":
        from cataloger_dagster.core.sensitive.validators import coordinate

        def host(value):
            return coordinate(value, 180.0)
    else:
        validators = [r.validate for r in RULES if r.key == data_class]

        def host(value):
            return any(validate(value) for validate in validators)
    valid = [v for v in values if host(v)]
    assert 0 < len(valid) < len(values)  # the edge values hold both
    assert found["evidence"]["valid"] == len(valid), [(v, host(v)) for v in values]


def _bitcoin_address(i: int) -> str:
    """A pay-to-public-key-hash address (Base58Check) whose check digits are right."""
    import hashlib

    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    payload = b"\0" + hashlib.sha256(str(i).encode()).digest()[:20]
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    n, text = int.from_bytes(data, "big"), ""
    while n:
        n, r = divmod(n, 58)
        text = alphabet[r] + text
    return "1" + text  # the version byte, a zero, is a leading "1"


def _bsns(n: int) -> list[str]:
    """n Dutch citizen service numbers that pass the eleven-test."""
    from stdnum.nl import bsn

    found, k = [], 100_000_000
    while len(found) < n:
        k += 7
        if bsn.is_valid(str(k)):
            found.append(str(k))
    return found


FIRST, LAST = ["Anna", "Jan", "Maria", "Pieter", "Sofia", "Lucas"], ["de Vries", "Jansen", "Bakker", "Visser", "Smit"]
PEOPLE_ROWS = 6_000
# each class's column (named for it) of real values, and a column whose first rows (all the classifier
# samples) hold the class and whose other rows do not: (class, real column, changed column, its later value)
PEOPLE_CLASSES = [
    ("phone", "phone", "mobile_phone", lambda i: f"ORD-{i}"),
    ("national_id", "bsn", "national_id", lambda i: "pending"),
    ("crypto_wallet", "wallet", "eth_wallet", lambda i: "pending"),
    ("secret", "api_key", "password", lambda i: "not set"),
    ("person_name", "full_name", "contact_name", lambda i: f"ACME-{i}"),
    ("postal_address", "street_address", "address", lambda i: "unknown"),
    ("username", "username", "login", lambda i: "not given"),
    ("geolocation", "longitude", "home_lat", lambda i: round(10 + i / 1000, 1)),
]


def _people_values(i: int, bsn: str) -> dict:
    name = f"{FIRST[i % 6]} {LAST[i % 5]}"
    real = {
        "phone": f"+44 20 7946 {i:04d}",
        "bsn": bsn,
        "wallet": _bitcoin_address(i),
        "api_key": f"sk_live_{i:08d}Xq7ZpLm2Rt9W",
        "full_name": name,
        "street_address": f"{i} High Street",
        "username": f"user.{i}",
        "longitude": -179.5 + (i * 0.05813) % 359,
    }
    first = {
        "mobile_phone": f"+31 6 1234 {i:04d}",
        "national_id": bsn,
        "eth_wallet": "0x" + f"{i:040x}",
        "password": f"Xk29fj{i}s",
        "contact_name": name,
        "address": f"{i} Kerkstraat",
        "login": f"member{i}",
        "home_lat": 52 + i / 10_007,
    }
    return {**real, **first}


@pytest.fixture(scope="module")
def people_db(tmp_path_factory):
    import pyarrow as pa

    bsns = _bsns(PEOPLE_ROWS)
    rows = []
    for i in range(1, PEOPLE_ROWS + 1):
        row = {"id": i, **_people_values(i, bsns[i - 1])}
        if i > SAMPLE_VALUES:
            row.update({changed: later(i) for _, _, changed, later in PEOPLE_CLASSES})
        rows.append(row)
    people = pa.Table.from_pylist(rows)  # noqa: F841 (read by DuckDB by its name)
    path = tmp_path_factory.mktemp("people") / "people.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE people AS SELECT * FROM people")
    return path


def _classified(db, table):
    """The table's profile with the classes the classifier gives its first SAMPLE_VALUES rows, of
    each column's kind as the profile reads it."""
    from cataloger_dagster.core.models import TableProfile

    with duckdb.connect(str(db), read_only=True) as con:
        columns = [(c, t) for c, t, *_ in con.execute(f"DESCRIBE {table}").fetchall() if c != "id"]
        rows = con.execute(f"SELECT {', '.join(c for c, _ in columns)} FROM {table} ORDER BY id "
                           f"LIMIT {SAMPLE_VALUES}").fetchall()
    kinds = {c: "float" if t == "DOUBLE" else "string" for c, t in columns}
    sampled = [ColumnValues(c, kinds[c], [r[i] for r in rows]) for i, (c, _) in enumerate(columns)]
    found = classify(sampled, table)
    cols = [ColumnProfile.model_construct(name=c, kind=kinds[c], sensitive=found.get(c, [])) for c, _ in columns]
    return TableProfile.model_construct(database=f"{table}.duckdb", table=table, columns=cols)


def test_every_class_is_confirmed_on_a_real_column_and_refuted_where_only_the_first_values_hold_it(
        people_db, tmp_path):
    profile = _classified(people_db, "people")
    issues = class_hypotheses(profile, today=dt.date(2026, 1, 1))
    by = {(i.affectedColumns[0], i.details["data_class"]): i for i in issues}
    for data_class, real, changed, _ in PEOPLE_CLASSES:  # the classifier, on the first rows, gives both
        assert (real, data_class) in by and (changed, data_class) in by, (data_class, sorted(by))
    found = run_checks(people_db, "people", issues, tmp_path)
    verdicts = {(c, k): found[by[(c, k)].id]["verdict"] for k, real, changed, _ in PEOPLE_CLASSES
                for c in (real, changed)}
    assert verdicts == {(c, k): "confirmed" if c == real else "refuted" for k, real, changed, _ in PEOPLE_CLASSES
                        for c in (real, changed)}
    for data_class, real, changed, _ in PEOPLE_CLASSES:
        e = found[by[(changed, data_class)].id]["evidence"]
        assert e["sampled"] > 10 * SAMPLE_VALUES and e["valid"] < 0.1 * e["sampled"], (data_class, e)
    # no value in clear: the evidence is counts and shares
    printed = json.dumps(found)
    first = _people_values(4_321, "123456782")
    for value in [*first.values(), "ORD-", "ACME-", "pending", "not given"]:
        assert str(value) not in printed, value
