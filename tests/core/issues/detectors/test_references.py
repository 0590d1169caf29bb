"""References found from values: any names, text codes against integer keys, verified exactly."""

from __future__ import annotations

import duckdb
import pytest

from cataloger_dagster.core.issues.detectors import references
from cataloger_dagster.core.issues.detectors.references import key_profile, orphan_references
from cataloger_dagster.core.models import Degradation

# FIPS codes of a few states' counties: state * 1000 + county
FIPS = [s * 1000 + c for s in (1, 2, 4, 5, 6, 8, 9, 10) for c in range(1, 140, 2)]


def _species(tables, orphans: list[str]) -> int:
    tables.rows("counties", "id BIGINT, name VARCHAR, rate DOUBLE",
                [(f, f"county {f}", f / 1e5) for f in FIPS])
    codes = [f"{f:05d}" for f in FIPS[::2]] + orphans
    rows = [(i, codes[i % len(codes)], ["bird", "fish", "mammal"][i % 3]) for i in range(1500)]
    tables.rows("species", "species_id INTEGER, county_id VARCHAR, kind VARCHAR", rows)
    return sum(1 for _, code, _ in rows if code in orphans)


@pytest.mark.parametrize("stored_profiles", [False, True], ids=["queried", "from-profiles"])
def test_text_county_codes_against_integer_ids(tables, stored_profiles):
    orphan_rows = _species(tables, ["03001", "07005", "99999"])
    ctx = tables.context("species", catalog=True, profiles=stored_profiles)
    found = orphan_references(ctx, *_col(tables, "species", "county_id"))
    assert found is not None
    assert found.details["references"] == "counties.id" and found.details["match"] == "digits"
    assert found.details["missing_values"] == 3 and found.affectedRows == orphan_rows
    assert found.details["examples"] == ["03001", "07005", "99999"]
    assert "text codes against numbers" in found.description


def test_text_codes_against_integer_ids_leave_their_placeholder_out(tables):
    # 'Unknown' for a county no one recorded is a placeholder, not a county missing from counties
    orphan_rows = _species(tables, ["03001", "Unknown"])
    found = orphan_references(tables.context("species", catalog=True), *_col(tables, "species", "county_id"))
    assert found is not None and found.details["match"] == "digits"
    assert found.details["missing_values"] == 1 and found.details["examples"] == ["03001"]
    assert found.affectedRows == orphan_rows // 2


def test_a_clean_text_code_reference_is_no_issue(tables):
    _species(tables, [])
    ctx = tables.context("species", catalog=True)
    assert orphan_references(ctx, *_col(tables, "species", "county_id")) is None


def _flights(tables, dests: list[str]) -> None:
    faa = [f"{a}{b}{c}" for a in "ABDE" for b in "ACLMS" for c in "BFKOW"]     # 100 airports
    tables.rows("airports", "faa VARCHAR, name VARCHAR, lat DOUBLE, lon DOUBLE",
                [(f, f"{f} Regional", 30 + i / 10, -90 - i / 10) for i, f in enumerate(faa)])
    rows = [(i, ["EWR", "JFK", "LGA"][i % 3], (faa[:60] + dests)[i % (60 + len(dests))], i % 24)
            for i in range(2000)]
    tables.rows("flights", "flight_id INTEGER, origin VARCHAR, dest VARCHAR, hour INTEGER", rows)


def test_destinations_against_airport_codes_with_another_name(tables):
    _flights(tables, ["SJU", "BQN", "STT", "PSE"])      # the four not in the airports table
    found = orphan_references(tables.context("flights", catalog=True), *_col(tables, "flights", "dest"))
    assert found is not None and found.details["references"] == "airports.faa"
    assert found.details["match"] == "equal"
    assert found.details["examples"] == ["BQN", "PSE", "SJU", "STT"]
    assert found.affectedRows == sum(1 for i in range(2000) if i % 64 >= 60)


def test_too_little_overlap_is_no_reference(tables):
    # origin's three airports are not among the keys: no reference, so no orphans
    _flights(tables, [])
    ctx = tables.context("flights", catalog=True)
    assert orphan_references(ctx, *_col(tables, "flights", "origin")) is None
    assert orphan_references(ctx, *_col(tables, "flights", "dest")) is None


