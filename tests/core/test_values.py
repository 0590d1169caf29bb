"""`values.finite_float`: the one rule for "is this a number" over database values and stored JSON."""

import math
from decimal import Decimal

import numpy as np
import pytest

from cataloger_dagster.core.values import finite_float


@pytest.mark.parametrize("value, expected", [
    (3, 3.0), (2.5, 2.5), (-0.0, 0.0),
    (Decimal("12.50"), 12.5),               # PostgreSQL numeric
    (np.int64(7), 7.0), (np.float32(0.5), 0.5),
])
def test_numbers_become_floats(value, expected):
    result = finite_float(value)
    assert type(result) is float and result == expected


@pytest.mark.parametrize("value", [
    None, True, False, "20", "nan", b"1", [1], {"a": 1},
    math.nan, math.inf, -math.inf, Decimal("NaN"), Decimal("sNaN"), Decimal("Infinity"),
    Decimal("1e999"),                       # finite as a Decimal, infinite as a float
    np.float64("nan"),
])
def test_anything_else_is_the_default(value):
    assert finite_float(value) is None
    assert finite_float(value, -1.0) == -1.0
