"""Reading a text column's values: placeholders, numbers and dates in common formats."""

from __future__ import annotations

from datetime import datetime

import ibis
import pytest

from cataloger_dagster.core.issues import text_values
from cataloger_dagster.core.issues.text_values import (
    ISO, best_date_format, is_placeholder, parse_date, parse_number, read_text, value_counts, weighted_quantile,
)


@pytest.mark.parametrize("value", ["NA", "N/A", " na ", "#N/A", "null", "NaN", "Unknown", "UNKNOWN",
                                   "Not Rated", "not  available", "?", "--", "tbd", "#DIV/0!"])
def test_placeholders(value):
    assert is_placeholder(value, "rating")


@pytest.mark.parametrize("value, column", [
    ("UNK", "origin"),              # an airport code, not "unknown"
    ("None", "damage_level"),       # no damage is a level of damage
    ("Unknown Pleasures", "title"),
    ("Nana", "name"),
    ("0", "gross"),
])
def test_not_placeholders(value, column):
    assert not is_placeholder(value, column)


@pytest.mark.parametrize("column", ["country_code", "Country", "state", "iso", "region code"])
def test_na_in_a_code_column_is_a_country_not_a_placeholder(column):
    assert not is_placeholder("NA", column)
    # a real placeholder is still one there
    assert is_placeholder("N/A", column) and is_placeholder("Unknown", column)


def test_none_and_zero_dates_are_placeholders_only_among_typed_values():
    assert not is_placeholder("None", "damage")
    assert is_placeholder("None", "damage", typed=True)
    assert is_placeholder("0000-00-00", "released", typed=True)
    assert not is_placeholder("0000-00-00", "released")


@pytest.mark.parametrize("value, number", [
    ("-0.6", -0.6), ("0.6", 0.6), ("+3", 3.0), (".5", 0.5), ("1e3", 1000.0), ("0", 0.0),
    ("1,234,567", 1234567.0), ("-12,345.5", -12345.5), (" 42 ", 42.0), ("1048.36", 1048.36),
])
def test_parse_number(value, number):
    assert parse_number(value) == number


@pytest.mark.parametrize("value", ["01001", "007", "-01", "nan", "inf", "-Infinity", "1e999", "12a",
                                   "1,23", "12,3456", "", "1.2.3", "$5"])
def test_not_numbers(value):
    # codes whose leading zeros matter, non-finite values and other text stay text
    assert parse_number(value) is None


def test_parse_date_in_common_formats():
    assert parse_date("Jun 12 1998", "%b %d %Y") == datetime(1998, 6, 12)
    assert parse_date("2001/01/01 00:47", "%Y/%m/%d %H:%M") == datetime(2001, 1, 1, 0, 47)
    assert parse_date("  Jun   12 1998 ", "%b %d %Y") == datetime(1998, 6, 12)   # stray spaces
    assert parse_date("2024-03-01T10:00:00Z", ISO).year == 2024
    assert parse_date("Jun 12 1998", ISO) is None
    assert parse_date("20240301", ISO) is None     # digits alone are a number or a code, not ISO
    assert parse_date("Feb 30 1998", "%b %d %Y") is None


@pytest.mark.parametrize("values, fmt", [
    ({"Jun 12 1998": 2, "Aug 07 1985": 1, "Dec 25 2015": 1}, "%b %d %Y"),
    ({"2001/01/01 00:47": 3, "2001/01/13 14:56": 1, "2001/03/31 23:05": 1}, "%Y/%m/%d %H:%M"),
    ({"2012-01-01": 1, "2012-01-02": 1}, ISO),
    ({"12/31/2001": 1, "01/02/2002": 1}, "%m/%d/%Y"),
    ({"31/12/2001": 1, "13/02/2002": 1}, "%d/%m/%Y"),
])
def test_best_date_format(values, fmt):
    assert best_date_format(values) == fmt