def test_an_hour_is_never_a_reference_to_an_id(tables):
    tables.sql("CREATE TABLE stations AS SELECT i AS id, 'station ' || i AS name FROM range(1, 41) r(i)")
    tables.sql("CREATE TABLE readings AS SELECT i AS reading_id, i % 24 AS hour, 1 + i % 12 AS month, "
               "i % 30 AS minutes_late FROM range(3000) r(i)")
    ctx = tables.context("readings", catalog=True)
    for column in ("hour", "month", "minutes_late"):
        assert orphan_references(ctx, *_col(tables, "readings", column)) is None, column


def test_measurements_written_as_text_never_reference_a_row_number(tables):
    # a column of small numbers stored as text (an 'NA' made it text) falls inside any table's
    # row numbers 1..N by chance, as an integer hour does; codes whose name points to the table
    # still match on their digits
    tables.sql("CREATE TABLE visits AS SELECT i AS rownames, 'visit ' || i AS note FROM range(1, 401) r(i)")
    tables.sql("CREATE TABLE patients AS SELECT i AS patient_no, "
               "CASE WHEN i % 50 = 0 THEN 'NA' ELSE CAST(40 + i % 300 AS VARCHAR) END AS weight, "
               "CASE WHEN i % 40 = 0 THEN '999' ELSE CAST(1 + i % 399 AS VARCHAR) END AS visits_rownames "
               "FROM range(1, 1001) r(i)")
    ctx = tables.context("patients", catalog=True)
    assert orphan_references(ctx, *_col(tables, "patients", "weight")) is None
    found = orphan_references(ctx, *_col(tables, "patients", "visits_rownames"))
    assert found is not None and found.details["references"] == "visits.rownames"
    assert found.details["match"] == "digits" and found.details["examples"] == ["999"]


def test_a_tables_own_id_is_not_a_reference(tables):
    tables.sql("CREATE TABLE customers AS SELECT i AS id FROM range(1, 91) r(i)")
    tables.sql("CREATE TABLE orders AS SELECT i AS id, 1 + i % 90 AS customer_id FROM range(1, 101) r(i)")
    ctx = tables.context("orders", catalog=True)
    assert orphan_references(ctx, *_col(tables, "orders", "id")) is None
    assert orphan_references(ctx, *_col(tables, "orders", "customer_id")) is None


def test_integer_key_against_integer_key_with_orphans(tables):
    tables.sql("CREATE TABLE planes AS SELECT 1000 + i AS plane_key, 'N' || i AS tailnum FROM range(300) r(i)")
    tables.sql("CREATE TABLE flights AS SELECT i AS flight_id, "
               "CASE WHEN i % 20 = 0 THEN 5000 + i % 7 ELSE 1000 + i % 300 END AS aircraft_id "
               "FROM range(3000) r(i)")
    found = orphan_references(tables.context("flights", catalog=True), *_col(tables, "flights", "aircraft_id"))
    assert found is not None and found.details["references"] == "planes.plane_key"
    assert found.affectedRows == 150 and found.details["missing_values"] == 7


def test_tail_numbers_against_planes_with_the_same_name(tables):
    tails = [f"N{100 + i}UA" for i in range(400)]
    tables.rows("planes", "tailnum VARCHAR, year INTEGER", [(t, 1990 + i % 20) for i, t in enumerate(tails)])
    flown = tails[:300] + [f"N{900 + i}AA" for i in range(40)]       # 40 of 340 flown planes not listed
    tables.rows("flights", "flight_id INTEGER, tailnum VARCHAR",
                [(i, flown[i % len(flown)]) for i in range(3400)])
    found = orphan_references(tables.context("flights", catalog=True), *_col(tables, "flights", "tailnum"))
    assert found is not None and found.details["references"] == "planes.tailnum"
    assert found.details["missing_values"] == 40 and found.affectedRows == 400


def test_a_placeholder_with_no_match_is_an_unknown_reference_not_an_orphan(tables):
    # 'NA' for an unknown plane is the placeholder finding's rows: the orphans are the 40 unlisted planes
    tails = [f"N{100 + i}UA" for i in range(400)]
    tables.rows("planes", "tailnum VARCHAR, year INTEGER", [(t, 1990 + i % 20) for i, t in enumerate(tails)])
    flown = tails[:300] + [f"N{900 + i}AA" for i in range(40)] + ["NA"] * 20
    tables.rows("flights", "flight_id INTEGER, tailnum VARCHAR",
                [(i, flown[i % len(flown)]) for i in range(3600)])
    found = orphan_references(tables.context("flights", catalog=True), *_col(tables, "flights", "tailnum"))
    assert found is not None and found.details["references"] == "planes.tailnum"
    assert found.details["missing_values"] == 40 and found.affectedRows == 400
    assert "NA" not in found.details["examples"]


