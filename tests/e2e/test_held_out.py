"""The real-data corpus split in a tuning half and a held-out half (tests/support/realdata/split.py),
scored per half, and the floors the detectors must reach on the tables no one tuned them on.

The split is by a hash of the table's name; tables a detector was tuned on, and tables named in
the report that asked for this evaluation, are in the tuning half whatever their hash. The
floors are on the held-out half: recall of its root causes, precision of the open findings
(debatable ones left out of both sides), no open finding on a clean table, at most one open
finding per root cause. The floor test scores the detectors' output: every finding counts as
open, since running the investigations on the corpus needs a sandbox and minutes per table
(`benchmarks/real_data.py --investigate` scores the open findings).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import realdata
from realdata import split
from realdata.detect import detect_by_database
from realdata.scoring import load_key, open_findings, score, score_by_half

HELD_OUT_FLOORS = {"recall": 0.85, "precision": 0.9}


# --- the split --------------------------------------------------------------------------------

def test_the_split_is_by_the_first_byte_of_the_names_sha256():
    for name in list(realdata.TABLES) + ["a", "h1", "r_anything", "xx_table"]:
        even = hashlib.sha256(name.encode()).digest()[0] % 2 == 0
        assert split.hashed_half(name) == ("held_out" if even else "tuning")
        assert split.hashed_half(name) == split.hashed_half(name)
        if name not in split.TUNED_ON and not split.seen(name):
            assert split.half(name) == split.hashed_half(name), name
    # both outcomes occur, so the test above could fail either way
    assert {split.hashed_half("a"), split.hashed_half("h1")} == {"held_out", "tuning"}


def test_every_table_is_in_exactly_one_half_and_the_moved_ones_are_tables():
    halves = {name: split.half(name) for name in realdata.TABLES}
    assert set(halves.values()) == set(split.HALVES)
    assert set(split.TUNED_ON) <= set(realdata.TABLES)
    assert all(split.half(name) == "tuning" for name in split.TUNED_ON)
    assert all(why.strip() for why in split.TUNED_ON.values()), "each moved table says why"
    # the moved list overrides the hash: penguins hashes to the held-out half
    assert split.hashed_half("penguins") == "held_out" and split.half("penguins") == "tuning"
    assert set(load_key()) == set(realdata.TABLES)


def test_no_table_named_in_the_report_is_held_out():
    for name in split.SEEN:
        for table in (name, f"r_{name}", f"pn_{name}"):
            assert split.half(table) == "tuning", table
    assert not [t for t in realdata.TABLES if split.seen(t) and split.half(t) == "held_out"]
    assert not split.seen("r_whole")           # a name that merely starts like one is not seen


def test_the_held_out_half_is_big_enough_to_measure():
    key = load_key()
    held_out = [t for t in realdata.TABLES if split.half(t) == "held_out"]
    causes = [c for t in held_out for c in key[t].get("root_causes", [])]
    clean = [t for t in held_out if key[t].get("clean")]
    assert len(held_out) >= 15 and len(causes) >= 10 and len(clean) >= 3, (len(held_out), len(causes), len(clean))


# --- the scorer, per half, on hand-made issues -------------------------------------------------

KEY = {
    # "a" hashes to the held-out half, "h1" and "penguins" (moved) to the tuning half
    "a": {
        "root_causes": [
            {"id": "a.na", "columns": ["x"], "kind": "numeric_as_text", "values": ["NA"]},
            {"id": "a.case", "columns": ["name"], "kind": "case_variants"},
        ],
        "debatable": [{"id": "a.missing", "columns": ["x"], "kinds": ["missing_values"]}],
        "extreme_but_true": [{"id": "a.elephant", "columns": ["w"], "values": [6654]}],
    },
    "b": {"clean": True, "checks": []},
    "h1": {"root_causes": [{"id": "h1.dup", "columns": ["k"], "kind": "duplicate_rows"}]},
    "penguins": {"clean": True, "checks": []},
}


def issue(type_: str, *columns: str, id_: str = "", **details) -> dict:
    return {"id": id_, "type": type_, "affectedColumns": list(columns), "affectedRows": 1, "details": details}


def test_each_half_is_scored_on_its_own_tables():
    assert split.half("b") == "held_out"
    found = {
        "a": [issue("numeric_as_text", "x", values={"NA": 3}),   # a.na
              issue("sentinel_values", "x", values={"NA": 3}),   # a.na again: redundant
              issue("missing_values", "x"),                      # debatable: on neither side
              issue("inconsistent_categories", "name"),          # a.case, by a compatible type
              issue("outliers", "w", examples=[6654])],          # a true extreme: false
        "b": [issue("constant_column", "c")],                     # on a clean table: false
        "h1": [issue("duplicate_keys", "k")],                     # h1.dup
        "penguins": [],
    }
    halves = score_by_half(found, KEY)
    held, tuning, total = halves["held_out"], halves["tuning"], halves["all"]
    assert held.recall == 1.0 and {c["id"] for c in held.found} == {"a.na", "a.case"}
    assert held.issues == 6 and held.debatable == 1
    assert held.precision == pytest.approx(3 / 5)
    assert [str(w) for w in held.on_clean] == ["b: constant_column on c, 1 row"]
    assert [str(w) for w in held.on_extremes] == ["a: outliers on w, 1 row"]
    assert [r.type for r in held.redundant] == ["sentinel_values"]
    assert tuning.recall == 1.0 and tuning.precision == 1.0 and tuning.issues == 1 and not tuning.on_clean
    assert total.issues == 7 and total.recall == 1.0


def test_a_missed_cause_counts_in_its_own_half_only():
    halves = score_by_half({"a": [issue("numeric_as_text", "x")]}, KEY)
    assert halves["held_out"].recall == pytest.approx(1 / 2)
    assert halves["tuning"].recall == 0 and [c["id"] for c in halves["tuning"].missed] == ["h1.dup"]
    assert halves["all"].recall == pytest.approx(1 / 3)


def test_an_extreme_but_true_value_is_a_false_finding_only_when_it_is_all_that_is_flagged():
    assert score({"a": [issue("outliers", "w", examples=[6654])]}, KEY).precision == 0
    assert score({"a": [issue("outliers", "w", examples=[6654, 12])]}, KEY).on_extremes == []
    assert score({"a": [issue("outliers", "w")]}, KEY).on_extremes == []


def test_refuted_findings_are_not_open():
    found = {"a": [issue("numeric_as_text", "x", id_="1"), issue("outliers", "w", id_="2", examples=[6654])],
             "b": [issue("constant_column", "c", id_="3")]}
    verdicts = {("a", "1"): "confirmed", ("a", "2"): "refuted", ("b", "3"): "inconclusive"}
    kept = open_findings(found, verdicts)
    assert [i["id"] for i in kept["a"]] == ["1"] and [i["id"] for i in kept["b"]] == ["3"]
    held = score_by_half(kept, KEY)["held_out"]
    assert held.precision == pytest.approx(1 / 2) and len(held.on_clean) == 1 and held.on_extremes == []


# --- the floors on the held-out half ----------------------------------------------------------

@pytest.fixture(scope="module")
def held_out_found(tmp_path_factory, realdata_corpus) -> dict:
    """The findings on the held-out tables, each source catalogued as its own database."""
    held_out = [t for t in realdata.TABLES if split.half(t) == "held_out"]
    return detect_by_database(tmp_path_factory.mktemp("held_out"), held_out, now=realdata.NOW)[0]


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="held-out floors not reached yet: recall 0.55, precision 0.81, "
                                       "2 findings on clean tables, 5 redundant (detector output, 2026-11-27, "
                                       "r_pima_tr2 and r_leinhardt held out in place of r_chile and r_lung)")
def test_the_detectors_reach_the_floors_on_tables_no_one_tuned_them_on(held_out_found):
    held = score_by_half(held_out_found)["held_out"]
    floors_met = (held.recall >= HELD_OUT_FLOORS["recall"] and held.precision >= HELD_OUT_FLOORS["precision"]
                  and not held.on_clean and not held.redundant)
    if not floors_met:
        # the totals only: the misses and false findings are what one would tune on
        pytest.fail("held-out half: " + held.summary().splitlines()[0], pytrace=False)
