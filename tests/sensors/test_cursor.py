"""`sensors.cursor`: both sensors' cursors fail the same way, saying how to reset them."""

import re

import pytest

from cataloger_dagster.sensors import database_change, pass_rate
from cataloger_dagster.sensors.cursor import BadCursor, parse_cursor


def test_a_readable_cursor_is_parsed():
    assert parse_cursor('{"n": 2}', lambda d: d["n"] * 2, sensor="s", empty_means="e", initial="{}") == 4


@pytest.mark.parametrize("cursor", ["not json", "[]", '{"m": 1}', '{"n": "x"}'])
def test_an_unreadable_cursor_says_how_to_reset_it(cursor):
    with pytest.raises(BadCursor) as info:
        parse_cursor(cursor, lambda d: int(d["n"]), sensor="my_sensor",
                     empty_means="an empty cursor redoes everything", initial='{"n": 0}')
    message = str(info.value)
    assert message.startswith("my_sensor cursor is not valid (")
    assert message.endswith("reset the sensor's cursor in the Dagster UI "
                            '(an empty cursor redoes everything) or set it to {"n": 0}')
    assert isinstance(info.value, ValueError) and info.value.__cause__ is None


def test_both_sensors_raise_the_one_bad_cursor():
    assert database_change.BadCursor is pass_rate.BadCursor is BadCursor
    with pytest.raises(BadCursor, match=re.escape('set it to {"fingerprints": {}}')):
        database_change.read_cursor('{"fingerprints": []}')
    with pytest.raises(BadCursor, match=re.escape('set it to {"after": null, "tables": {}}')):
        pass_rate.read_cursor('{"after": "x", "tables": {}}')
    assert database_change.read_cursor('{"fingerprints": {"t": 1}}') == {"t": "1"}
    assert pass_rate.read_cursor('{"after": 3, "tables": {"t": {"a": 1}}}') == (3, {"t": {"a": 1}})
