"""Names as words: one reading of column and table names for the detectors and the agent."""

from __future__ import annotations

import re

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SEPARATORS = re.compile(r"[\W_]+")   # \W is Unicode-aware: "prénom" stays one word


def words(name: str) -> list[str]:
    """The lower-case words of a name, in order: ``"customerID_2"`` -> ``["customer", "id", "2"]``;
    camelCase, underscores, spaces and punctuation all separate words."""
    return [w for w in _SEPARATORS.split(_CAMEL.sub(r"\1_\2", name).lower()) if w]


def singular(name: str) -> str:
    """A plural name's last word made singular, the rest kept as given: ``categories`` ->
    ``category``, ``order_boxes`` -> ``order_box``, ``orders`` -> ``order``; a name that
    ends in ``ss`` (``address``) is already singular."""
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith(("ses", "xes")):
        return name[:-2]
    if name.endswith("s") and not name.endswith("ss"):
        return name[:-1]
    return name
