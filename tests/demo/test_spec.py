"""demo/spec.py: the list of planted defects, the answer key written from it, and its lookups.

The answer key on disk must be the spec; each defect must be well-formed and its `measure` must
name real columns of the demo database and run there.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from cataloger_dagster.core.models import ISSUE_TYPES
from cataloger_dagster.demo import ANSWER_KEY_PATH, answer_key, load_answer_key
from cataloger_dagster.demo.spec import CLEAN_TABLES, DEFECTS, TABLE_ROWS, rate, rows, write_answer_key

TABLES = {"countries", "products", "customers", "orders", "order_items", "web_events"}


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


def test_lookups_find_a_defect_by_any_of_its_columns():
    assert rate("customers", "missing_values", "phone") == 0.065
    assert rate("web_events", "missing_values", "referrer") == 0.65
    assert rows("orders", "out_of_range", "order_date") == 12
    # duplicate_rows spans four columns: each finds it
    assert rate("order_items", "duplicate_rows", "order_id") == rate("order_items", "duplicate_rows", "unit_price")
    with pytest.raises(KeyError, match="no planted defect outliers on customers.phone"):
        rate("customers", "outliers", "phone")
    # a defect of a fixed count has no rate, and the other way round
    with pytest.raises(KeyError):
        rate("orders", "outliers", "total_amount")
    with pytest.raises(KeyError):
        rows("customers", "missing_values", "phone")


@pytest.mark.parametrize("defect", DEFECTS, ids=lambda d: f"{d['table']}-{d['type']}-{d['columns'][0]}")
def test_every_defect_is_well_formed(defect):
    assert defect["table"] in TABLE_ROWS and defect["table"] not in CLEAN_TABLES
    assert defect["type"] in ISSUE_TYPES and defect["columns"] and defect["note"]
    assert ("rate" in defect) != ("rows" in defect), "a defect has a rate or a count, not both"
    if "rate" in defect:
        assert 0 < defect["rate"] <= 1
    else:
        assert isinstance(defect["rows"], int) and defect["rows"] > 0
    assert defect["table"] in defect["measure"]


def test_defects_are_unique_per_table_type_and_column():
    seen = [(d["table"], d["type"], c) for d in DEFECTS for c in d["columns"]]
    assert len(seen) == len(set(seen))


def test_every_defect_names_real_columns_and_its_measure_runs(demo_db):
    with duckdb.connect(str(demo_db), read_only=True) as con:
        columns = set(con.execute("SELECT table_name, column_name FROM information_schema.columns").fetchall())
        for defect in DEFECTS:
            for column in defect["columns"]:
                assert (defect["table"], column) in columns, defect
            (count,) = con.execute(defect["measure"]).fetchone()
            assert isinstance(count, int) and count > 0, defect


def test_write_and_load_answer_key_round_trip(tmp_path):
    path = write_answer_key(tmp_path / "key.json")
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert load_answer_key(path) == json.loads(json.dumps(answer_key()))
    key = load_answer_key(path)
    assert key["tables"]["countries"] == {"clean": True, "base_rows": None}
    assert key["tables"]["web_events"] == {"clean": False, "base_rows": 250_000}
    assert len(key["defects"]) == len(DEFECTS)
