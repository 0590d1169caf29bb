"""Missing values and the placeholders that hide them: 'NA', 'Unknown', 'Not Rated', -999, a film's $0 gross."""

from __future__ import annotations

import dataclasses
import random

import pytest

from cataloger_dagster.core.issues import text_values
from cataloger_dagster.core.issues.detectors import missing
from cataloger_dagster.core.issues.detectors.context import one
from cataloger_dagster.core.issues.detectors.missing import missing_values, sentinel_values


def _films(tables, zeros: int = 12) -> None:
    rng = random.Random(11)
    # grosses spread from ten thousand to a billion dollars, as real box-office figures are
    grosses = [float(round(10 ** rng.uniform(4, 9))) for _ in range(400)] + [0.0] * zeros
    ratings = ["R", "PG-13", "PG", "G", "NC-17"]
    rows = [(i, g, ratings[i % 5] if i % 9 else "Not Rated", "Drama" if i % 13 else "Unknown")
            for i, g in enumerate(grosses)]
    tables.rows("movies", "film_id INTEGER, worldwide_gross DOUBLE, mpaa_rating VARCHAR, creative_type VARCHAR",
                rows)


def test_a_zero_gross_among_millions_is_a_placeholder(tables):
    _films(tables)
    found = sentinel_values(tables.context("movies"), *_col(tables, "movies", "worldwide_gross"))
    assert found is not None
    assert found.details["values"] == {"0": 12} and found.affectedRows == 12
    assert "never come near zero" in found.description


def test_a_zero_rainfall_is_a_measurement(tables):
    rng = random.Random(3)
    # dry days are common, and the wet days start at the gauge's resolution, right next to zero
    rain = [0.0 if rng.random() < 0.4 else round(rng.expovariate(1 / 6) + 0.1, 1) for _ in range(1461)]
    tables.rows("weather", "precipitation DOUBLE", [(r,) for r in rain])
    assert sentinel_values(tables.context("weather"), *_col(tables, "weather", "precipitation")) is None


def test_a_zero_share_among_continuous_shares_is_a_measurement(tables):
    # a school's share of pupils of one group: a few schools have none, the others' shares are
    # measured to six places, so the column has no resolution that would set zero apart
    rng = random.Random(8)
    shares = [0.0] * 5 + [round(rng.lognormvariate(0.5, 1.0) + 0.05, 6) for _ in range(298)]
    tables.rows("schools", "share_of_pupils DOUBLE", [(v,) for v in shares])
    assert sentinel_values(tables.context("schools"), *_col(tables, "schools", "share_of_pupils")) is None


def test_zero_is_no_placeholder_where_values_go_negative_or_for_ids(tables):
    rng = random.Random(5)
    rows = [(0 if i % 30 == 0 else i, 0.0 if i % 30 == 0 else round(rng.uniform(-40, 40) * 1000, 1))
            for i in range(600)]
    tables.rows("readings", "sensor_id INTEGER, temp_delta DOUBLE", rows)
    ctx = tables.context("readings")
    assert sentinel_values(ctx, *_col(tables, "readings", "sensor_id")) is None
    assert sentinel_values(ctx, *_col(tables, "readings", "temp_delta")) is None


def test_zero_on_most_rows_is_the_usual_value(tables):
    # a strike's repair cost: most strikes cost nothing
    rows = [(0,) if i % 3 else (float(1000 + 37 * i),) for i in range(900)]
    tables.rows("strikes", "cost_repairs DOUBLE", rows)
    assert sentinel_values(tables.context("strikes"), *_col(tables, "strikes", "cost_repairs")) is None


def test_text_placeholders_in_a_label_column(tables):
    _films(tables)
    ctx = tables.context("movies")
    rating = sentinel_values(ctx, *_col(tables, "movies", "mpaa_rating"))
    assert rating.details["values"] == {"Not Rated": 46}
    creative = sentinel_values(ctx, *_col(tables, "movies", "creative_type"))
    assert creative.details["values"] == {"Unknown": 32}


def test_codes_and_levels_that_look_like_placeholders(tables):
    rows = [(["JFK", "LGA", "EWR", "UNK"][i % 4], ["Minor", "None", "None", "Substantial"][i % 4],
             ["US", "CA", "NA", "FR"][i % 4]) for i in range(200)]
    tables.rows("strikes", "origin VARCHAR, damage_level VARCHAR, country VARCHAR", rows)
    ctx = tables.context("strikes")
    for column in ("origin", "damage_level", "country"):
        assert sentinel_values(ctx, *_col(tables, "strikes", column)) is None, column


