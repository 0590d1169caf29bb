"""Numbers read from databases, profiles and stored JSON: one rule for what counts as one."""

from __future__ import annotations

import math
from decimal import Decimal
from numbers import Real
from typing import Any, TypeVar

D = TypeVar("D")


def finite_float(value: Any, default: D = None) -> float | D:  # type: ignore[assignment]  # None: D is None
    """``value`` as a finite float if it is a number (int, float, Decimal, NumPy scalars);
    otherwise ``default``.  Booleans, text, NaN and infinities are not numbers here: a
    JSON ``true`` or ``"20"`` must not compare equal to 1 or 20, and a NaN is no statistic."""
    if isinstance(value, bool) or not isinstance(value, (Real, Decimal)):
        return default
    try:
        number = float(value)
    except (OverflowError, ValueError):
        return default
    return number if math.isfinite(number) else default
