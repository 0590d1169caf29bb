"""Which rules between columns are worth a test, chosen from the profile: bounded, every kind heard."""

from __future__ import annotations

import random

import ibis.expr.datatypes as dt

from cataloger_dagster.core.issues import rule_candidates as rc


def _candidates(tables, name):
    return rc.candidates(tables.profile(name), dict(tables.con.table(name).schema().items()))


def test_order_words_pair_names_that_differ_by_one_of_them():
    assert rc.order_hint("temp_min", "temp_max") and rc.order_hint("MaxPrice", "MinPrice")
    assert rc.order_hint("start_date", "end_date") and rc.order_hint("year_from", "year_to")
    assert not rc.order_hint("first_name", "surname") and not rc.order_hint("min_temp", "max_wind")
    assert not rc.order_hint("temp_min", "temp_min")


def test_the_rounding_step_is_read_from_the_values_the_profile_holds(tables):
    tables.rows("steps", "cents DOUBLE, tenths DOUBLE, raw DOUBLE, n INTEGER, d DECIMAL(10, 3)",
                [(i + 0.25, i + 0.5, i / 7, i, i) for i in range(1, 60)])
    profile = tables.profile("steps")
    schema = dict(tables.con.table("steps").schema().items())
    step = {cp.name: rc.rounding_step(cp, schema[cp.name], profile.sample_rows) for cp in profile.columns}
    assert step == {"cents": 0.01, "tenths": 0.1, "raw": 0.0, "n": 1.0, "d": 0.001}
    assert rc.rounding_step(profile.column("n"), dt.float64, [{"n": 3.0}]) == 1.0


def test_a_wide_table_of_alike_measures_is_bounded_and_its_true_rules_are_kept(tables):
    rng = random.Random(1)
    width = 60
    rows = []
    for i in range(300):
        qty, price = rng.randint(1, 9), round(rng.uniform(1, 50), 2)
        inches = round(rng.uniform(10, 80), 1)
        # measures of alike means: their sums coincide with others' means over and over
        rows.append((qty, price, round(qty * price, 2), inches, round(inches * 2.54, 2),
                     *(round(100 + (k % 7) * 10 + rng.uniform(-20, 20), 2) for k in range(width))))
    columns = ["qty INTEGER", "unit_price DOUBLE", "line_amount DOUBLE", "length_in DOUBLE", "length_cm DOUBLE",
               *(f"m{k} DOUBLE" for k in range(width))]
    tables.rows("wide", ", ".join(columns), rows)
    found = _candidates(tables, "wide")
    assert len(found) == rc.MAX_CANDIDATES
    assert sum(c.kind == "sum" for c in found) > rc.MAX_CANDIDATES // 2   # coincidences there are
    kept = {(c.kind, c.result, c.operands) for c in found}
    assert ("product", "line_amount", ("qty", "unit_price")) in kept
    assert ("multiple", "length_cm", ("length_in",)) in kept


def test_copies_identifiers_calendar_parts_and_constants_propose_nothing(tables):
    rows = [(i, i + 1, 2000 + i % 20, i % 20, 5.0, i * 1.5, i * 1.5) for i in range(100)]
    tables.rows("odd", "parent_id INTEGER, child_id INTEGER, year INTEGER, offset_years INTEGER, fee DOUBLE, "
                       "amount DOUBLE, amount_copy DOUBLE", rows)
    found = _candidates(tables, "odd")
    used = {c for cand in found for c in cand.columns}
    assert not used & {"parent_id", "child_id", "year", "fee"}
    # a column and its copy: one of them is tested, never a rule between the two
    assert not {"amount", "amount_copy"} <= used


def test_every_pair_of_dates_is_tested_for_an_order(tables):
    tables.rows("trips", "booked_on DATE, left_on DATE, back_on DATE",
                [(f"2024-01-{d:02d}", f"2024-02-{d:02d}", f"2024-03-{d:02d}") for d in range(1, 29)])
    found = _candidates(tables, "trips")
    assert {(c.result, c.operands[0]) for c in found if c.kind == "order"} == {
        ("booked_on", "left_on"), ("booked_on", "back_on"), ("left_on", "back_on")}