def test_a_reference_whose_only_unmatched_value_is_a_placeholder_is_clean(tables):
    tails = [f"N{100 + i}UA" for i in range(400)]
    tables.rows("planes", "tailnum VARCHAR, year INTEGER", [(t, 1990 + i % 20) for i, t in enumerate(tails)])
    flown = tails[:300] + ["NA"] * 30
    tables.rows("flights", "flight_id INTEGER, tailnum VARCHAR",
                [(i, flown[i % len(flown)]) for i in range(3300)])
    assert orphan_references(tables.context("flights", catalog=True), *_col(tables, "flights", "tailnum")) is None


def test_an_unmatched_code_that_reads_like_a_placeholder_in_a_code_column_stays_an_orphan(tables):
    # in a region code column 'NA' is North America, a code with no match like 'NOR'; 'UNKNOWN' is a placeholder
    codes = [f"{a}{b}{c}" for a in "BCDFG" for b in "AEIOU" for c in "LMNRS"][:100]
    tables.rows("regions", "code VARCHAR, name VARCHAR", [(c, f"region {c}") for c in codes])
    used = codes[:80] + ["NOR", "NA", "UNKNOWN"]
    tables.rows("sales", "sale_id INTEGER, region VARCHAR", [(i, used[i % len(used)]) for i in range(830)])
    found = orphan_references(tables.context("sales", catalog=True), *_col(tables, "sales", "region"))
    assert found is not None and found.details["missing_values"] == 2
    assert found.details["examples"] == ["NA", "NOR"] and found.affectedRows == 20


def test_no_catalog_no_reference(tables):
    _species(tables, ["99999"])
    assert orphan_references(tables.context("species"), *_col(tables, "species", "county_id")) is None


def _col(tables, table: str, column: str):
    cp = next(c for c in tables.profile(table).columns if c.name == column)
    return cp, tables.con.table(table).schema()[column]


def test_a_stored_profile_of_a_large_table_has_its_near_unique_columns_counted(tables):
    # above 200,000 rows a profile's distinct counts are approximate: a key is then counted exactly
    tables.sql("CREATE TABLE accounts AS SELECT 700000 + i AS account_no FROM range(250000) r(i)")
    tables.sql("CREATE TABLE payments AS SELECT 700000 + (i * 7919) % 250500 AS account_no, i AS cents "
               "FROM range(3000) r(i)")
    stored = tables.profile("accounts").columns[0]
    assert stored.distinct_approximate
    found = orphan_references(tables.context("payments", catalog=True, profiles=True),
                              *_col(tables, "payments", "account_no"))
    missing = sum(1 for i in range(3000) if (i * 7919) % 250500 >= 250000)
    assert found.details["references"] == "accounts.account_no" and found.affectedRows == missing


def test_a_key_of_a_stored_profile_that_the_table_no_longer_has_is_not_verified(tables):
    _species(tables, ["99999"])
    profiles = {"counties": tables.profile("counties")}
    tables.sql("ALTER TABLE counties RENAME COLUMN id TO fips")
    ctx = tables.context("species", catalog=True)
    ctx.profiles = profiles   # as stored before the rename
    assert orphan_references(ctx, *_col(tables, "species", "county_id")) is None


def test_a_key_column_its_stored_profile_could_not_read_is_counted_in_the_database(tables):
    orphan_rows = _species(tables, ["99999"])
    stored = tables.profile("counties")
    ident = next(cp for cp in stored.columns if cp.name == "id")
    ident.count, ident.distinct, ident.min, ident.max = 0, None, None, None
    stored.degradations.append(Degradation(stage="profile", column="id", reason="distinct count could not be computed"))
    ctx = tables.context("species", catalog=True)
    ctx.profiles = {"counties": stored}
    found = orphan_references(ctx, *_col(tables, "species", "county_id"))
    assert found.details["references"] == "counties.id" and found.affectedRows == orphan_rows


