"""What the checks share, called directly: the file is real Python, so its pure helpers are
tested as functions (the ones that read the table run in the check files' session tests)."""

from datetime import datetime

from cataloger_dagster.core.investigate.checks.helpers import as_date, as_number, count, outcome


def test_as_number_reads_numbers_and_numeric_text_only():
    assert as_number(3) == 3.0 and as_number(" 1,234.5 ") == 1234.5
    assert as_number("12 kg") is None and as_number(True) is None and as_number(None) is None
    assert as_number("nan") is None and as_number(float("inf")) is None


def test_as_date_reads_the_common_formats():
    assert as_date("2024-03-05") == datetime(2024, 3, 5)
    assert as_date("03/05/2024") == datetime(2024, 3, 5)          # month first, as US data writes it
    assert as_date("Jun 12 1998") == datetime(1998, 6, 12)
    assert as_date("2024-03-05T10:00:00Z").tzinfo is not None
    assert as_date("not a date") is None


def test_count_puts_the_noun_in_the_right_number():
    assert (count(1, "row"), count(2, "row"), count(12000, "row")) == ("1 row", "2 rows", "12,000 rows")


def test_outcome_is_the_record_a_check_returns():
    assert outcome("h", "confirmed", "r", 3.0, rows=5) == {
        "hypothesis": "h", "verdict": "confirmed", "reason": "r", "affected": 3, "evidence": {"rows": 5}}
