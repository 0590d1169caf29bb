"""Scale errors (values off by a unit factor from their column or group) and implausible values
(ten times or more from their group, usual for the column), and the legitimate shapes that look
like them: long tails, real extremes, counts with many zeros, identifiers, years, a unit column."""

from __future__ import annotations

import math
import random

import pytest

from cataloger_dagster.core.issues.detectors import context, magnitudes
from cataloger_dagster.core.issues.detectors.magnitudes import FACTORS, fitting_factor, shape

MAGNITUDE_TYPES = {"scale_errors", "implausible_values"}


def _survey(tables, slipped=(7, 23, 41)) -> list[float]:
    """A 60-row business survey: revenue in thousands, three respondents answered in units."""
    rng = random.Random(3)
    sectors = ["retail", "services", "manufacturing", "farming"]
    rows = []
    for i in range(60):
        revenue = round(rng.lognormvariate(5.5, 0.6), 1)
        rows.append((i + 1, sectors[i % 4], rng.randint(2, 80), revenue * 1000 if i in slipped else revenue))
    tables.rows("survey", "respondent INTEGER, sector VARCHAR, employees INTEGER, revenue DOUBLE", rows)
    return [r[3] for r in rows if r[0] - 1 in slipped]


def test_three_answers_in_units_among_thousands_are_one_scale_error(tables):
    slipped = _survey(tables)
    found = tables.detect("survey")
    issue = found["survey_scale_errors_revenue"]
    assert issue.affectedRows == 3 and issue.details["factor"] == 1000.0
    assert issue.details["values"] == sorted(slipped)
    for e in issue.details["flagged"]:
        assert e["corrected"] == pytest.approx(e["value"] / 1000)
        assert 300 < e["ratio"] < 3000 and set(e.get("group", {})) <= {"sector"}
    assert "1,000" in issue.description and "revenue" in issue.description
    # one root cause, one finding: no outlier issue of the same values, nothing on the other columns
    assert sorted(found) == ["survey_scale_errors_revenue"], sorted(found)


def test_a_length_of_2_where_the_column_runs_10_to_60_is_a_misplaced_decimal(tables):
    rng = random.Random(5)
    rows = [(round(rng.uniform(10, 60), 1),) for _ in range(80)] + [(2.0,)]
    tables.rows("parts", "part_id INTEGER, length_cm DOUBLE", [(i, v) for i, (v,) in enumerate(rows)])
    found = tables.detect("parts")
    issue = found["parts_scale_errors_length_cm"]
    assert issue.affectedRows == 1 and issue.details["examples"] == [2.0]
    assert issue.details["factor"] == 10.0 and issue.details["flagged"][0]["corrected"] == pytest.approx(20.0)
    assert "group" not in issue.details["flagged"][0]   # judged on the whole column: there is no group
    assert [i.type for i in found.values()] == ["scale_errors"]


def test_a_scale_error_that_is_also_an_outlier_of_the_column_is_one_finding(tables):
    rng = random.Random(8)
    rows = [(i, round(rng.uniform(100, 300), 2)) for i in range(400)] + [(400, 187_000.0)]
    tables.rows("orders", "order_id INTEGER, amount DOUBLE", rows)
    found = tables.detect("orders")
    assert [i.type for i in found.values()] == ["scale_errors"], [i.description for i in found.values()]
    assert found["orders_scale_errors_amount"].details["values"] == [187_000.0]


def _shipments(tables, small: list[float]) -> None:
    """Weights of two kinds of items, 40 rows each: small ones of 2-3 kg, large ones of 40-200 kg."""
    rng = random.Random(11)
    rows = [("small", round(rng.uniform(2, 3), 2)) for _ in range(40 - len(small))] + [("small", v) for v in small]
    rows += [("large", round(rng.uniform(40, 200), 1)) for _ in range(40)]
    tables.rows("shipments", "kind VARCHAR, weight DOUBLE", rows)


def test_values_100_times_their_group_are_a_scale_error_though_usual_for_the_column(tables):
    _shipments(tables, [250.0, 231.0])
    issue = tables.detect("shipments")["shipments_scale_errors_weight"]
    assert issue.affectedRows == 2 and issue.details["factor"] == 100.0
    assert {e["group"]["kind"] for e in issue.details["flagged"]} == {"small"}
    assert issue.details["values"] == [231.0, 250.0]
    assert issue.details["flagged"][0]["corrected"] == pytest.approx(issue.details["flagged"][0]["value"] / 100)


