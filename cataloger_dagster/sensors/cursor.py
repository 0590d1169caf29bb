"""Reading a sensor's stored cursor: one error, and one way to say how to recover."""

from __future__ import annotations

import json
from typing import Any, Callable, TypeVar

T = TypeVar("T")


class BadCursor(ValueError):
    """The stored cursor is not one this sensor wrote."""


def parse_cursor(cursor: str, parse: Callable[[Any], T], *, sensor: str, empty_means: str, initial: str) -> T:
    """``parse(json.loads(cursor))``.  A cursor it cannot read (``parse`` raises ValueError,
    KeyError or TypeError) is a `BadCursor` saying how to reset it: starting over silently
    could redo every table's work, so a person chooses."""
    try:
        return parse(json.loads(cursor))
    except (ValueError, KeyError, TypeError) as exc:
        raise BadCursor(
            f"{sensor} cursor is not valid ({exc}): reset the sensor's cursor in the Dagster UI "
            f"({empty_means}) or set it to {initial}"
        ) from None