def test_na_in_a_code_named_column_of_words_is_a_placeholder(tables):
    # a language or region named in full: 'NA' beside 'English' is no code, whatever the column's name
    rows = [(["English", "English", "French", "Other", "NA"][i % 5],
             ["North", "South", "NA", "Central"][i % 4], ["en", "fr", "de", "NA"][i % 4]) for i in range(500)]
    tables.rows("people", "language VARCHAR, region VARCHAR, lang_code VARCHAR", rows)
    ctx = tables.context("people")
    language = sentinel_values(ctx, *_col(tables, "people", "language"))
    assert language is not None and language.details["values"] == {"NA": 100}
    region = sentinel_values(ctx, *_col(tables, "people", "region"))
    assert region is not None and region.details["values"] == {"NA": 125}
    # two-letter codes beside it: 'NA' is a code like 'en' and 'fr'
    assert sentinel_values(ctx, *_col(tables, "people", "lang_code")) is None


def test_short_codes_are_told_from_words():
    assert text_values.short_codes(["US", "CA", "NA", "FR"]) and text_values.short_codes(["eng", "fra", "NA"])
    assert not text_values.short_codes(["English", "French", "Other", "NA"])
    assert text_values.short_codes(["NA"])   # nothing else to judge by: the name decides


def test_na_among_numbers_belongs_to_the_stored_as_text_issue(tables):
    rows = [("NA" if i % 8 == 0 else f"{5 + (i % 40) / 10:.1f}",) for i in range(300)]
    tables.rows("films", "imdb_rating VARCHAR", rows)
    assert sentinel_values(tables.context("films"), *_col(tables, "films", "imdb_rating")) is None


def test_numeric_sentinels(tables):
    tables.sql("CREATE TABLE s AS SELECT CASE WHEN i % 20 = 0 THEN -999 ELSE 100 + i END AS reading "
               "FROM range(200) r(i)")
    found = sentinel_values(tables.context("s"), *_col(tables, "s", "reading"))
    assert found.details["values"] == {"-999": 10}


def test_missing_counts_nulls_blanks_and_nan(tables):
    tables.sql("""CREATE TABLE m AS SELECT
        CASE WHEN i < 5 THEN NULL WHEN i < 8 THEN '  ' WHEN i < 9 THEN '' ELSE 'v' || i END AS name,
        CASE WHEN i < 2 THEN 'NaN'::DOUBLE WHEN i < 6 THEN NULL ELSE i END AS score,
        CASE WHEN i < 70 THEN NULL ELSE i END AS note,
        i AS full
        FROM range(100) r(i)""")
    ctx = tables.context("m")
    name = missing_values(ctx, *_col(tables, "m", "name"))
    assert name.affectedRows == 9 and name.details["blanks"] == 4 and name.severity == "low"
    score = missing_values(ctx, *_col(tables, "m", "score"))
    assert score.details["nan"] == 2 and score.affectedRows == 6
    assert missing_values(ctx, *_col(tables, "m", "note")).severity == "high"
    assert missing_values(ctx, *_col(tables, "m", "full")) is None


def test_placeholders_are_not_counted_as_missing_values(tables):
    rows = [("Unknown" if i % 10 == 0 else f"director {i % 7}",) for i in range(100)]
    tables.rows("d", "director VARCHAR", rows)
    assert missing_values(tables.context("d"), *_col(tables, "d", "director")) is None


@pytest.fixture
def few(monkeypatch):
    """Limits small enough that a table of a few thousand rows takes the paths of a large one."""
    monkeypatch.setattr(missing, "SMALLEST", 50)
    monkeypatch.setattr(missing, "SMALLEST_FEW_DISTINCT", 10)
    monkeypatch.setattr(text_values, "MAX_DISTINCT", 50)


@pytest.mark.parametrize("values", [
    "i * 7 + 0.5",                                           # distinct: the smallest rows hold them
    "CASE WHEN i < 1000 THEN i % 20 + 1 ELSE 1000 + i END",  # the smallest values repeat: every value is read
    "CASE WHEN i % 2 = 0 THEN -i ELSE i END",                # negatives are no candidates
])
def test_the_smallest_positive_values_are_those_of_every_row(tables, few, values):
    tables.sql(f"CREATE TABLE m AS SELECT ({values})::DOUBLE AS amount FROM range(4000) r(i)")
    ctx = tables.context("m")
    cp, _ = _col(tables, "m", "amount")
    c = ctx.table.amount
    every = ctx.table.filter(c > 0).select(v=c).distinct().order_by("v").limit(50)
    assert missing._smallest_positive(ctx, cp, c) == every.to_pyarrow().column("v").to_pylist()


