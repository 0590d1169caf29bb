"""What a catalog run lost on a backend: statistics the profile could not compute, detectors
that were skipped.  For test messages that say why a backend differs."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

from cataloger_dagster.core.models import TableProfile

# words of a profile note that say a statistic is missing, not merely undefined for the type
LOST = ("failed", "not available", "cannot")


Problem = tuple[str, str]  # (where, what)


def lost_statistics(table: str, profile: TableProfile) -> list[Problem]:
    return [(f"{table}.{c.name} ({c.dtype})", note) for c in profile.columns for note in c.notes
            if any(word in note for word in LOST)]


@contextmanager
def skipped_detectors() -> Iterator[list[Problem]]:
    """The detectors' warnings ("detector x skipped on t.c: why") while the block runs."""
    found: list[Problem] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            where, _, why = record.getMessage().partition(": ")
            found.append((where, why))

    handler = Collect(logging.WARNING)
    logger = logging.getLogger("cataloger_dagster.core.issues")
    logger.addHandler(handler)
    try:
        yield found
    finally:
        logger.removeHandler(handler)


def grouped(problems: list[Problem]) -> list[str]:
    """One line per distinct message (values, SQL and database names cut), how often, and where."""
    places: dict[str, list[str]] = {}
    for where, message in problems:
        message = message.split(" LINE 1:")[0]
        message = re.sub(r'"[^"]*"', '"..."', re.sub(r"FUNCTION \S+\.", "FUNCTION ", message))
        places.setdefault(message, []).append(where)
    return [f"{len(w)}x {m}  [{', '.join(w[:3])}{', ...' if len(w) > 3 else ''}]" for m, w in places.items()]
