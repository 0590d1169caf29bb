"""The values that stand for a missing one: every placeholder word, and what each is taken for.

This is the one list.  Each user takes the words of the roles it needs, by name:

* the profile counts the PROFILED words in every text column of every table (one cheap `IN`
  per column, so only the commonest);
* the detectors (core/issues/text_values.py) take the UNKNOWN words, or one mark repeated, as a
  placeholder in any column, and the TYPED ones only among numbers or dates;
* the investigation checks receive the same words as literals of the session script's helpers
  block (core/investigate/code.py), since the script they run stands alone.

Words are as `normal` makes a value: lower case (casefolded), runs of white space as one space.
"""

from __future__ import annotations

import enum
import re


class Role(enum.Flag):
    UNKNOWN = enum.auto()  # says "unknown" in any column: 'N/A' in a label column too
    # a placeholder only among numbers or dates: in a label column 'None' is content ('None' =
    # no damage), and a zero date is one only where dates are
    TYPED = enum.auto()
    BLANK = enum.auto()  # the empty text
    PROFILED = enum.auto()  # counted by the profile (its "sentinel" pattern) in every text column


_U, _T, _P = Role.UNKNOWN, Role.TYPED, Role.PROFILED

PLACEHOLDERS: dict[str, Role] = {
    "na": _U | _P,
    "n/a": _U | _P,
    "null": _U | _P,
    "none": _T | _P,
    "-": _U | _P,
    "?": _U | _P,
    "nan": _U | _P,
    "": Role.BLANK | _P,
    "missing": _U | _P,
    "unknown": _U | _P,
    "#na": _U,
    "#n/a": _U,
    "nil": _U,
    "undefined": _U,
    "tbd": _U,
    "tba": _U,
    "--": _U,
    "not rated": _U,
    "not known": _U,
    "not available": _U,
    "not applicable": _U,
    "not specified": _U,
    "not stated": _U,
    "not reported": _U,
    "not given": _U,
    "not recorded": _U,
    "no data": _U,
    "unspecified": _U,
    "undetermined": _U,
    "blank": _U,
    "empty": _U,
    "#value!": _U,
    "#ref!": _U,
    "#div/0!": _U,
    "0000-00-00": _T,
    "0000-00-00 00:00:00": _T,
    "00/00/0000": _T,
}

# A value made of one of these marks alone, repeated ('???', '---', '...'), says "unknown" too.
PLACEHOLDER_MARKS = "?-."

# Characters no placeholder holds, even after case folding ('#DIV/0!' has only a zero): a free-text
# column whose every value holds one (an e-mail's '@', a hash's digits) has no placeholder.
NEVER_IN_PLACEHOLDER_CHARS = "@123456789"


def words(role: Role) -> tuple[str, ...]:
    """The words that have every flag of `role`, in the order above."""
    return tuple(word for word, roles in PLACEHOLDERS.items() if role in roles)


def normal(value: str) -> str:
    """A value as the words are written: casefolded, runs of white space as one space."""
    return " ".join(value.split()).casefold()


def full_match(placeholders: tuple[str, ...], marks: str = "") -> re.Pattern[str]:
    """A regex matching exactly one of `placeholders` (normal values), or one of `marks` repeated."""
    alternatives = [re.escape(w) for w in sorted(placeholders, key=len, reverse=True)]
    alternatives += [f"{re.escape(mark)}+" for mark in marks]
    return re.compile(f"^(?:{'|'.join(alternatives)})$")


UNKNOWN_WORDS = words(Role.UNKNOWN)
TYPED_PLACEHOLDERS = words(Role.TYPED)
PROFILED_WORDS = words(Role.PROFILED)
