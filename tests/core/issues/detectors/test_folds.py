"""One root cause, one finding: a placeholder that the magnitude checks also see, a range rule
that the outlier check also sees, rows repeated whole that repeat their key, empty rows that are
alike. The stronger finding stays and keeps the other's evidence; look-alikes with two causes
keep both findings."""

from __future__ import annotations

import random

from cataloger_dagster.core.issues.detectors import folds
from cataloger_dagster.core.models import IssueModel


def test_a_numeric_placeholder_is_not_also_a_scale_error(tables):
    rng = random.Random(7)
    rows = [(i, 9999 if i % 80 == 0 else rng.randint(18, 90)) for i in range(2000)]
    tables.rows("people", "person_id INTEGER, age INTEGER", rows)
    found = tables.detect("people")
    assert [i.type for i in found.values()] == ["sentinel_values"], [i.type for i in found.values()]
    issue = next(iter(found.values()))
    assert issue.details["values"] == {"9999": 25}
    # the folded finding's evidence stays with the placeholder
    assert set(issue.details["also_seen_as"]) <= {"scale_errors", "implausible_values", "outliers"}


def test_a_placeholder_beside_a_real_extreme_keeps_both_findings(tables):
    rng = random.Random(5)
    rows = [(i, -999.0 if i % 50 == 0 else round(rng.gauss(15, 3), 1)) for i in range(2000)]
    rows[3] = (3, 1500.0)  # a reading off by a factor of 100: another cause than the placeholder
    tables.rows("readings", "reading_id INTEGER, temp DOUBLE", rows)
    found = tables.detect("readings")
    types = sorted(i.type for i in found.values())
    assert "sentinel_values" in types and len(types) == 2, types
    other = next(i for i in found.values() if i.type != "sentinel_values")
    assert 1500.0 in {float(v) for v in (other.details.get("values") or [other.details.get("max_outlier")])}


def test_shares_above_100_are_one_range_finding(tables):
    rng = random.Random(11)
    rows = [(i, 150.0 + i if i % 300 == 0 else round(rng.uniform(0, 100), 1)) for i in range(1500)]
    tables.rows("shares", "row_id INTEGER, share_pct DOUBLE", rows)
    found = tables.detect("shares")
    assert [i.type for i in found.values()] == ["out_of_range"], [i.type for i in found.values()]
    issue = next(iter(found.values()))
    assert issue.details["counts"] == {"outside 0-100": 5}
    assert "outliers" in issue.details["also_seen_as"]


def test_an_outlier_inside_the_range_is_not_folded():
    # the outlier's extremes break no rule of the range finding: two causes, two findings
    ranged = IssueModel(id="t_out_of_range_p", type="out_of_range", severity="medium", category="smart_fixes",
                        affectedColumns=["p"], affectedRows=3, description="3 negative", suggestedAction="",
                        details={"counts": {"negative": 3}})
    far = IssueModel(id="t_outliers_p", type="outliers", severity="medium", category="smart_fixes",
                     affectedColumns=["p"], affectedRows=2, description="2 far", suggestedAction="",
                     details={"min_outlier": 80.0, "max_outlier": 95.0})
    assert folds.fold_outliers_into_ranges([ranged, far]) == [ranged, far]


def test_rows_repeated_whole_are_one_finding_not_also_a_repeated_key(tables):
    rng = random.Random(7)
    rows = [(i, rng.choice(["x", "y"]), rng.random()) for i in range(2000)]
    rows += rows[:100]
    tables.rows("orders", "id INTEGER, kind VARCHAR, amount DOUBLE", rows)
    found = tables.detect("orders")
    assert [i.type for i in found.values()] == ["duplicate_rows"], [i.type for i in found.values()]
    issue = next(iter(found.values()))
    assert issue.details["duplicate_rows"] == 100
    assert issue.details["repeated_keys"] == {"id": {"duplicated_values": 100, "rows": 200}}


def test_a_key_repeated_with_other_values_stays_its_own_finding(tables):
    rng = random.Random(8)
    rows = [(i, rng.choice(["x", "y"]), rng.random()) for i in range(2000)]
    rows += rows[:100]                                                        # 100 whole repeats
    rows += [(i, "z", rng.random()) for i in range(100, 140)]                 # 40 ids reused by other rows
    tables.rows("orders", "id INTEGER, kind VARCHAR, amount DOUBLE", rows)
    found = tables.detect("orders")
    assert sorted(i.type for i in found.values()) == ["duplicate_keys", "duplicate_rows"]


def test_rows_empty_but_for_their_number_are_missing_records_not_duplicates(tables):
    rng = random.Random(11)
    rows = [(i, None, None, None) if i % 15 == 0 else (i, rng.random(), rng.random(), rng.random())
            for i in range(1500)]
    tables.rows("samples", "id INTEGER, a DOUBLE, b DOUBLE, c DOUBLE", rows)
    found = tables.detect("samples")
    assert [i.type for i in found.values()] == ["missing_values"], [i.type for i in found.values()]
    issue = next(iter(found.values()))
    assert sorted(issue.affectedColumns) == ["a", "b", "c"] and issue.affectedRows == 100
    assert "duplicate_rows" in issue.details["also_seen_as"]


def test_rows_repeated_with_values_are_duplicates_even_beside_empty_rows(tables):
    rng = random.Random(12)
    rows = [(i, None, None) if i % 15 == 0 else (i, rng.random(), rng.random()) for i in range(1500)]
    rows += [(2000 + i, *rows[i + 1][1:]) for i in range(30)]   # 30 records entered twice
    tables.rows("samples", "id INTEGER, a DOUBLE, b DOUBLE", rows)
    found = tables.detect("samples")
    assert "duplicate_rows" in {i.type for i in found.values()}


def test_rows_of_na_placeholders_are_the_placeholder_finding_not_duplicates(tables):
    rng = random.Random(13)
    rows = [(i, "NA", "NA", "NA") if i % 10 == 0
            else (i, str(round(rng.gauss(50, 10), 1)), str(round(rng.gauss(5, 1), 2)), rng.choice(["a", "b", "c"]))
            for i in range(1200)]
    tables.rows("survey", "id INTEGER, x VARCHAR, y VARCHAR, z VARCHAR", rows)
    found = tables.detect("survey")
    assert "duplicate_rows" not in {i.type for i in found.values()}, [i.type for i in found.values()]
    seen = [i for i in found.values() if "duplicate_rows" in (i.details or {}).get("also_seen_as", {})]
    assert len(seen) == 1 and seen[0].type in ("numeric_as_text", "sentinel_values")
