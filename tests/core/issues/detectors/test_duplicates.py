"""Repeated rows: exact copies with or without a key, records repeated under a new row number or
load time, and the tables whose rows are alike by nature (nothing to report)."""

from __future__ import annotations

from cataloger_dagster.core.issues.detectors.duplicates import (
    chance_repeats, duplicate_rows, ignored_columns, repeated_rows,
)

# h(x): a pseudo-random integer of x, the same on every run
RANDOM = "CREATE OR REPLACE MACRO h(x) AS CAST(hash(x) % 1000000007 AS BIGINT);"

# a table of gems: every column but the cut and colour is a measure of many values (about 54k rows)
GEMS = RANDOM + """
CREATE TABLE gems AS
SELECT {rowname}
       round(0.2 + (h(i) % 480) / 100.0, 2) AS carat,
       ['Fair', 'Good', 'Very Good', 'Premium', 'Ideal'][1 + h(i * 3) % 5] AS cut,
       ['D', 'E', 'F', 'G', 'H', 'I', 'J'][1 + h(i * 5) % 7] AS color,
       round(43 + (h(i * 7) % 3600) / 100.0, 1) AS depth,
       326 + h(i * 11) % 18497 AS price,
       round((h(i * 13) % 1070) / 100.0, 2) AS x
FROM (SELECT CASE WHEN r < 53794 THEN r ELSE (r * 7919) % 53794 END AS i, r FROM range(53940) t(r))
"""


def test_146_repeated_rows_among_54k_of_a_table_without_a_key(tables):
    tables.sql(GEMS.format(rowname=""))
    found = duplicate_rows(tables.context("gems"))
    assert found is not None and found.affectedRows == 146
    assert found.details["ignored_columns"] == {}
    assert found.details["distinct_rows"] == 53940 - 146
    assert "repeat another row exactly" in found.description


def test_the_same_repeats_behind_a_row_number_column(tables):
    # R writes its row names as a first column: 1..n, unique, so no two whole rows are equal
    tables.sql(GEMS.format(rowname="r + 1 AS rownames,"))
    found = duplicate_rows(tables.context("gems"))
    assert found is not None and found.affectedRows == 146
    assert found.details["ignored_columns"] == {"rownames": "a row number: unique on every row"}
    assert "rownames" not in found.affectedColumns and "carat" in found.affectedColumns
    assert "every column but rownames (a row number)" in found.description
    example = found.details["example_rows"][0]
    assert example["copies"] == 2 and len(example["rownames"]) == 2


def test_two_repeated_records_in_a_time_series_with_a_surrogate_id(tables):
    # hourly readings of 3 stations (20k rows) keyed by reading_id; two readings loaded twice
    tables.sql(RANDOM + """
        CREATE TABLE readings AS
        SELECT 1000 + r AS reading_id, station, taken_at, temp, wind FROM (
          SELECT row_number() OVER () AS r, * FROM (
            SELECT ['S1', 'S2', 'S3'][1 + i % 3] AS station,
                   TIMESTAMP '2020-01-01' + to_hours((i // 3)::BIGINT) AS taken_at,
                   round(-10 + (h(i) % 4000) / 100.0, 2) AS temp, round((h(i * 3) % 300) / 10.0, 1) AS wind
            FROM range(19998) t(i)
            UNION ALL
            SELECT ['S1', 'S2', 'S3'][1 + i % 3], TIMESTAMP '2020-01-01' + to_hours((i // 3)::BIGINT),
                   round(-10 + (h(i) % 4000) / 100.0, 2), round((h(i * 3) % 300) / 10.0, 1)
            FROM range(19998) t(i) WHERE i IN (4321, 17000)))
    """)
    found = duplicate_rows(tables.context("readings"))
    assert found is not None and found.affectedRows == 2
    assert list(found.details["ignored_columns"]) == ["reading_id"]
    assert "surrogate id" in found.details["ignored_columns"]["reading_id"]


