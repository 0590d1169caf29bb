"""Names as words: one reading of column and table names for the detectors and the agent."""

from __future__ import annotations

import functools
import re
_LAST_WORD = re.compile(r"[A-Za-z]+$")
_MASS_NOUNS = {"data", "metadata", "media"}   # a table of data holds data, not one datum

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SEPARATORS = re.compile(r"[\W_]+")   # \W is Unicode-aware: "prénom" stays one word


def words(name: str) -> list[str]:
    """The lower-case words of a name, in order: ``"customerID_2"`` -> ``["customer", "id", "2"]``;
    camelCase, underscores, spaces and punctuation all separate words."""
    return [w for w in _SEPARATORS.split(_CAMEL.sub(r"\1_\2", name).lower()) if w]


def singular(name: str) -> str:
    """A plural name's last word made singular by inflect, the rest kept as given:
    ``movies`` -> ``movie``, ``categories`` -> ``category``, ``order_boxes`` -> ``order_box``,
    ``species`` stays ``species``; a word inflect does not know as a plural (``address``,
    ``status``, ``analysis``) is kept."""
    match = _LAST_WORD.search(name)
    if not match:
        return name
    word = match.group(0)
    if word.lower().endswith(("ss", "is", "us")) or word.lower() in _MASS_NOUNS:
        return name
    one = _inflect().singular_noun(word)
    return name[:match.start()] + one if one else name


def plural(noun: str) -> str:
    """``row`` -> ``rows``, ``category`` -> ``categories``, ``movie`` -> ``movies``."""
    return _inflect().plural_noun(noun)


@functools.cache
def _inflect():
    # imported on first use: inflect takes seconds to import (its type checks), and most
    # processes that load the code location (sensors, the webserver, most steps) never need it
    import inflect

    return inflect.engine()
