"""Numbers and dates stored as text: one issue with the placeholders that forced the text type,
judged on the parsed values (the true min and max, not the alphabetical ones)."""

from __future__ import annotations

from datetime import datetime

from cataloger_dagster.core.issues.detectors.types import dates_as_integers, stored_as_text


def _ratings(tables) -> None:
    rows = [(i, "NA" if i % 8 == 0 else f"{1 + (i * 37 % 90) / 10:.1f}", f"Film {i}") for i in range(400)]
    tables.rows("movies", "film_id INTEGER, imdb_rating VARCHAR, title VARCHAR", rows)


def test_na_strings_make_a_numeric_column_text_one_issue(tables):
    _ratings(tables)
    found = tables.detect("movies")
    on_rating = sorted(i.type for i in found.values() if "imdb_rating" in i.affectedColumns)
    assert on_rating == ["numeric_as_text"], on_rating
    issue = found["movies_numeric_as_text_imdb_rating"]
    assert issue.details["placeholders"] == {"NA": 50}
    assert issue.details["parsed"] == 350 and issue.details["share"] == 1.0
    assert issue.affectedRows == 400
    assert "'NA'" in issue.description and "100% of its 350 values are numbers" in issue.description
    assert "'NA'" in issue.suggestedAction
    assert (issue.details["min"], issue.details["max"]) == ("1", "9.9")


def test_the_share_in_the_words_is_the_share_in_the_evidence(tables):
    rows = [(str(90 + i),) for i in range(171)] + [("ninety",)]
    tables.rows("films", "runtime VARCHAR", rows)
    issue = stored_as_text(tables.context("films"), *_col(tables, "films", "runtime"))
    assert abs(issue.details["share"] - 171 / 172) < 1e-9
    assert "99.42% of its 172 values are numbers" in issue.description
    assert issue.details["unparsed"] == {"ninety": 1}


def test_dates_in_a_month_name_format(tables):
    days = ["Jun 12 1998", "Aug 07 1985", "Dec 25 2015", "Apr 01 2001", "Sep 30 1970", "Jan 17 1963"]
    rows = [(days[i % 6] if i % 25 else "Unknown",) for i in range(300)]
    tables.rows("movies", "release_date VARCHAR", rows)
    issue = stored_as_text(tables.context("movies"), *_col(tables, "movies", "release_date"))
    assert issue.type == "date_as_text"
    assert issue.details["date_format"] == "%b %d %Y"
    # alphabetically the range would be 'Apr 01 2001' to 'Sep 30 1970'
    assert (issue.details["min"], issue.details["max"]) == ("1963-01-17", "2015-12-25")
    assert issue.details["placeholders"] == {"Unknown": 12}
    assert "1963-01-17 to 2015-12-25" in issue.description


def test_dates_with_minutes_in_slashed_format(tables):
    rows = [(f"2001/{1 + i % 3:02d}/{1 + i % 28:02d} {i % 24:02d}:{i * 7 % 60:02d}",) for i in range(500)]
    rows[10] = ("2001/01/01 00:47",)
    tables.rows("flights", "date VARCHAR", rows)
    issue = stored_as_text(tables.context("flights"), *_col(tables, "flights", "date"))
    assert issue.type == "date_as_text" and issue.details["date_format"] == "%Y/%m/%d %H:%M"
    stamps = sorted(datetime.strptime(r[0], "%Y/%m/%d %H:%M") for r in rows)
    assert issue.details["min"] == "2001-01-01"          # midnight is shown as the day alone
    assert issue.details["max"] == stamps[-1].isoformat(sep=" ")
    assert issue.details["parsed"] == 500


def test_codes_and_identifiers_written_with_digits_stay_text(tables):
    rows = [(f"{1000 + i * 7:05d}", str(10_000 + i), str(i * 13 % 997)) for i in range(200)]
    tables.rows("places", "zip VARCHAR, county_id VARCHAR, phone_number VARCHAR", rows)
    ctx = tables.context("places")
    for column in ("zip", "county_id", "phone_number"):
        assert stored_as_text(ctx, *_col(tables, "places", column)) is None, column


def test_labels_with_a_few_numbers_or_too_much_text_are_not_numbers(tables):
    titles = [f"Title {i}" for i in range(85)] + [str(1776 + i) for i in range(15)]
    mixed = [str(i) for i in range(85)] + ["about " + str(i) for i in range(15)]   # 85% numbers
    tables.rows("t", "title VARCHAR, mixed VARCHAR", list(zip(titles, mixed)))
    ctx = tables.context("t")
    assert stored_as_text(ctx, *_col(tables, "t", "title")) is None
    assert stored_as_text(ctx, *_col(tables, "t", "mixed")) is None


def test_typed_columns_are_not_text(tables):
    tables.sql("CREATE TABLE n AS SELECT i * 1.5 AS amount, DATE '2020-01-01' + i::INTEGER AS day "
               "FROM range(50) r(i)")
    ctx = tables.context("n")
    assert stored_as_text(ctx, *_col(tables, "n", "amount")) is None
    assert stored_as_text(ctx, *_col(tables, "n", "day")) is None


def _col(tables, table: str, column: str):
    cp = next(c for c in tables.profile(table).columns if c.name == column)
    return cp, tables.con.table(table).schema()[column]


def test_weekly_dates_written_as_integers(tables):
    from datetime import date, timedelta
    days = [date(1958, 3, 29) + timedelta(weeks=w) for w in range(2000)]
    tables.rows("co2", "date INTEGER, co2 DOUBLE", [(int(d.strftime("%Y%m%d")), 315 + w / 50) for w, d in enumerate(days)])
    found = tables.detect("co2")
    issue = found["co2_date_as_text_date"]
    assert issue.details["date_format"] == "%Y%m%d" and issue.details["stored_as"] == "integer"
    assert (issue.details["min"], issue.details["max"]) == ("1958-03-29", days[-1].isoformat())
    assert issue.affectedRows == 2000 and "YYYYMMDD" in issue.description
    assert [i.affectedColumns for i in found.values()] == [["date"]], [i.description for i in found.values()]


def test_months_written_as_integers(tables):
    months = [(1990 + m // 12) * 100 + 1 + m % 12 for m in range(240)]
    tables.rows("sales", "month INTEGER, units INTEGER", [(m, 100 + i % 37) for i, m in enumerate(months)])
    issue = dates_as_integers(tables.context("sales"), *_col(tables, "sales", "month"))
    assert issue is not None and issue.details["date_format"] == "%Y%m"
    assert (issue.details["min"], issue.details["max"]) == ("1990-01-01", "2009-12-01")


def test_integers_that_only_look_like_dates_are_not(tables):
    import random
    rng = random.Random(4)
    rows = [(rng.randint(18_000_000, 22_000_000),   # eight-digit amounts or identifiers
             rng.randint(1990, 2020),               # years
             rng.randint(180_000, 220_000),         # six-digit counts
             20240115 + i % 2)                      # two values only
            for i in range(500)]
    tables.rows("things", "amount BIGINT, built INTEGER, visitors INTEGER, batch INTEGER", rows)
    ctx = tables.context("things")
    for column in ("amount", "built", "visitors", "batch"):
        assert dates_as_integers(ctx, *_col(tables, "things", column)) is None, column
    # an identifier named so is left alone even when its digits read as dates
    tables.rows("orders", "order_id BIGINT", [(20240101 + i,) for i in range(28)])
    assert dates_as_integers(tables.context("orders"), *_col(tables, "orders", "order_id")) is None