def test_a_record_loaded_twice_differs_in_its_load_time_only(tables):
    tables.sql(RANDOM + """
        CREATE TABLE signups AS
        SELECT 'user' || i || '@example.com' AS email, ['free', 'pro'][1 + i % 2] AS plan,
               TIMESTAMP '2024-01-01' + to_seconds(i::BIGINT) AS inserted_at FROM range(500) t(i)
        UNION ALL
        SELECT 'user' || i || '@example.com', ['free', 'pro'][1 + i % 2],
               TIMESTAMP '2024-06-01' + to_seconds(i::BIGINT) FROM range(3) t(i)
    """)
    found = duplicate_rows(tables.context("signups"))
    assert found is not None and found.affectedRows == 3
    assert found.details["ignored_columns"] == {"inserted_at": "a load time"}
    assert found.affectedColumns == ["email", "plan"]


def test_rows_alike_by_nature_are_no_finding(tables):
    # one row per passenger: class, sex, age group and survival take 24 combinations among 2,000 rows
    tables.sql(RANDOM + """
        CREATE TABLE passengers AS
        SELECT r + 1 AS rownames, ['1st', '2nd', '3rd', 'Crew'][1 + h(r) % 4] AS class,
               ['Male', 'Female'][1 + h(r * 3) % 2] AS sex, ['Child', 'Adult'][1 + h(r * 5) % 2] AS age,
               ['No', 'Yes'][1 + h(r * 7) % 2] AS survived
        FROM range(2000) t(r)
    """)
    ctx = tables.context("passengers")
    assert chance_repeats(ctx, ["class", "sex", "age", "survived"], 1976) > 2000
    assert duplicate_rows(ctx) is None
    # the same without the row names: the exact copies are no finding either
    tables.sql("CREATE TABLE passengers2 AS SELECT class, sex, age, survived FROM passengers")
    assert duplicate_rows(tables.context("passengers2")) is None


def test_a_measurement_beside_a_row_number_is_no_record(tables):
    # lengths to a tenth between 10 and 60: 81 rows share a few values by chance, and one value
    # beside a row's number is no record that could have been entered twice
    tables.sql(RANDOM + """
        CREATE TABLE parts AS SELECT r AS part_id, 10 + (h(r) % 501) / 10.0 AS length_cm FROM range(81) t(r)
    """)
    ctx = tables.context("parts")
    assert ctx.profile.columns[1].distinct < 81   # some lengths repeat
    assert duplicate_rows(ctx) is None


def test_unique_data_columns_are_compared_not_ignored(tables):
    # a yearly series: the year is unique and dense, but it is data: two years alike are two years
    tables.sql(RANDOM + """
        CREATE TABLE harvest AS
        SELECT 1900 + i AS year, round(50 + (h(i) % 5000) / 100.0, 2) AS yield_t,
               round((h(i * 3) % 900) / 10.0, 1) AS rain_mm FROM range(120) t(i)
    """)
    ctx = tables.context("harvest")
    assert ignored_columns(ctx) == {}
    assert duplicate_rows(ctx) is None


def test_an_id_that_repeats_is_not_set_aside(tables):
    # the ids repeat: they are no row identity to ignore (duplicate_keys reports them)
    tables.sql(RANDOM + """
        CREATE TABLE visits AS
        SELECT i // 2 AS patient_id, round((h(i) % 10000) / 100.0, 2) AS weight FROM range(400) t(i)
    """)
    assert ignored_columns(tables.context("visits")) == {}


def test_an_event_time_is_compared(tables):
    # a time column that is not named for loading is when the event happened: no column is set aside
    tables.sql(RANDOM + """
        CREATE TABLE strikes AS
        SELECT TIMESTAMP '2020-01-01' + to_minutes(i::BIGINT) AS observed, ['gull', 'hawk'][1 + i % 2] AS bird
        FROM range(300) t(i)
    """)
    ctx = tables.context("strikes")
    assert ignored_columns(ctx) == {}
    assert duplicate_rows(ctx) is None


def test_a_unique_column_of_the_profile_proves_no_row_repeats_behind_a_row_number(tables):
    # the row number is set aside; the profile's exact count of a unique compared column is proof
    tables.sql(RANDOM + """
        CREATE TABLE ticks AS SELECT r + 1 AS rownames, TIMESTAMP '2021-01-01' + to_seconds(r::BIGINT) AS at_time,
               h(r * 3) % 5 AS kind
        FROM range(5000) t(r)
    """)
    ctx = tables.context("ticks")
    assert repeated_rows(ctx, ["at_time", "kind"], near=True) == 0
    assert duplicate_rows(ctx) is None