def test_placeholders_in_free_text_with_many_values(tables, few, monkeypatch):
    rows = [("N/A" if i % 50 == 0 else f"user{i}@example.com", f"{i:08x}", f"word{chr(97 + i % 26) * (i % 9 + 3)}",
             "Unknown" if i % 40 == 0 else f"Name {chr(65 + i % 26)}{chr(65 + i // 26 % 26)}", f"c{1000 + i}")
            for i in range(2000)]
    tables.rows("p", "email VARCHAR, hash VARCHAR, word VARCHAR, name VARCHAR, code VARCHAR", rows)
    ctx = tables.context("p")
    assert sentinel_values(ctx, *_col(tables, "p", "code")) is None       # a digit in every value
    assert ctx.cache[("free text", "code")]["maybe_placeholders"] == 0
    assert ctx.values(_col(tables, "p", "email")[0]) is None   # too many values to read on the host
    assert sentinel_values(ctx, *_col(tables, "p", "email")).details["values"] == {"N/A": 40}
    assert sentinel_values(ctx, *_col(tables, "p", "hash")) is None       # digits in nearly every value
    assert sentinel_values(ctx, *_col(tables, "p", "word")) is None       # no digits, and no placeholder
    monkeypatch.setattr(missing, "MAYBE_PLACEHOLDERS", 5)                 # too many candidates to read
    assert sentinel_values(ctx, *_col(tables, "p", "name")).details["values"] == {"Unknown": 50}


def _col(tables, table: str, column: str):
    cp = next(c for c in tables.profile(table).columns if c.name == column)
    return cp, tables.con.table(table).schema()[column]


def test_the_measures_that_could_hold_a_placeholder_zero_are_counted_in_one_scan(tables, monkeypatch):
    _films(tables)
    tables.sql("CREATE TABLE both_ AS SELECT *, round(worldwide_gross / 2) AS domestic_gross, "
               "worldwide_gross + 1 AS no_zero FROM movies")
    ctx = tables.context("both_")
    scans = []
    monkeypatch.setattr(missing, "one", lambda table, **aggs: scans.append(sorted(aggs)) or one(table, **aggs))
    narrowed = dataclasses.replace(ctx, table=ctx.table.select("worldwide_gross"), whole=ctx.table)
    found = sentinel_values(narrowed, *_col(tables, "both_", "worldwide_gross"))
    assert found.details["values"] == {"0": 12}
    # the zero, negative and positive counts of both measures whose minimum is 0, not of no_zero
    assert scans[0] == sorted(f"{k}{i}" for k in ("zeros", "negative", "positive") for i in (0, 1))
    assert ctx.cache[("signs", "domestic_gross")] == {"zeros": 12, "negative": 0, "positive": 400}
    assert sentinel_values(dataclasses.replace(narrowed, table=ctx.table.select("domestic_gross")),
                           *_col(tables, "both_", "domestic_gross")).details["values"] == {"0": 12}
    assert sum(1 for s in scans if "zeros0" in s) == 1


def test_structural_nulls_open_no_missing_values_issue_but_a_real_gap_does(tables):
    from tests.support import null_shapes
    tables.sql(null_shapes.STORMS)
    found = tables.detect("storms")
    # category is NULL exactly when wind < 65: structure; pressure's scattered NULLs: a gap
    assert "storms_missing_values_category" not in found
    gap = found["storms_missing_values_pressure"]
    assert gap.affectedRows == tables.profile("storms").column("pressure").nulls > 0


def test_measures_missing_before_a_date_and_a_chart_s_weeks_open_no_missing_values_issue(tables):
    from tests.support import null_shapes
    tables.sql(null_shapes.BEFORE_A_YEAR).sql(null_shapes.chart_sql())
    assert not [i for i in tables.detect("readings").values() if i.type == "missing_values"]
    chart = tables.detect("chart")
    assert not [i for i in chart.values() if i.type == "missing_values"]


def test_blanks_in_a_column_whose_nulls_are_explained_are_still_missing(tables):
    tables.sql("""CREATE TABLE s AS SELECT i AS id, i % 50 AS level,
                  CASE WHEN i % 50 < 10 THEN NULL WHEN i = 77 THEN ' ' ELSE 'grade ' || (i % 7) END AS grade
                  FROM range(1000) r(i)""")
    found = tables.detect("s")["s_missing_values_grade"]
    assert found.affectedRows == 1 and found.details["nulls"] == 0 and "1 blank" in found.description


# eruption durations to the second (fractions of a minute), 300 rows
DURATIONS = """
CREATE OR REPLACE MACRO h(x) AS CAST(hash(x) % 1000000007 AS BIGINT);
CREATE TABLE eruptions AS
SELECT i AS eruption, {duration} AS duration FROM range(300) t(i)
"""
MEASURED = "round(1.5 + (h(i * 7) % 240) / 60.0, 4)"


