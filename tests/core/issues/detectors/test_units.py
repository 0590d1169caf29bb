"""Mixed units or notations in one text column: one finding with the breakdown by notation and
the values converted to one unit, in place of "numbers stored as text"; nothing on a column of
one notation, on codes, sizes or free text."""

from __future__ import annotations

import random

import pytest

from cataloger_dagster.core.issues.detectors.units import read_quantity

REPLACED_TYPES = {"numeric_as_text", "outliers", "out_of_range", "invalid_format", "inconsistent_categories"}


def _heights() -> list[str]:
    rng = random.Random(4)
    return ([str(rng.randint(150, 195)) for _ in range(1023)] + ["5'4\"", "5'11", "6 ft 1 in"] * 10
            + ["165cm", "170 cm"] * 15 + ["64", "70"] + ["NA"] * 12)


def test_heights_in_feet_inches_centimetres_and_bare_numbers_are_one_finding(tables):
    tables.rows("people", "person INTEGER, height VARCHAR", list(enumerate(_heights())))
    found = tables.detect("people")
    on_height = [i for i in found.values() if "height" in i.affectedColumns]
    assert [i.type for i in on_height] == ["mixed_units"], [i.description for i in on_height]
    issue = on_height[0]
    notations = issue.details["notations"]
    assert {k: v["rows"] for k, v in notations.items()} == {"number without unit": 1025, "cm": 30, "ft+in": 30}
    assert issue.details["unit"] == "cm" and issue.details["dimension"] == "length"
    assert issue.details["converted_examples"]["5'4\""] == pytest.approx(162.56)
    assert issue.details["converted_examples"]["6 ft 1 in"] == pytest.approx(185.42)
    assert issue.details["likely_units_of_bare_numbers"] == {"cm": 1023, "in": 2}
    assert issue.details["placeholders"] == {"NA": 12}
    assert issue.affectedRows == 60 and issue.category == "smart_fixes"   # the bare numbers' unit is a guess
    assert "3 notations" in issue.description and "5'11" in issue.description


def test_a_unit_in_the_columns_name_converts_its_bare_numbers(tables):
    rows = [(i, f"{60 + i % 30}") for i in range(200)] + [(300 + i, f"{150 + i} lb") for i in range(8)] \
        + [(400 + i, f"{70 + i}kg") for i in range(6)]
    tables.rows("patients", "patient INTEGER, weight_kg VARCHAR", rows)
    issue = tables.detect("patients")["patients_mixed_units_weight_kg"]
    assert issue.details["unit"] == "kg" and issue.details["unknown_unit_rows"] == 0
    assert issue.details["converted_examples"]["150 lb"] == pytest.approx(68.0389, abs=1e-3)
    assert issue.details["converted_rows"] == 214 and issue.category == "quick_fixes"


def test_durations_as_hours_and_minutes_and_as_minutes(tables):
    rows = [(i, f"{80 + i % 60} min") for i in range(150)] + [(200 + i, f"1h{10 + i}") for i in range(20)]
    tables.rows("films", "film INTEGER, running_time VARCHAR", rows)
    issue = tables.detect("films")["films_mixed_units_running_time"]
    assert {k: v["rows"] for k, v in issue.details["notations"].items()} == {"min": 150, "h+min": 20}
    assert issue.details["converted_examples"]["1h10"] == 70.0


@pytest.mark.parametrize("values", [
    [f"{60 + i % 40} kg" for i in range(300)],                              # one notation
    [f"{150 + i % 40}cm" for i in range(999)] + ["170"],                     # 99.9% one notation: a typo, not units
    [str(10 + i) for i in range(300)] + ["NA"] * 20,                         # numbers and placeholders
    ["S", "M", "L", "XL", "XXL"] * 60,                                       # sizes
    [f"{c}{i}" for c in "ABCD" for i in range(1, 60)],                       # codes
    [f"Widget {i} kg pack" for i in range(300)],                             # free text with a unit inside
    [f"${5 + i}" for i in range(200)] + [f"{5 + i} EUR" for i in range(20)],  # money is no unit here
])
def test_columns_of_one_notation_or_no_quantity_give_no_mixed_units(tables, values):
    tables.rows("t", "v VARCHAR", [(v,) for v in values])
    assert not any(i.type == "mixed_units" for i in tables.detect("t").values())


def test_notations_read():
    assert read_quantity("5'4\"").number == pytest.approx(162.56)
    assert read_quantity("5 ft 4").notation == "ft+in"
    assert read_quantity("154 lbs").notation == "lb" and read_quantity("154 lbs").dimension == "mass"
    assert read_quantity("1h30").number == 90.0 and read_quantity("2 hrs 5 min").number == 125.0
    assert read_quantity("70,5 kg").number == pytest.approx(70.5)
    assert read_quantity("64").notation == "number without unit"
    assert read_quantity("64 parsecs") is None and read_quantity("tall") is None
    assert REPLACED_TYPES   # the types a mixed-units finding takes the place of on its column
