"""Values as a profile holds them: JSON-safe, restored from text, dates as seconds and back."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid

import ibis
import numpy as np
import pytest

from cataloger_dagster.core.profile.kinds import Column
from cataloger_dagster.core.profile.values import epoch_py, float_list, from_epoch, from_text, iso, json_safe


def test_json_safe_turns_every_database_value_into_json():
    values = [float("nan"), float("inf"), decimal.Decimal("1.50"), decimal.Decimal("12"), decimal.Decimal("NaN"),
              b"\x00\x01", uuid.UUID(int=1), dt.date(2024, 1, 2), dt.timedelta(days=1), np.int64(3),
              np.array([1.5, np.nan]), {1: {"a": float("nan")}}, (1, "x")]
    got = [json_safe(v) for v in values]
    assert got == [None, None, 1.5, 12, None, "base64:AAE=", "00000000-0000-0000-0000-000000000001",
                   "2024-01-02", "1 day, 0:00:00", 3, [1.5, None], {"1": {"a": None}}, [1, "x"]]
    json.dumps(got, allow_nan=False)


def test_top_values_are_restored_from_their_text_by_kind():
    assert from_text("integer", "12") == 12 and from_text("float", "nan") is None
    assert from_text("boolean", "t") is True and from_text("boolean", "false") is False
    assert from_text("date", "2024-01-02 00:00:00") == "2024-01-02"
    assert from_text("integer", "12a") == "12a" and from_text("string", None) is None


def test_a_list_cast_to_text_is_read_back():
    assert float_list("[1.5, 2.0, NULL]") == [1.5, 2.0, None] and float_list(None) is None


@pytest.mark.parametrize("dtype, kind, text", [
    ("date", "date", "2024-02-29"),
    ("timestamp", "timestamp", "2024-02-29T10:30:00"),
    ("timestamp('UTC')", "timestamp", "2024-02-29T10:30:00+00:00"),
])
def test_dates_go_to_seconds_and_back(dtype, kind, text):
    c = Column(0, "d", ibis.dtype(dtype), kind, ibis.literal(1))
    seconds = epoch_py(text)
    assert math.isclose(seconds, dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc).timestamp())
    assert from_epoch(seconds, c) == text and iso(text, kind) in (text, text.replace("T", " "))
    assert epoch_py("not a date") is None and from_epoch(None, c) is None