def test_round_values_heaped_among_fractions_are_codes(tables):
    # readings at night coded as 'short' (2) and 'long' (4): a sixth of the rows exactly 4
    tables.sql(DURATIONS.format(duration=f"CASE WHEN i % 6 = 0 THEN 4.0 WHEN i % 13 = 1 THEN 2.0 ELSE {MEASURED} END"))
    found = sentinel_values(tables.context("eruptions"), *_col(tables, "eruptions", "duration"))
    assert found is not None
    assert set(found.details["values"]) == {"4", "2"} and found.details["values"]["4"] >= 50
    assert found.details["heaped"] == ["2", "4"]
    assert found.affectedRows == found.details["values"]["4"] + found.details["values"]["2"]
    assert "round values" in found.description and "duration" in found.description


@pytest.mark.parametrize("duration, why", [
    (MEASURED, "measured values only: whole minutes no more frequent than the others"),
    (f"CASE WHEN i % 6 = 0 THEN 5.5 ELSE {MEASURED} END", "a heaped value that is not a whole number"),
    (f"CASE WHEN i % 5 = 0 THEN 0.0 ELSE {MEASURED} END", "zero: nothing happened, a natural heap"),
    (f"CASE WHEN i % 5 = 0 THEN 6.0 ELSE least({MEASURED}, 5.9) END", "the column's cap, a bound"),
    (f"CASE WHEN i % 6 = 0 THEN 4.0 ELSE round(1 + h(i * 7) % 30, 0) END", "a column of whole numbers"),
    (f"CASE WHEN i % 4 = 0 THEN 4.0 WHEN i % 4 = 1 THEN 4.25 ELSE {MEASURED} END", "a round value as frequent as a fraction"),
])
def test_round_values_that_are_no_codes(tables, duration, why):
    tables.sql(DURATIONS.format(duration=duration))
    assert sentinel_values(tables.context("eruptions"), *_col(tables, "eruptions", "duration")) is None, why


def _rear_seats(tables, rng, coded=(-2.0,)) -> None:
    """120 cars: rear headroom (4 to 9), rear seat and luggage; two-seaters write the same negative code
    in all three (no rear seat, no trunk)."""
    rows = []
    for i in range(120):
        if i % 12 == 0:
            code = coded[(i // 12) % len(coded)]
            rows.append((i, code, code, -2.0))
        else:
            rows.append((i, rng.randint(8, 18) / 2, rng.randint(36, 74) / 2, float(rng.randint(6, 22))))
    tables.rows("cars90", "car_id INTEGER, rear_headroom DOUBLE, rear_seating DOUBLE, luggage DOUBLE", rows)


def test_a_negative_code_in_non_negative_measures_is_one_placeholder_finding(tables):
    import random

    _rear_seats(tables, random.Random(4), coded=(-2.0, -2.0, -3.0))
    found = tables.detect("cars90")
    coded = [i for i in found.values() if i.type == "sentinel_values"]
    assert len(coded) == 1, [(i.type, i.affectedColumns) for i in found.values()]
    issue = coded[0]
    # one convention across the columns (-2 everywhere, -3 in two besides): one finding naming them
    assert sorted(issue.affectedColumns) == ["luggage", "rear_headroom", "rear_seating"]
    assert issue.details["values"] == {"-2": 24, "-3": 6} and issue.affectedRows == 10
    assert "'-2'" in issue.description
    # no outlier, scale error or range finding of the same values beside it
    assert not [i for i in found.values() if i.type in ("outliers", "scale_errors", "implausible_values",
                                                         "out_of_range")]


def test_negative_values_that_are_no_codes(tables):
    import random

    rng = random.Random(9)
    rows = []
    for i in range(400):
        rows.append((
            i,
            round(rng.gauss(8, 6)),           # whole-degree temperatures run on through zero
            rng.choice([-2, -1, 0, 1, 2]),    # a centred rating scale
            round(rng.gauss(40, 30)),         # a yearly change: many negative values, each rare
            -5 if i == 7 else rng.randint(10, 90),  # one negative slip: a code repeats
            -rng.choice([1, 1, 2, 3]) if i % 40 == 0 else rng.randint(1, 12),  # quantities with their sign slipped
        ))
    tables.rows("weather", "day INTEGER, low_c INTEGER, mood INTEGER, change INTEGER, visits INTEGER, "
                "quantity INTEGER", rows)
    found = tables.detect("weather")
    assert not [i for i in found.values() if i.type == "sentinel_values"], \
        [(i.type, i.affectedColumns, i.details) for i in found.values()]
