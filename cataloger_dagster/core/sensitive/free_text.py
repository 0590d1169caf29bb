"""The personal or secret data inside free text (a note, a message, a description): each finder
proposes candidates by pattern and keeps those a validator accepts."""

from __future__ import annotations

import re
from typing import Callable, Iterable

from cataloger_dagster.core.sensitive import validators as v

_FINDERS: dict[str, tuple[re.Pattern[str], Callable[[str], bool]]] = {
    "email": (re.compile(r"[\w.+\-']+@[\w\-]+(?:\.[\w\-]+)+"), v.email),
    "payment_card": (re.compile(r"(?<![\d\-+])\d(?:[ \-]?\d){11,18}(?![\d\-])"), v.payment_card),
    "iban": (re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b"), v.iban_number),
    "ip_address": (
        re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])|\b(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}\b"),
        v.ip_address,
    ),
    "mac_address": (re.compile(r"\b(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}\b"), v.mac_address),
    "national_id": (
        re.compile(
            r"\b\d{3}-\d{2}-\d{4}\b|\b[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b|\b[A-Z]{6}\d{2}[A-Z]\d{2}[A-Z]\d{3}[A-Z]\b"
        ),
        v.national_id,
    ),
    "secret": (v.TOKEN, v.known_secret),
    # written as a phone number (an international prefix, parentheses or groups apart) and valid
    # for phonenumbers: a bare run of digits in prose is an order number as often as a phone
    "phone": (re.compile(r"(?<![\w+.\-])\+?\(?\d[\d ().\-]{5,20}\d(?![\w.\-])"), v.formatted_phone),
}


def classes_in(text: str) -> set[str]:
    """The classes one text holds."""
    return {key for key, (pattern, valid) in _FINDERS.items() if any(valid(m.group(0)) for m in pattern.finditer(text))}


def occurrences(values: Iterable[str]) -> dict[str, int]:
    """Of `values`, how many hold each class."""
    counts: dict[str, int] = {}
    for text in values:
        for key in classes_in(text):
            counts[key] = counts.get(key, 0) + 1
    return counts


def is_free_text(values: list[str]) -> bool:
    """Prose rather than one datum a value: most values have several words (of letters: the groups
    of a phone number are no words)."""
    if not values:
        return False
    wordy = sum(sum(any(ch.isalpha() for ch in w) for w in s.split()) >= 3 for s in values)
    return wordy >= 0.5 * len(values)


def spans(text: str) -> list[tuple[int, int]]:
    """Where in `text` the values of a self-proving class are, in order, none overlapping."""
    if len(text) < 7:
        return []
    found = [m.span() for pattern, valid in _FINDERS.values() for m in pattern.finditer(text) if valid(m.group(0))]
    merged: list[tuple[int, int]] = []
    for start, stop in sorted(found):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(stop, merged[-1][1]))
        else:
            merged.append((start, stop))
    return merged