def test_no_date_format_for_labels_or_numbers():
    assert best_date_format({"Comedy": 10, "Drama": 8, "Jun 12 1998": 1}) is None
    assert best_date_format({"12.5": 3, "7": 2}) is None


def test_na_strings_in_a_numeric_column():
    reading = read_text({"7.1": 40, "6.3": 30, "8.0": 30, "NA": 25, "N/A": 5}, "imdb_rating")
    assert reading.kind == "number"
    assert reading.placeholders == {"NA": 25, "N/A": 5}
    assert reading.usable == 130 and reading.candidates == 100 and reading.parsed_rows == 100
    assert reading.share == 1.0 and reading.unparsed == {}
    assert [v for v, _ in reading.weighted()] == [6.3, 7.1, 8.0]


def test_none_among_numbers_is_a_placeholder_but_among_labels_it_is_a_level():
    numbers = read_text({"12": 5, "13": 5, "None": 3}, "cost")
    assert numbers.kind == "number" and numbers.placeholders == {"None": 3}
    levels = read_text({"Minor": 50, "Substantial": 20, "Destroyed": 2, "None": 400}, "damage")
    assert levels.kind is None and levels.placeholders == {}
    assert levels.unparsed["None"] == 400


def test_other_text_among_numbers_is_kept_apart():
    reading = read_text({str(i): 1 for i in range(171)} | {"seven": 1}, "runtime")
    assert reading.kind == "number"
    assert reading.unparsed == {"seven": 1}
    assert reading.parsed_rows == 171 and reading.candidates == 172


def test_blanks_are_neither_values_nor_placeholders():
    reading = read_text({"1": 2, "  ": 4, "": 1}, "x")
    assert reading.blank == 5 and reading.usable == 2


def test_dates_as_text_sort_chronologically_not_alphabetically():
    values = {"Jun 12 1998": 3, "Apr 01 2001": 1, "Sep 30 1970": 2, "Dec 25 2046": 1, "Unknown": 2}
    reading = read_text(values, "release_date")
    assert reading.kind == "date" and reading.date_format == "%b %d %Y"
    assert reading.placeholders == {"Unknown": 2}
    ordered = reading.weighted()
    assert ordered[0] == (datetime(1970, 9, 30), 2)
    assert ordered[-1] == (datetime(2046, 12, 25), 1)


def test_zero_padded_codes_are_not_numbers():
    reading = read_text({"01001": 3, "01003": 2, "02013": 1, "10001": 4}, "county_id")
    # '10001' alone parses, but most rows are codes: the column is not numbers
    assert reading.kind is None
    assert reading.parsed_rows == 0


def test_a_column_of_labels_with_a_few_numbers_is_labels():
    reading = read_text({"Titanic": 1, "Avatar": 1, "Up": 1, "1776": 1, "Jaws": 1}, "title")
    assert reading.kind is None and reading.parsed_rows == 0 and sum(reading.unparsed.values()) == 5


def test_weighted_quantile():
    pairs = [(1.0, 90), (5.0, 9), (1048.0, 1)]
    assert weighted_quantile(pairs, 0.05) == 1.0
    assert weighted_quantile(pairs, 0.95) == 5.0
    assert weighted_quantile(pairs, 1.0) == 1048.0
    assert weighted_quantile([(2.0, 1), (4.0, 1)], 0.5) == 2.0   # the lower value at ties


def test_value_counts_from_the_database(monkeypatch):
    con = ibis.duckdb.connect()
    try:
        con.raw_sql("CREATE TABLE t AS SELECT * FROM (VALUES ('a'), ('a'), ('b'), (NULL), ('  ')) v(x)")
        assert value_counts(con.table("t"), "x") == {"  ": 1, "a": 2, "b": 1}
        monkeypatch.setattr(text_values, "MAX_DISTINCT", 2)
        assert value_counts(con.table("t"), "x") is None   # too many distinct values: free text
    finally:
        con.disconnect()
