"""A column's classes of personal or secret data, from a sample of its values checked by
validators, its name and its neighbours' names.

A class whose values carry their own proof (a checksum, a structure: an e-mail, a card, an IBAN,
an IP or MAC address, a token of a published format) is decided by the values alone when nearly
all of them validate.  A class whose values could be anything of their shape (a name, a postcode,
a date, nine digits, a coordinate) needs the column's name too, and a coordinate needs neighbours
that say the rows are people: an airport's latitude is not a person's location.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from cataloger_dagster.core import text
from cataloger_dagster.core.models import TEMPORAL_KINDS, SensitiveClass
from cataloger_dagster.core.sensitive import free_text, signals
from cataloger_dagster.core.sensitive import validators as v
from cataloger_dagster.core.sensitive.classes import BY_KEY
from cataloger_dagster.core.sensitive.masking import shape
from cataloger_dagster.core.sensitive.rules import value_text

SAMPLE_VALUES = 200  # non-null values looked at per column
BY_VALUES = 0.8  # share of validating values that decides a self-proving class alone
WITH_NAME = 0.5  # the share that decides it when the column's name points at it too
EXAMPLES = 3

TEXT_KINDS = ("string", "other", "json")
NUMBER_KINDS = ("integer", "decimal")


@dataclass(frozen=True)
class Rule:
    key: str
    validate: Callable[[Any], bool]
    by_values: bool  # may be decided from the values alone
    kinds: tuple[str, ...] = TEXT_KINDS
    signal: str = ""


RULES: tuple[Rule, ...] = (
    Rule("email", v.email, True, signal="email-validator"),
    Rule("payment_card", v.payment_card, True, TEXT_KINDS + NUMBER_KINDS, "Luhn check and card-network prefix"),
    Rule("iban", v.iban_number, True, signal="IBAN check digits (python-stdnum)"),
    Rule("ip_address", v.ip_address, True, signal="IP address (ipaddress)"),
    Rule("mac_address", v.mac_address, True, signal="MAC address structure"),
    Rule("crypto_wallet", v.crypto_wallet, True, signal="Bitcoin address checksum (python-stdnum)"),
    Rule("crypto_wallet", v.ethereum_address, False, signal="Ethereum address structure"),
    Rule("secret", v.known_secret, True, signal="published credential format"),
    Rule("secret", v.credential, False, signal="one word of six or more characters"),
    Rule("national_id", v.national_id, True, TEXT_KINDS + NUMBER_KINDS, "national id check (python-stdnum)"),
    Rule("phone", v.phone, True, TEXT_KINDS + NUMBER_KINDS, "phonenumbers"),
    Rule("phone", v.phone_shaped, False, signal="written as a phone number"),
    Rule("person_name", v.person_name, False, signal="words of letters, capitalised"),
    Rule("postal_address", v.postal_address, False, signal="words with a number"),
    Rule("postcode", v.postcode, False, TEXT_KINDS + NUMBER_KINDS, "a country's postcode format"),
    Rule("date_of_birth", v.date_of_birth, False, TEXT_KINDS + TEMPORAL_KINDS, "a date within a lifetime"),
    Rule("username", v.username, False, signal="one word"),
)


@dataclass
class ColumnValues:
    name: str
    kind: str
    values: list[Any]  # the sampled non-null values


def sample_columns(kinds: dict[str, str], rows: Iterable[dict[str, Any]]) -> list[ColumnValues]:
    """The sampled rows turned into each column's non-null values (at most SAMPLE_VALUES)."""
    columns = {name: ColumnValues(name, kind, []) for name, kind in kinds.items()}
    for row in rows:
        for name, col in columns.items():
            value = row.get(name)
            if value is not None and value != "" and len(col.values) < SAMPLE_VALUES:
                col.values.append(value)
    return list(columns.values())


def classify(columns: list[ColumnValues], table: str = "") -> dict[str, list[SensitiveClass]]:
    """Each column's classes with their evidence (columns with none are left out)."""
    names = [c.name for c in columns]
    found: dict[str, list[SensitiveClass]] = {}
    coordinates: list[ColumnValues] = []
    for col in columns:
        neighbours = [n for n in names if n != col.name]
        classes = _column_classes(col, neighbours, table)
        if classes:
            found[col.name] = classes
        elif "geolocation" in signals.name_classes(col.name):
            coordinates.append(col)
    # a coordinate is a person's whereabouts only in a table of people, or beside their data
    personal_beside = any(BY_KEY[c.name].personal for cs in found.values() for c in cs)
    for col in coordinates:
        neighbours = [n for n in names if n != col.name]
        located = _geolocation(col, neighbours, table, personal_beside)
        if located:
            found[col.name] = [located]
    return found


