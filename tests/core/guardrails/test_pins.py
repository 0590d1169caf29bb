from datetime import datetime, timedelta

import ibis

from cataloger_dagster.core.guardrails import pins
from cataloger_dagster.core.models import ColumnProfile, Fingerprint, TableProfile, ValueCount


def _profile(columns, rows=100, max_updated=None):
    return TableProfile(database="d", table="t", row_count=rows, column_count=len(columns), columns=columns,
                        sample_rows=[], fingerprint=Fingerprint(schema_hash="h", row_count=rows, update_column="at",
                                                                max_updated=max_updated, value="v"))


def _col(name, kind="string", **fields):
    base = dict(dtype="string", count=100, nulls=0, null_fraction=0.0)
    return ColumnProfile(name=name, kind=kind, **{**base, **fields})


T = ibis.table({"order_id": "int64", "status": "string", "at": "timestamp"}, name="t")


def test_a_key_is_distinct_present_and_named_like_one():
    key = _col("order_id", "integer", dtype="int64", distinct=100)
    assert pins.key_column(_profile([key])) == "order_id"
    assert pins.key_column(_profile([_col("price", "float", distinct=100)])) is None  # not named as a key
    assert pins.key_column(_profile([key.model_copy(update={"distinct_approximate": True})])) is None


def test_a_category_is_pinned_only_when_its_values_are_a_closed_list():
    facts = pins.Facts(T, "duckdb", _profile([]))
    closed = _col("status", top_values=[ValueCount(value="a", count=60), ValueCount(value="b", count=40)])
    assert pins.accepted_values(facts, closed).high == 0
    once = closed.model_copy(update={"top_values": [ValueCount(value="a", count=99), ValueCount(value="b", count=1)]})
    assert pins.accepted_values(facts, once) is None  # a value seen once is no category yet
    open_ = closed.model_copy(update={"top_values": [ValueCount(value="a", count=60)]})
    assert pins.accepted_values(facts, open_) is None  # the top list does not hold every row


def test_freshness_needs_two_waits_between_updates_to_know_the_usual_one():
    start = datetime(2026, 11, 1)
    stamps = [(start + timedelta(hours=h)).isoformat() for h in (0, 6, 8)]
    history = [_profile([], max_updated=s) for s in stamps[:2]]
    assert pins.freshness(pins.Facts(T, "duckdb", _profile([], max_updated=stamps[1]), history[:1])) is None
    g = pins.freshness(pins.Facts(T, "duckdb", _profile([], max_updated=stamps[2]), history))
    assert g is not None and g.high == 2 * 6 * 3600 and g.measure == "seconds"


def test_a_format_allows_the_values_of_another_format_it_holds_now_plus_a_tenth():
    facts = pins.Facts(T, "duckdb", _profile([]))
    mostly = _col("status", semantic_type="email", count=1000, pattern_counts={"email": 900, "phone": 0})
    g = pins.pattern(facts, mostly)
    assert g.high == 110 and "100 of another format now" in g.why
    clean = mostly.model_copy(update={"pattern_counts": {"email": 1000}})
    assert pins.pattern(facts, clean).high == 0
    assert pins.pattern(pins.Facts(T, "sqlite", _profile([])), clean) is None  # no regular expressions there
