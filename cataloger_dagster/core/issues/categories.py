"""Labels written several ways: misspellings, token-prefix variants, letter case.

Works on a column's value counts (``text_values.value_counts``), so every backend gives
the same groups.  Numbers, signs and dates are never variants of each other: '-0.6'
and '0.6', or two dates one keystroke apart, are different values; nor are short codes
and words ('MA' / 'ME', 'Mr' / 'Ms', 'Jan' / 'Jun', 'Type I' / 'Type II'), where one
letter is the whole difference between two real values.  Spaces at the ends of a label
are another finding (whitespace_values): `merge_spacing` sets them aside first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rapidfuzz.distance import OSA

from cataloger_dagster.core.issues.text_values import best_date_format, parse_date, parse_number

MISSPELLING_MIN_LENGTH = 5  # shorter labels ('PG', 'IL') are one edit from many real ones
MISSPELLING_MAX_RATIO = 1 / 3  # the variant is at most this share of its canonical value's rows
TWO_EDITS_MIN_LENGTH = 8  # words this long may be two edits from their spelling ('accomodaton')
TWO_EDITS_MAX_RATIO = 0.1  # ...when the variant is this much rarer
CODE_CASE_SHARE = 0.95  # a code column writes its letters one way on this share of rows...
CODE_CASE_MAX_SHARE = 0.05  # ...and the codes written otherwise are at most this share
PREFIX_MIN_LENGTH = 4
PREFIX_MAX_EXTRA_TOKENS = 2
FIRST_TOKEN_MAX_SHARE = 0.2  # first words this much rarer than values: they are a category (a make)
# Words a company's name may carry or drop: 'AIRBUS' / 'AIRBUS INDUSTRIE' are one maker,
# 'Sony Pictures' / 'Sony Pictures Classics' are two.
COMPANY_WORDS = {
    "inc",
    "incorporated",
    "co",
    "corp",
    "corporation",
    "company",
    "ltd",
    "limited",
    "llc",
    "plc",
    "gmbh",
    "ag",
    "sa",
    "industrie",
    "industries",
    "aircraft",
    "group",
    "intl",
    "international",
    "mfg",
    "manufacturing",
}
_TOKEN = re.compile(r"[^\W\d_]{3,}")  # a word of letters, for case comparison
_SENTENCE = re.compile(r"[.!?;:]\s+")
_SPLIT = re.compile(r"[\s\-/]+")


@dataclass
class Variants:
    """canonical value -> {each spelling: rows}; ``why`` says which rule joined each variant."""

    groups: dict[str, dict[str, int]] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    part: str = "value"  # "value" or "first word" (cars' makes inside their names)

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
    return int(OSA.distance(a, b, score_cutoff=limit))


def merge_spacing(values: dict[str, int]) -> dict[str, int]:
    """The values with spaces at their ends or doubled inside counted with the same text spaced
    right ('shipped ' with 'shipped'); a padded value without such a twin stands for itself."""
    forms: dict[str, dict[str, int]] = {}
    for value, n in values.items():
        forms.setdefault(" ".join(value.split()), {})[value] = n
    merged: dict[str, int] = {}
    for form, spellings in forms.items():
        kept = form if form in spellings else max(sorted(spellings), key=spellings.__getitem__)
        merged[kept] = sum(spellings.values())
    return merged


def _labels(values: dict[str, int]) -> dict[str, int]:
    """The values that are words, not numbers or dates."""
    labels = {v: n for v, n in values.items() if v.strip() and parse_number(v) is None}
    fmt = best_date_format(labels) if labels else None
    if fmt:
        labels = {v: n for v, n in labels.items() if parse_date(v, fmt) is None}
    return labels


def _differing_words(a: str, b: str) -> tuple[str, str]:
    """The part where two labels differ, widened to whole words: ('blond', 'blonde') of
    'blond hair' / 'blonde hair'; the whole labels when they have not the same words around it."""
    wa, wb = a.split(" "), b.split(" ")
    if len(wa) != len(wb):
        return a, b
    differ = [(x, y) for x, y in zip(wa, wb) if x != y]
    return (" ".join(x for x, _ in differ), " ".join(y for _, y in differ))


def _misspelling(rare: str, common: str, share: float) -> bool:
    """One edit apart (two for long words much rarer), in words of letters long enough that one
    letter does not make another real word: 'blond' / 'blonde', never 'Type I' / 'Type II'."""
    a, b = normal_key(rare), normal_key(common)
    if any(ch.isdigit() for ch in a + b):
        return False
    x, y = _differing_words(a, b)
    shortest = min(len(x), len(y))
    if shortest < MISSPELLING_MIN_LENGTH:
        return False
    limit = 2 if shortest >= TWO_EDITS_MIN_LENGTH and share <= TWO_EDITS_MAX_RATIO else 1
    return 1 <= edit_distance(x, y, limit=limit) <= limit


def _prefix_variant(short: str, long: str, *, any_words: bool) -> bool:
    """'AIRBUS' / 'AIRBUS INDUSTRIE': one is the other's first words, and the rest are words a
    company name carries or drops (any words at all when comparing makes: 'mercedes' / 'mercedes-benz')."""
    a, b = _SPLIT.split(normal_key(short)), _SPLIT.split(normal_key(long))
    if len(a) >= len(b) or b[: len(a)] != a or len(b) - len(a) > PREFIX_MAX_EXTRA_TOKENS:
        return False
    if not any_words and not set(b[len(a) :]) <= COMPANY_WORDS:
        return False
    return len("".join(a)) >= PREFIX_MIN_LENGTH and not any(ch.isdigit() for ch in long)


def group_variants(values: dict[str, int], *, makes: bool = False) -> Variants:
    """Spellings of one label: the same letters in another case (or separators), one or two
    edits apart and much rarer, or the first words of another label."""
    labels = _labels(values)
    groups: dict[str, dict[str, int]] = {}
    for value, n in sorted(labels.items()):
        groups.setdefault(normal_key(value), {})[value] = n
    why = {key: _same_letters_rule(g) for key, g in groups.items() if len(g) > 1}
    total = {key: sum(g.values()) for key, g in groups.items()}
    order = sorted(groups, key=lambda k: (-total[k], k))
    for i, big in enumerate(order):
        for small in order[i + 1 :]:
            if big not in groups or small not in groups:
                continue
            rule = None
            share = total[small] / total[big]
            if share <= MISSPELLING_MAX_RATIO and _misspelling(small, big, share):
                rule = "one letter apart" if edit_distance(small, big, limit=1) <= 1 else "two letters apart"
            elif _prefix_variant(small, big, any_words=makes) or _prefix_variant(big, small, any_words=makes):
                rule = "the same first words"
            if rule:
                groups[big].update(groups.pop(small))
                why[big] = rule if big not in why else f"{why[big]}; {rule}"
    variants = Variants()
    for key, g in groups.items():
        if len(g) > 1:
            canon = max(sorted(g), key=g.__getitem__)
            variants.groups[canon] = dict(sorted(g.items(), key=lambda kv: (-kv[1], kv[0])))
            variants.why[canon] = why[key]
    return variants


def _same_letters_rule(spellings: dict[str, int]) -> str:
    forms = {" ".join(v.split()).casefold() for v in spellings}
    return "letter case" if len(forms) == 1 else "letter case or separators"


def _letter_case(value: str) -> str | None:
    letters = [ch for ch in value if ch.isalpha()]
    if not letters:
        return None
    if all(ch.isupper() for ch in letters):
        return "upper"
    if all(ch.islower() for ch in letters):
        return "lower"
    return "mixed"


def _is_code(value: str) -> bool:
    """A code: letters with digits ('AL202011', 'B-17'), or one to three letters ('NY')."""
    core = value.strip()
    has_digit = any(ch.isdigit() for ch in core)
    return " " not in core and (has_digit or len(core) <= 3) and any(ch.isalpha() for ch in core)


def code_case_variants(values: dict[str, int]) -> Variants:
    """Codes whose letters break the case every other code of the column is written in
    ('Al202011' among 'AL202011', 'EP199901' ...): canonical spelling -> {spelling: rows}.
    Only where the column is codes, written one way on nearly every row."""
    rows = sum(values.values())
    codes = {v: n for v, n in values.items() if _is_code(v) and parse_number(v) is None}
    code_rows = sum(codes.values())
    if not rows or code_rows < 0.8 * rows:
        return Variants()
    by_case: dict[str, int] = {}
    for value, n in codes.items():
        case = _letter_case(value)
        if case:
            by_case[case] = by_case.get(case, 0) + n
    usual = max(("upper", "lower"), key=lambda c: by_case.get(c, 0))
    if by_case.get(usual, 0) < CODE_CASE_SHARE * code_rows:
        return Variants()
    odd = {v: n for v, n in codes.items() if _letter_case(v) not in (usual, None)}
    if not odd or sum(odd.values()) > CODE_CASE_MAX_SHARE * code_rows:
        return Variants()
    found = Variants()
    for value, n in sorted(odd.items()):
        canon = value.upper() if usual == "upper" else value.lower()
        group = found.groups.setdefault(canon, {canon: values[canon]} if canon in values else {})
        group[value] = n
        found.why[canon] = f"a code in {'lower' if usual == 'lower' else 'upper'} case elsewhere"
    return found


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
        for sentence in _SENTENCE.split(value):  # a capital after a full stop is no variant
            for token in _TOKEN.findall(sentence)[1:]:
                forms.setdefault(token.casefold(), {}).setdefault(token, []).append(value)
    return {word: spellings for word, spellings in forms.items() if len(spellings) > 1}
