"""The demo database: deterministic, big enough, and holding every defect its key lists."""

from __future__ import annotations

import json

import duckdb
import pytest

from cataloger_dagster.demo import ANSWER_KEY_PATH, answer_key, create_demo_database, load_answer_key
from cataloger_dagster.demo.spec import DEFECTS
from cataloger_dagster.core.models import ISSUE_TYPES

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


def test_answer_key_file_is_the_spec():
    on_disk = load_answer_key()
    assert on_disk == json.loads(json.dumps(answer_key())), (
        f"{ANSWER_KEY_PATH} is stale: regenerate it with "
        "python -c 'from cataloger_dagster.demo.spec import write_answer_key; write_answer_key()'")
    assert set(on_disk["tables"]) == TABLES
    clean = [t for t, meta in on_disk["tables"].items() if meta["clean"]]
    assert clean, "the key must name at least one clean table"
    assert not {d["table"] for d in on_disk["defects"]} & set(clean)


def test_answer_key_covers_every_issue_type():
    assert {d["type"] for d in DEFECTS} == set(ISSUE_TYPES)
    severities = {d["rate"] for d in DEFECTS if d["type"] == "missing_values"}
    assert any(r > 0.5 for r in severities) and any(0.2 <= r <= 0.5 for r in severities) \
        and any(r < 0.2 for r in severities)


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
