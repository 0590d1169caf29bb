"""The personal-data classes of a profiled DuckDB table: validators, names, neighbours, evidence."""

from __future__ import annotations

import json

import duckdb
import ibis
import pytest
from stdnum import luhn

from cataloger_dagster.core.models import Fingerprint
from cataloger_dagster.core.profile.profiling import compute_profile

N = 300
FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus"]


def card(i: int) -> str:
    body = f"4{i:014d}"
    return body + luhn.calc_check_digit(body)


def ssn(i: int) -> str:
    return f"{123 + i % 500:03d}-{10 + i % 80:02d}-{1000 + i:04d}"


def rows() -> list[tuple]:
    out = []
    for i in range(N):
        out.append((
            i + 1,
            f"{FIRST[i % 8].lower()}.{LAST[(i * 3) % 8].lower()}{i}@example.org",
            FIRST[i % 8],
            card(i),
            ssn(i),
            f"AKIA{i:016d}"[:20].replace("0", "Q"),
            51.0 + (i * 7919 % 10000) / 10000.0,
            -0.1 - (i * 104729 % 10000) / 10000.0,
            f"Customer wrote on day {i}: please call me back, my mail is jo{i}@example.net thanks"
            if i % 4 == 0 else f"Delivered to the front desk on day {i} as agreed",
            f"SKU-{i:05d}",
            100000000 + i * 7,
            (i * 37) % 1000 / 10.0,
        ))
    return out


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    path = tmp_path_factory.mktemp("sensitive") / "shop.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(
            "CREATE TABLE customers (customer_id INTEGER, contact VARCHAR, first_name VARCHAR, "
            "card_number VARCHAR, ssn VARCHAR, api_key VARCHAR, home_lat DOUBLE, home_lon DOUBLE, "
            "notes VARCHAR, sku VARCHAR, order_ref BIGINT, amount DOUBLE)"
        )
        con.executemany("INSERT INTO customers VALUES (" + ",".join("?" * 12) + ")", rows())
        con.execute("CREATE TABLE airports (iata VARCHAR, airport_name VARCHAR, latitude DOUBLE, longitude DOUBLE)")
        con.executemany(
            "INSERT INTO airports VALUES (?, ?, ?, ?)",
            [(f"A{i:02d}", f"Field {i}", 40.0 + i * 0.123457, -73.0 - i * 0.654321) for i in range(60)],
        )
    con = ibis.duckdb.connect(str(path), read_only=True)
    fp = lambda n: Fingerprint(schema_hash="x", row_count=n, value="x")
    return (
        compute_profile(con.table("customers"), database="db", table_name="customers", fingerprint=fp(N)),
        compute_profile(con.table("airports"), database="db", table_name="airports", fingerprint=fp(60)),
    )


def classes(prof) -> dict[str, set[str]]:
    return {c.name: {s.name for s in c.sensitive} for c in prof.columns}


def test_each_planted_column_gets_its_class_from_its_values(profile):
    found = classes(profile[0])
    # "contact" names no class: the e-mails prove themselves through email-validator
    assert found["contact"] == {"email"}
    assert found["card_number"] == {"payment_card"}
    assert found["ssn"] == {"national_id"}
    assert found["api_key"] == {"secret"}
    assert found["first_name"] == {"person_name"}
    assert found["home_lat"] == {"geolocation"} and found["home_lon"] == {"geolocation"}


def test_codes_ids_and_measures_are_not_personal(profile):
    found = classes(profile[0])
    assert found["customer_id"] == found["sku"] == found["order_ref"] == found["amount"] == set()


def test_an_airports_coordinates_are_no_persons_location(profile):
    assert all(not c.sensitive for c in profile[1].columns)


def test_free_text_reports_the_classes_inside_it_and_how_often(profile):
    notes = next(c for c in profile[0].columns if c.name == "notes")
    (email,) = notes.sensitive
    assert email.name == "email" and email.in_text
    assert email.matched == email.sampled // 4 + (1 if email.sampled % 4 else 0)
    assert 0.2 <= email.share <= 0.3


def test_evidence_is_a_share_of_masked_values_with_the_signals(profile):
    contact = next(c for c in profile[0].columns if c.name == "contact")
    (email,) = contact.sensitive
    assert email.sampled == min(N, 200) and email.share == 1.0
    assert email.examples and all("@" in e and not any(ch.isalpha() and ch not in "xX" for ch in e) for e in email.examples)
    assert "email-validator" in email.signals
    evidence = json.dumps([s.model_dump() for c in profile[0].columns for s in c.sensitive])
    for planted in (rows()[0][1], card(0), ssn(0), rows()[0][5]):
        assert planted not in evidence


def test_digits_that_validate_by_chance_need_the_columns_name():
    from cataloger_dagster.core.sensitive.classifier import ColumnValues, classify
    from stdnum.nl import bsn

    # nine-digit numbers that all pass the Dutch BSN's 11-proof: an order number as far as digits go
    numbers = [n for n in range(100000000, 100010000) if bsn.is_valid(str(n))][:150]
    assert classify([ColumnValues("order_number", "integer", numbers)]) == {}
    named = classify([ColumnValues("bsn", "integer", numbers)])
    assert [c.name for c in named["bsn"]] == ["national_id"]
