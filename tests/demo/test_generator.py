"""demo/generator.py: the demo database: deterministic, big enough, every defect of the spec in the
data at its rate, defects planted on disjoint rows, and written safely (never over a file, never
half-written).
"""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from cataloger_dagster.demo import create_demo_database
from cataloger_dagster.demo.generator import _ascii, _count, _n, _Picker
from cataloger_dagster.demo.spec import DEFECTS, EMAIL_REGEX, FUTURE_FROM, OUTLIER_FLOOR

TABLES = {"countries", "products", "customers", "orders", "order_items", "web_events"}


@pytest.fixture(scope="module")
def full_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo_full") / "demo.duckdb"
    info = create_demo_database(path)
    return path, info


@pytest.fixture(scope="module")
def small_dbs(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo_small")
    a, b, c = root / "a.duckdb", root / "b.duckdb", root / "c.duckdb"
    create_demo_database(a, scale=0.1)
    create_demo_database(b, scale=0.1)
    create_demo_database(c, scale=0.1, seed=8)
    return a, b, c


def _tables(path) -> dict:
    with duckdb.connect(str(path), read_only=True) as con:
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        return {n: con.execute(f'SELECT * FROM "{n}"').fetch_arrow_table() for n in names}


def _measure(path, sql: str) -> int:
    with duckdb.connect(str(path), read_only=True) as con:
        return int(con.execute(sql).fetchone()[0])


def _rows(path, table: str) -> int:
    return _measure(path, f'SELECT count(*) FROM "{table}"')


def test_two_builds_are_identical_and_the_seed_matters(small_dbs):
    a, b, c = small_dbs
    ta, tb, tc = _tables(a), _tables(b), _tables(c)
    assert set(ta) == TABLES
    for name in TABLES:
        assert ta[name].equals(tb[name]), f"{name} differs between two builds with the same seed"
    assert not ta["customers"].equals(tc["customers"])
    assert not ta["web_events"].equals(tc["web_events"])


def test_sizes_and_returned_description(full_db):
    path, info = full_db
    assert set(info["tables"]) == TABLES
    for name, n in info["tables"].items():
        assert _rows(path, name) == n
    assert info["tables"]["web_events"] >= 200_000
    assert max(info["tables"], key=info["tables"].get) == "web_events"
    assert info["tables"]["order_items"] > info["tables"]["orders"] > info["tables"]["customers"]


def test_smaller_scale_is_smaller(small_dbs, full_db):
    a, _, _ = small_dbs
    path, info = full_db
    assert _rows(a, "web_events") < info["tables"]["web_events"] / 5
    assert _rows(a, "countries") == info["tables"]["countries"]


def test_refuses_to_overwrite(tmp_path):
    target = tmp_path / "existing.duckdb"
    target.write_bytes(b"precious")
    with pytest.raises(FileExistsError, match="existing.duckdb"):
        create_demo_database(target, scale=0.05)
    assert target.read_bytes() == b"precious"
    assert not list(tmp_path.glob("*.partial*"))


def test_bad_scale_is_refused(tmp_path):
    with pytest.raises(ValueError, match="scale"):
        create_demo_database(tmp_path / "x.duckdb", scale=0)
    assert not (tmp_path / "x.duckdb").exists()


@pytest.mark.parametrize("defect", DEFECTS, ids=lambda d: f"{d['table']}-{d['type']}-{d['columns'][0]}")
def test_every_defect_is_in_the_data(full_db, small_dbs, defect):
    for path in (full_db[0], small_dbs[0]):
        n = _rows(path, defect["table"])
        measured = _measure(path, defect["measure"])
        if "rows" in defect:
            assert measured == defect["rows"], f"{path.name}: {defect}"
        else:
            expected = defect["rate"] * n
            assert abs(measured - expected) <= max(2, 0.05 * expected), \
                f"{path.name}: measured {measured} of {n}, expected about {expected:.0f}: {defect}"
        assert measured > 0


def test_clean_table_has_no_defect(full_db):
    path, _ = full_db
    with duckdb.connect(str(path), read_only=True) as con:
        cols = [r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'countries'").fetchall()]
        n = con.execute("SELECT count(*) FROM countries").fetchone()[0]
        assert n >= 20
        for c in cols:
            nulls, distinct = con.execute(f"SELECT count(*) - count({c}), count(DISTINCT {c}) FROM countries").fetchone()
            assert nulls == 0 and distinct > 1, c
        assert con.execute("SELECT count(DISTINCT country_code) FROM countries").fetchone()[0] == n
        assert con.execute("SELECT count(*) FROM countries WHERE country_code <> upper(trim(country_code)) "
                           "OR region <> trim(region) OR vat_rate <= 0 OR vat_rate > 0.3").fetchone()[0] == 0
        # the clean reference is really referenced, without orphans
        assert con.execute("SELECT count(*) FROM customers WHERE country_code NOT IN "
                           "(SELECT country_code FROM countries)").fetchone()[0] == 0


def test_column_types(full_db):
    path, _ = full_db
    with duckdb.connect(str(path), read_only=True) as con:
        types = dict(con.execute("SELECT table_name || '.' || column_name, data_type "
                                 "FROM information_schema.columns").fetchall())
    assert types["products.price_text"] == "VARCHAR"
    assert types["customers.signup_date"] == "VARCHAR"
    assert types["orders.order_date"] == "DATE"
    assert types["web_events.event_time"] == "TIMESTAMP"
    assert types["order_items.quantity"] == "INTEGER"


def test_tiny_scales_keep_each_table_big_enough_for_its_defects(tmp_path):
    info = create_demo_database(tmp_path / "tiny.duckdb", scale=0.0001)
    tables = info["tables"]
    assert tables["countries"] == 30
    assert (tables["products"], tables["customers"], tables["web_events"]) == (40, 200, 2000)
    # 500 orders, plus the re-imported ones under the same order_id
    assert 500 < tables["orders"] < 510 and tables["order_items"] > tables["orders"]
    for defect in DEFECTS:
        assert _measure(tmp_path / "tiny.duckdb", defect["measure"]) > 0, defect


def test_writes_atomically_into_a_new_folder_and_describes_the_result(tmp_path):
    target = tmp_path / "new" / "folder" / "demo.duckdb"
    info = create_demo_database(target, scale=0.05, seed=3)
    assert (info["path"], info["seed"], info["scale"]) == (str(target), 3, 0.05)
    assert sorted(p.name for p in target.parent.iterdir()) == ["demo.duckdb"]  # no .partial, no .wal
    assert {n: _rows(target, n) for n in TABLES} == info["tables"]


def test_planted_defects_do_not_overlap(small_dbs):
    path = small_dbs[0]
    # a doubled order line is never also an orphan or a negative quantity
    assert _measure(path, "SELECT count(*) FROM (SELECT order_id, quantity FROM order_items GROUP BY order_id, "
                          "product_id, quantity, unit_price HAVING count(*) > 1) "
                          "WHERE quantity < 0 OR order_id NOT IN (SELECT order_id FROM orders)") == 0
    assert _measure(path, "SELECT count(*) FROM order_items WHERE quantity < 0 "
                          "AND order_id NOT IN (SELECT order_id FROM orders)") == 0
    # a future order is not also an outlier, an orphan or a status variant
    assert _measure(path, f"SELECT count(*) FROM orders WHERE order_date > DATE '{FUTURE_FROM}' AND "
                          f"(total_amount > {OUTLIER_FLOOR} OR customer_id NOT IN (SELECT customer_id FROM customers) "
                          "OR status NOT IN ('pending', 'shipped', 'delivered', 'cancelled', 'returned'))") == 0
    # an email registered twice is a valid one, so the duplicate is not also a format error
    assert _measure(path, "SELECT count(*) FROM customers WHERE email IN (SELECT email FROM customers GROUP BY "
                          f"email HAVING count(*) > 1) AND NOT regexp_full_match(email, '{EMAIL_REGEX}')") == 0


def test_email_local_parts_are_plain_ascii(small_dbs):
    with duckdb.connect(str(small_dbs[0]), read_only=True) as con:
        emails = [r[0] for r in con.execute("SELECT email FROM customers").fetchall()]
    assert all(e.isascii() and "'" not in e for e in emails)
    assert _ascii("Zoë.O'Brien") == "Zoe.OBrien" and _ascii("Sánchez") == "Sanchez"


def test_picker_hands_out_disjoint_sorted_rows_and_refuses_to_run_out():
    pick = _Picker(np.random.default_rng(1), 10)
    a, b, c = pick.take(3), pick.take(4), pick.take(3)
    assert sorted({*a, *b, *c}) == list(range(10))
    assert list(a) == sorted(a) and list(b) == sorted(b)
    with pytest.raises(ValueError, match="more defects than the table has rows"):
        pick.take(1)


def test_counts_round_with_floors():
    assert _n(600, 0.1, 40) == 60 and _n(600, 0.01, 40) == 40
    assert _count(0.004, 100) == 1  # a defect is never planted zero times
    assert _count(0.065, 1000) == 65