def test_a_value_far_from_its_group_at_no_known_factor_is_implausible(tables):
    _shipments(tables, [50.0])
    found = tables.detect("shipments")
    issue = found["shipments_implausible_values_weight"]
    assert issue.affectedRows == 1 and issue.details["examples"] == [50.0]
    assert issue.details["flagged"][0]["group"] == {"kind": "small"}
    assert "shipments_scale_errors_weight" not in found


def test_a_unit_column_that_explains_the_levels_makes_them_normal(tables):
    # a tenth of the rows weigh in kilograms, the rest in grams: each is normal within its unit
    rng = random.Random(2)
    rows = [("g", round(rng.uniform(200, 900))) for _ in range(90)] + [("kg", round(rng.uniform(0.2, 0.9), 2)) for _ in range(10)]
    tables.rows("parcels", "unit VARCHAR, weight DOUBLE", rows)
    assert not {i.type for i in tables.detect("parcels").values()} & MAGNITUDE_TYPES


@pytest.mark.parametrize("make", ["incomes", "populations", "counts", "rain", "identifiers", "years", "codes", "fractions"])
def test_legitimate_look_alikes_give_nothing(tables, make):
    rng = random.Random(23)
    regions = ["north", "south", "east", "west"]
    if make == "incomes":      # a real long tail, group by group
        rows = [(regions[i % 4], round(rng.lognormvariate(10.5, 1.0), 2)) for i in range(600)]
    elif make == "populations":   # a power law: a few cities far larger than the rest, none apart
        rows = [(regions[i % 4], int(2000 * (1 - rng.random()) ** -1.1)) for i in range(400)]
    elif make == "counts":     # mostly zero, a few big counts
        rows = [(regions[i % 4], 0 if rng.random() < 0.7 else int(rng.expovariate(0.1)) + 1) for i in range(500)]
    elif make == "rain":       # dry days and a storm or two
        rows = [(regions[i % 4], 0.0 if rng.random() < 0.5 else round(rng.gammavariate(0.6, 6), 1)) for i in range(700)]
        rows += [("north", 55.9), ("south", 48.3)]
    elif make == "identifiers":
        rows = [(regions[i % 4], 100 + i * 7) for i in range(300)] + [("north", 5)]
    elif make == "years":
        rows = [(regions[i % 4], rng.randint(1950, 2020)) for i in range(300)]
    elif make == "codes":      # postal codes: 1001 to 99950, the low ones rare
        rows = [(regions[i % 4], rng.choice([1001, 2134, 10001, 30301, 60601, 94105, 98101, 99950])) for i in range(300)]
    else:                      # shares of a habitat, running down towards zero
        rows = [(regions[i % 4], round(rng.betavariate(2, 1), 4)) for i in range(300)] + [("east", 0.0001)] * 3
    name = {"identifiers": "item_number", "years": "built", "codes": "postal", "fractions": "habitat_share"}.get(make, make)
    tables.rows("looks", f"region VARCHAR, {name} DOUBLE", [(g, float(v)) for g, v in rows])
    found = tables.detect("looks")
    assert not {i.type for i in found.values()} & MAGNITUDE_TYPES, [i.description for i in found.values()]


def test_a_power_of_ten_is_recognised_only_in_a_bulk_narrower_than_eight_tenths_of_a_decade():
    tight = shape({40 + b: 5 for b in range(10)})      # 100 to 316
    assert tight is not None and fitting_factor(200_000.0, tight) == 1000.0
    assert fitting_factor(20.0, tight) == 10.0
    wide = shape({20 + b: 2 for b in range(40)})       # 10 to 1,000: any value is a power of ten away
    assert wide is not None and fitting_factor(200_000.0, wide) is None