def test_one_run_finds_each_tables_keys_once(tables):
    # In one run over the tables, counties' keys are counted by the first search that needs them;
    # when counties' other column then breaks (every query touching it fails), a later search
    # still verifies against counties.id alone.  Outside a run it must count every column again.
    orphan_rows = _species(tables, ["99999"])
    tables.sql("CREATE TABLE sightings AS SELECT * FROM species")
    run: dict = {}   # what the tables of one run share
    first = orphan_references(tables.context("species", catalog=True, shared=run), *_col(tables, "species", "county_id"))
    tables.sql("ALTER TABLE counties RENAME TO counties_data")
    tables.sql("CREATE VIEW counties AS SELECT id, CAST(CAST(name AS INTEGER) AS VARCHAR) AS name, rate "
               "FROM counties_data")
    later = orphan_references(tables.context("sightings", catalog=True, shared=run),
                              *_col(tables, "sightings", "county_id"))
    assert first.affectedRows == later.affectedRows == orphan_rows
    assert later.details["references"] == "counties.id"
    # counting counties' keys again reads the broken column: the search says which table it could not read
    with pytest.raises(references.UnreadableTable, match="table 'counties' could not be read") as raised:
        orphan_references(tables.context("sightings", catalog=True), *_col(tables, "sightings", "county_id"))
    assert isinstance(raised.value.__cause__, duckdb.Error)


def test_a_key_profile_gives_the_search_the_keys_of_the_whole_profile(tables):
    # what quality_issues stores for the other tables' searches: the same keys, without the
    # distributions, and a column the profile could not count still counted in the database
    _species(tables, ["99999"])
    full = tables.profile("counties")
    ident = next(cp for cp in full.columns if cp.name == "id")
    ident.count, ident.distinct = 0, None
    full.degradations.append(Degradation(stage="profile", column="id", reason="distinct count could not be computed"))
    slim = key_profile(full)
    assert [cp.name for cp in slim.columns] == ["id", "name"]   # rate, a double, is never a key
    assert not slim.sample_rows and all(cp.top_values is None and cp.histogram is None for cp in slim.columns)
    keys = {}
    for label, stored in (("full", full), ("slim", slim)):
        ctx = tables.context("species", catalog=True)
        ctx.profiles = {"counties": stored}
        keys[label] = references._keys_of(ctx, "counties")
        found = orphan_references(ctx, *_col(tables, "species", "county_id"))
        assert found.details["references"] == "counties.id", label
    assert keys["slim"] == keys["full"] and {k.column for k in keys["full"]} == {"id", "name"}


def test_unrelated_hash_keys_are_ruled_out_by_a_sample_without_pulling_them(tables):
    # sessions of three sites: 32-character keys of one length and range, none shared (more
    # than one candidate: a lone key of a few thousand values is pulled outright, as cheap)
    for site in ("web", "app", "shop"):
        tables.sql(f"CREATE TABLE {site}_sessions AS SELECT md5('{site}' || i) AS session_key, i % 60 AS seconds "
                   "FROM range(400) r(i)")
    ctx = tables.context("web_sessions", catalog=True)
    cp, dtype = _col(tables, "web_sessions", "session_key")
    candidates = [key for key, _ in references._candidates(ctx, cp, dtype)]
    assert [(k.table, k.column) for k in candidates] == [("app_sessions", "session_key"),
                                                         ("shop_sessions", "session_key")]
    assert orphan_references(ctx, cp, dtype) is None
    assert references._sampled_misses(ctx, cp, candidates) == set(candidates)
    assert not [k for k in ctx.shared if k[0] == "key values"]   # ruled out without pulling a key
    # the same keys, a few of the values missing: the sample finds keys, and the exact count decides
    tables.sql("CREATE TABLE app_visits AS SELECT CASE WHEN i % 50 = 0 THEN md5('lost' || i) "
               "ELSE md5('app' || (i % 400)) END AS visit_session FROM range(2000) r(i)")
    ctx = tables.context("app_visits", catalog=True)
    found = orphan_references(ctx, *_col(tables, "app_visits", "visit_session"))
    assert found.details["references"] == "app_sessions.session_key" and found.affectedRows == 40
    assert ("key values", "app_sessions.session_key") in ctx.shared


def test_the_sample_is_looked_up_in_keys_of_any_nullability_in_one_query(tables):
    # a NOT NULL key column and a nullable one under one name: their types differ in ibis
    # (!string and string), and a union of the two would be refused without a cast
    tables.sql("CREATE TABLE web_sessions (session_key VARCHAR NOT NULL, seconds INTEGER)")
    tables.sql("INSERT INTO web_sessions SELECT md5('web' || i), i % 60 FROM range(400) r(i)")
    tables.sql("CREATE TABLE app_sessions AS SELECT md5('app' || i) AS session_key, i % 60 AS seconds "
               "FROM range(400) r(i)")
    tables.sql("CREATE TABLE app_visits AS SELECT CASE WHEN i % 50 = 0 THEN md5('lost' || i) "
               "ELSE md5('app' || (i % 400)) END AS visit_session FROM range(2000) r(i)")
    ctx = tables.context("app_visits", catalog=True)
    cp, dtype = _col(tables, "app_visits", "visit_session")
    candidates = [key for key, _ in references._candidates(ctx, cp, dtype)]
    assert {(k.table, k.column) for k in candidates} == {("app_sessions", "session_key"),
                                                          ("web_sessions", "session_key")}
    assert {(k.table, k.column) for k in references._sampled_misses(ctx, cp, candidates)} == \
        {("web_sessions", "session_key")}   # the app's keys hold the sample, the web's none of it
    found = orphan_references(ctx, cp, dtype)
    assert found.details["references"] == "app_sessions.session_key" and found.affectedRows == 40