def _column_classes(col: ColumnValues, neighbours: list[str], table: str) -> list[SensitiveClass]:
    values = col.values
    if not values:
        return []
    named = signals.name_classes(col.name)
    texts = [value_text(x) for x in values]
    wordy = col.kind in TEXT_KINDS and free_text.is_free_text(texts)
    if wordy and not named and not signals.bare_name(col.name):
        return _in_free_text(texts)
    people = signals.about_people(neighbours, table)
    # of the values with a digit ("NA" and the like left aside), nearly all digits and separators alone
    numeric = [t.replace(" ", "").replace("-", "").isdigit() for t in texts if any(ch.isdigit() for ch in t)]
    digits_only = bool(numeric) and sum(numeric) >= 0.9 * len(numeric)
    decided: dict[str, SensitiveClass] = {}
    for rule in RULES:
        if col.kind not in rule.kinds or rule.key in decided:
            continue
        by_name = rule.key in named or (rule.key == "person_name" and signals.bare_name(col.name) and people)
        if not by_name and not (rule.by_values and _self_proving(rule.key, col.kind, digits_only)):
            continue
        matched = [t for t, x in zip(texts, values) if _valid(rule, x, t)]
        share = len(matched) / len(values)
        needed = WITH_NAME if by_name else BY_VALUES
        if rule.key == "person_name" and rule.key not in named:
            needed = BY_VALUES
        if share < needed or (by_name and not matched):
            continue
        used = [rule.signal] if rule.signal else []
        if rule.key in named:
            used.append(f"column name: {col.name}")
        elif by_name:
            used.append("neighbours: the rows are people")
        decided[rule.key] = _evidence(rule.key, matched, len(values), used)
    if not decided and wordy:  # a name that promised a class its prose does not hold
        return _in_free_text(texts)
    return _most_specific(list(decided.values()))


def _self_proving(key: str, kind: str, digits_only: bool) -> bool:
    """Values that prove their class without the column's name: digits alone (or a number column)
    prove no phone number and no national id (an order number validates in some country by chance)."""
    if key in ("phone", "national_id"):
        return not digits_only and kind in TEXT_KINDS
    return True


def _valid(rule: Rule, value: Any, text: str) -> bool:
    try:
        return bool(rule.validate(value if rule.key == "date_of_birth" else text))
    except Exception:  # a validator's failure on one value is that value not validating
        return False


def _most_specific(found: list[SensitiveClass]) -> list[SensitiveClass]:
    """One value validates as several classes (a token is also "one word"): keep the best proven."""
    if not found:
        return []
    best = max(found, key=lambda c: c.share)
    keep = [c for c in found if c.share >= best.share - 0.05]
    # a secret or a username is what any word is: only when nothing more definite is
    definite = [c for c in keep if c.name not in ("username", "secret", "person_name")]
    return definite if definite else keep[:1]


def _in_free_text(texts: list[str]) -> list[SensitiveClass]:
    counts = free_text.occurrences(texts)
    out = []
    for key, n in sorted(counts.items()):
        holding = [t for t in texts if key in free_text.classes_in(t)][:EXAMPLES]
        out.append(
            SensitiveClass(
                name=key,
                share=round(n / len(texts), 4),
                sampled=len(texts),
                matched=n,
                examples=[shape(t) for t in holding],
                signals=["found inside free text"],
                in_text=True,
            )
        )
    return out


def _geolocation(
    col: ColumnValues, neighbours: list[str], table: str, personal_beside: bool
) -> Optional[SensitiveClass]:
    if col.kind not in ("float", "decimal", "string"):
        return None
    people = signals.about_people(neighbours, table)
    if not (people or personal_beside):
        return None
    bound = coordinate_bound(col.name)
    matched = [str(x) for x in col.values if v.coordinate(x, bound)]
    share = len(matched) / len(col.values)
    if share < BY_VALUES:
        return None
    why = "neighbours: the rows are people" if people else "neighbours: personal data in the table"
    return _evidence(
        "geolocation", matched, len(col.values), [f"column name: {col.name}", "three or more decimals", why]
    )


def _evidence(key: str, matched: list[str], sampled: int, used: list[str]) -> SensitiveClass:
    return SensitiveClass(
        name=key,
        share=round(len(matched) / sampled, 4),
        sampled=sampled,
        matched=len(matched),
        examples=[shape(m) for m in matched[:EXAMPLES]],
        signals=used,
    )


def coordinate_bound(column: str) -> float:
    """A longitude's bound (180) when the column's name says longitude, else a latitude's (90)."""
    return 180.0 if set(text.words(column)) & {"lon", "lng", "long", "longitude"} else 90.0
