"""Labels written several ways: misspellings, token-prefix variants, case inside labels.

Works on a column's value counts (``text_values.value_counts``), so every backend gives
the same groups.  Numbers, signs and dates are never variants of each other: '-0.6'
and '0.6', or two dates one keystroke apart, are different values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cataloger_dagster.core.issues.text_values import best_date_format, parse_date, parse_number

MISSPELLING_MIN_LENGTH = 5     # shorter labels ('PG', 'IL') are one edit from many real ones
MISSPELLING_MAX_RATIO = 0.25   # the variant is at most this share of its canonical value's rows
PREFIX_MIN_LENGTH = 4
PREFIX_MAX_EXTRA_TOKENS = 2
FIRST_TOKEN_MAX_SHARE = 0.2    # first words this much rarer than values: they are a category (a make)
# Words a company's name may carry or drop: 'AIRBUS' / 'AIRBUS INDUSTRIE' are one maker,
# 'Sony Pictures' / 'Sony Pictures Classics' are two.
COMPANY_WORDS = {"inc", "incorporated", "co", "corp", "corporation", "company", "ltd", "limited", "llc",
                 "plc", "gmbh", "ag", "sa", "industrie", "industries", "aircraft", "group", "intl",
                 "international", "mfg", "manufacturing"}
_TOKEN = re.compile(r"[^\W\d_]{3,}")   # a word of letters, for case comparison
_SENTENCE = re.compile(r"[.!?;:]\s+")
_SPLIT = re.compile(r"[\s\-/]+")


@dataclass
class Variants:
    """canonical value -> {each spelling: rows}; ``why`` says which rule joined each variant."""

    groups: dict[str, dict[str, int]] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    part: str = "value"          # "value" or "first word" (cars' makes inside their names)

    @property
    def rows(self) -> int:
        return sum(n for canon, g in self.groups.items() for v, n in g.items() if v != canon)

    def __bool__(self) -> bool:
        return bool(self.groups)


def normal_key(value: str) -> str:
    folded = value.casefold().replace("&", " and ")
    return re.sub(r"[\s_\-]+", " ", folded).strip()


def edit_distance(a: str, b: str, limit: int = 2) -> int:
    """Optimal string alignment distance (a transposition is one edit), capped at limit + 1."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def _labels(values: dict[str, int]) -> dict[str, int]:
    """The values that are words, not numbers or dates."""
    labels = {v: n for v, n in values.items() if v.strip() and parse_number(v) is None}
    fmt = best_date_format(labels) if labels else None
    if fmt:
        labels = {v: n for v, n in labels.items() if parse_date(v, fmt) is None}
    return labels


def _misspelling(rare: str, common: str) -> bool:
    a, b = normal_key(rare), normal_key(common)
    if min(len(a), len(b)) < MISSPELLING_MIN_LENGTH or any(ch.isdigit() for ch in a + b):
        return False
    return edit_distance(a, b, limit=1) == 1


def _prefix_variant(short: str, long: str, *, any_words: bool) -> bool:
    """'AIRBUS' / 'AIRBUS INDUSTRIE': one is the other's first words, and the rest are words a
    company name carries or drops (any words at all when comparing makes: 'mercedes' / 'mercedes-benz')."""
    a, b = _SPLIT.split(normal_key(short)), _SPLIT.split(normal_key(long))
    if len(a) >= len(b) or b[:len(a)] != a or len(b) - len(a) > PREFIX_MAX_EXTRA_TOKENS:
        return False
    if not any_words and not set(b[len(a):]) <= COMPANY_WORDS:
        return False
    return len("".join(a)) >= PREFIX_MIN_LENGTH and not any(ch.isdigit() for ch in long)


def group_variants(values: dict[str, int], *, makes: bool = False) -> Variants:
    """Spellings of one label: same letters but case or spacing, one edit apart and much
    rarer, or the first words of another label."""
    labels = _labels(values)
    groups: dict[str, dict[str, int]] = {}
    for value, n in sorted(labels.items()):
        groups.setdefault(normal_key(value), {})[value] = n
    why = {key: "case or spacing" for key, g in groups.items() if len(g) > 1}
    total = {key: sum(g.values()) for key, g in groups.items()}
    order = sorted(groups, key=lambda k: (-total[k], k))
    for i, big in enumerate(order):
        for small in order[i + 1:]:
            if big not in groups or small not in groups:
                continue
            rule = None
            if total[small] <= MISSPELLING_MAX_RATIO * total[big] and _misspelling(small, big):
                rule = "one letter apart"
            elif _prefix_variant(small, big, any_words=makes) or _prefix_variant(big, small, any_words=makes):
                rule = "the same first words"
            if rule:
                groups[big].update(groups.pop(small))
                why[big] = rule if big not in why else f"{why[big]}; {rule}"
    variants = Variants()
    for key, g in groups.items():
        if len(g) > 1:
            canon = max(sorted(g), key=g.get)
            variants.groups[canon] = dict(sorted(g.items(), key=lambda kv: (-kv[1], kv[0])))
            variants.why[canon] = why[key]
    return variants


def first_word_variants(values: dict[str, int]) -> Variants:
    """Variants of a category hidden in the first word of longer values ('chevroelt chevelle')."""
    words: dict[str, int] = {}
    multi = 0
    for value, n in _labels(values).items():
        tokens = value.split()
        if len(tokens) > 1:
            multi += n
            words[tokens[0]] = words.get(tokens[0], 0) + n
    rows = sum(values.values())
    if not words or multi < 0.8 * rows or len(words) > FIRST_TOKEN_MAX_SHARE * len(values):
        return Variants(part="first word")
    found = group_variants(words, makes=True)
    found.part = "first word"
    return found


def case_inside_labels(values: dict[str, int]) -> dict[str, dict[str, list[str]]]:
    """Words written with different capitals inside labels ('Adelie Penguin' / 'Gentoo penguin'):
    word -> {spelling: [labels]}.  Only words after the first, where sentence case cannot explain it."""
    forms: dict[str, dict[str, list[str]]] = {}
    for value in sorted(_labels(values)):
        for sentence in _SENTENCE.split(value):   # a capital after a full stop is no variant
            for token in _TOKEN.findall(sentence)[1:]:
                forms.setdefault(token.casefold(), {}).setdefault(token, []).append(value)
    return {word: spellings for word, spellings in forms.items() if len(spellings) > 1}