# a catalogue of car configurations: 38 models, each in a few engine/gearbox/year variants, with
# their rounded mileages; some variants are listed for two cars (about 230 rows)
CARS = RANDOM + """
CREATE TABLE cars AS
SELECT {rowname} 'make' || (m % 15) AS manufacturer, 'model' || m AS model,
       round(1.6 + (m % 12) * 0.3 + (v % 2) * 0.2, 1) AS displ, [1999, 2008][1 + v % 2] AS year,
       [4, 6, 8][1 + m % 3] AS cyl, ['auto(l4)', 'manual(m5)', 'auto(s6)'][1 + h(m * 7 + v) % 3] AS trans,
       18 + (m % 9) - v % 3 AS cty, 26 + (m % 11) - v % 3 AS hwy
FROM (SELECT m, v FROM range(38) a(m), range(6) b(v) WHERE h(m * 13 + v) % 10 < 9)
{copies}
"""


def test_two_cars_of_one_configuration_in_a_catalogue_of_kinds_are_no_finding(tables):
    tables.sql(CARS.format(rowname="", copies="") + """;
        INSERT INTO cars SELECT * FROM cars WHERE hash(model || displ || year) % 25 = 0""")
    ctx = tables.context("cars")
    assert ctx.rows - len(tables.con.table("cars").distinct().execute()) > 3    # rows alike are there
    assert duplicate_rows(ctx) is None


def test_repeated_rows_of_coarse_columns_beside_a_fine_measure_are_copies(tables):
    # the same catalogue with each car's exact price: a fine measure tells cars apart
    tables.sql(CARS.format(rowname="", copies="") + """;
        ALTER TABLE cars ADD COLUMN price DOUBLE; UPDATE cars SET price = 15000 + hash(model || displ || year || trans) % 20000;
        INSERT INTO cars SELECT * FROM cars WHERE hash(model || displ || year) % 25 = 0""")
    found = duplicate_rows(tables.context("cars"))
    assert found is not None and found.affectedRows > 3


# eruptions of a geyser: the wait in whole minutes, the duration to the second, but a quarter of
# the durations read as a round 2 or 4 minutes; 300 rows behind R's row numbers
ERUPTIONS = RANDOM + """
CREATE TABLE eruptions AS
SELECT i + 1 AS column0, 43 + h(i) % 60 AS waiting,
       CASE WHEN i % 6 = 0 THEN 4.0 WHEN i % 13 = 1 THEN 2.0
            ELSE round(1.5 + (h(i * 7) % 240) / 60.0, 4) END AS duration
FROM range(300) t(i)
"""


def test_rows_alike_because_a_value_holds_many_rows_are_no_finding(tables):
    # 50 durations of exactly 4 and 23 of 2 over 60 waits: pairs agree by chance far more often
    # than 170 values spread evenly would say, so the repeats are no copied record
    tables.sql(ERUPTIONS)
    ctx = tables.context("eruptions")
    repeats = ctx.rows - tables.con.con.execute("SELECT count(DISTINCT (waiting, duration)) FROM eruptions").fetchone()[0]
    assert repeats >= 5
    assert duplicate_rows(ctx) is None
    assert chance_repeats(ctx, ["waiting", "duration"], repeats) >= 0.25 * repeats


def test_copied_records_beside_a_frequent_value_are_still_found(tables):
    # the same spread, then half the records entered twice: far more repeats than chance makes
    tables.sql(ERUPTIONS + """;
        INSERT INTO eruptions SELECT 1000 + column0, waiting, duration FROM eruptions
        WHERE column0 % 2 = 0 AND duration NOT IN (2.0, 4.0)
    """)
    found = duplicate_rows(tables.context("eruptions"))
    assert found is not None and found.affectedRows >= 100
    assert found.details["ignored_columns"] == {"column0": "a row number: unique on every row"}