def test_factors_other_than_powers_of_ten_need_a_tight_group():
    heights = shape({44: 20, 45: 30, 46: 20})          # about 158 to 200 cm
    assert heights is not None and fitting_factor(66.0, heights) == 2.54
    assert set(FACTORS) >= {2.54, 12.0, 3.28084, 2.20462, 1.60934, 60.0, 1000.0}
    assert math.isclose(heights.median_value, 10 ** (45.5 / 20))


def _production(tables, beef_that_month: float) -> None:
    """Monthly production of three meats over 40 years; one month pork fell to a tenth."""
    rng = random.Random(6)
    rows = []
    for i in range(480):
        rows.append((i, round(1900 * math.exp(rng.gauss(0, 0.25)), 1), round(1250 * math.exp(rng.gauss(0, 0.2)), 1),
                     round(34 * math.exp(rng.gauss(0, 0.3)), 1)))
    rows[200] = (200, beef_that_month, 124.0, 30.0)
    tables.rows("meat", "month INTEGER, beef DOUBLE, pork DOUBLE, veal DOUBLE", rows)


def test_a_value_at_a_tenth_whose_row_fell_with_it_is_an_event_not_a_slip(tables):
    _production(tables, beef_that_month=366.0)     # beef fell too that month: a real collapse
    found = tables.detect("meat")
    assert not {i.type for i in found.values()} & MAGNITUDE_TYPES, [i.description for i in found.values()]


def test_the_same_value_alone_on_its_row_is_a_slip(tables):
    _production(tables, beef_that_month=1850.0)
    found = tables.detect("meat")
    assert found["meat_scale_errors_pork"].details["examples"] == [124.0]


def test_the_smallest_share_at_the_end_of_a_tail_running_to_zero_is_no_scale_error(tables):
    # percentages of low-income pupils, 0 to 92: the smallest positive one about a hundredth of the
    # median, but the tail thins out towards it value after value
    rng = random.Random(9)
    shares = [round(rng.uniform(8, 92), 3) for _ in range(290)] + [0.0, 0.0, 1.247, 1.42, 1.9, 1.94, 2.97, 4.7,
                                                                     6.2, 7.2, 7.72, 0.26534]
    tables.rows("schools", "school INTEGER, low_income DOUBLE", list(enumerate(shares)))
    found = tables.detect("schools")
    assert not {i.type for i in found.values()} & MAGNITUDE_TYPES, [i.description for i in found.values()]


def test_a_table_read_from_a_sample_gives_what_the_whole_table_gives(tables, monkeypatch):
    """Above SAMPLE_ROWS rows the histograms come from a seeded sample and the rows outside its
    bulks are read exactly: the rare values apart (which a sample would miss) are all found."""
    rng = random.Random(5)
    kinds = ["small", "large", "medium"]
    levels = {"small": (2, 3), "large": (40, 200), "medium": (8, 15)}
    rows = []
    for i in range(30_000):
        kind = kinds[i % 3]
        weight = round(rng.uniform(*levels[kind]), 2)
        income = round(rng.lognormvariate(10.5, 1.0), 2)   # a long tail: never apart
        rows.append((kind, weight, income))
    for i in (17, 2_003, 9_999):            # three small parcels weighed in grams
        rows[i * 3] = ("small", rows[i * 3][1] * 1000, rows[i * 3][2])
    rows[4_000 * 3 + 1] = ("large", 15_000.0, rows[4_000 * 3 + 1][2])   # a large parcel, x100
    tables.rows("parcels", "kind VARCHAR, weight DOUBLE, income DOUBLE", rows)

    def magnitude_findings() -> dict[str, tuple[int, list[float]]]:
        found = magnitudes.analysis(tables.context("parcels"))
        return {f"{column} {kind}": (f.rows, f.values) for column, kinds in found.items() for kind, f in kinds.items()}

    exact = magnitude_findings()
    assert exact == {"weight scale_errors": (4, [2230.0, 2720.0, 2810.0, 15_000.0])}

    read_outside = []
    outside = magnitudes._outside
    monkeypatch.setattr(context, "SAMPLE_ROWS", 3_000)
    monkeypatch.setattr(magnitudes, "SAMPLE_ROWS", 3_000)
    monkeypatch.setattr(magnitudes, "_outside", lambda *a: read_outside.append(a) or outside(*a))
    assert magnitude_findings() == exact
    assert read_outside, "the table was not read from a sample"