def test_a_lone_small_candidate_key_is_counted_without_a_sample(tables, monkeypatch):
    # one key of a few thousand values: pulled and counted at once, no sample looked up first
    _flights(tables, ["SJU", "BQN", "STT"])
    ctx = tables.context("flights", catalog=True)
    cp, dtype = _col(tables, "flights", "dest")
    assert len(ctx.values(cp)) > references.SAMPLED_VALUES

    def no_sample_query(*tables, **kw):
        raise AssertionError("a sample was looked up")
    monkeypatch.setattr(references.ibis, "union", no_sample_query)
    found = orphan_references(ctx, cp, dtype)
    assert found.details["references"] == "airports.faa" and found.details["missing_values"] == 3
    assert ctx.cache[("sampled misses", "dest")] == set()
    assert ("key values", "airports.faa") in ctx.shared


def _buyers(tables) -> None:
    # two integer keys in one range, neither named like the column: customers holds every
    # buyer but three, vendors (the odd numbers) only half of them
    tables.sql("CREATE TABLE customers AS SELECT (5001 + i)::INTEGER AS customer_id, 'c' || i AS name "
               "FROM range(400) r(i)")
    tables.sql("CREATE TABLE vendors AS SELECT (5001 + 2 * i)::INTEGER AS vendor_id, 'v' || i AS name "
               "FROM range(400) r(i)")
    tables.sql("CREATE TABLE orders AS SELECT CASE WHEN i < 3 THEN 9001 + i ELSE 5001 + i % 400 END AS buyer_id, "
               "i % 7 AS qty FROM range(2000) r(i)")


def test_keys_that_cannot_be_pulled_are_counted_together_and_the_unrelated_left_out(tables):
    _buyers(tables)
    ctx = tables.context("orders", catalog=True)
    cp, dtype = _col(tables, "orders", "buyer_id")
    candidates = [key for key, _ in references._candidates(ctx, cp, dtype)]
    assert {(k.table, k.column) for k in candidates} == {("customers", "customer_id"), ("vendors", "vendor_id")}
    excluded = references._excluded_together(ctx, cp, candidates)
    assert {(k.table, k.column) for k in excluded} == {("vendors", "vendor_id")}
    found = orphan_references(ctx, cp, dtype)
    assert found.details["references"] == "customers.customer_id" and found.details["missing_values"] == 3


def test_a_count_together_that_fails_leaves_each_key_to_its_own_verification(tables, monkeypatch):
    _buyers(tables)

    def failing(*args):
        raise RuntimeError("the database refused the query")
    monkeypatch.setattr(references, "_too_few_matched", failing)
    ctx = tables.context("orders", catalog=True)
    cp, dtype = _col(tables, "orders", "buyer_id")
    found = orphan_references(ctx, cp, dtype)
    assert ctx.cache[("excluded together", "buyer_id")] == set()
    assert found.details["references"] == "customers.customer_id" and found.details["missing_values"] == 3


def test_a_table_that_cannot_be_read_is_named_in_the_degradation_and_read_once(tables, monkeypatch):
    """The search over the other tables is incomplete when one of them cannot be read: the check
    says so, naming that table (not the database's text), and the table is tried once per run."""
    _flights(tables, ["SJU"])
    tables.sql("CREATE VIEW broken AS SELECT range AS id, CASE WHEN range > 3 THEN error('secret 4111') END AS x "
               "FROM range(10)")
    tried = []
    find_keys = references._find_keys

    def counting(ctx, name):
        tried.append(name)
        return find_keys(ctx, name)

    monkeypatch.setattr(references, "_find_keys", counting)
    degradations: list[Degradation] = []
    tables.detect("flights", catalog=True, degradations=degradations, shared={})
    reasons = {d.column: d.reason for d in degradations if d.stage == "detectors"}
    assert reasons and all("table 'broken' could not be read" in r for r in reasons.values())
    assert not any("secret" in r for r in reasons.values())
    assert tried.count("broken") == 1
