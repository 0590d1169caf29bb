"""Generated columns of personal data, one table per locale, for the classifier's recall
(tests/core/sensitive/test_accuracy.py, benchmarks/bench_sensitive_accuracy.py).

Faker, seeded, gives most classes; where its values are not real ones (the UK's "ZZ" National
Insurance numbers, Germany's US-shaped numbers, no Bitcoin addresses at all), the value is made
here by the format's published rules, so a validator that refuses it would be right to.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any, Callable

LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL")

# class -> (column name, its kind in the profile)
COLUMNS: dict[str, tuple[str, str]] = {
    "email": ("email", "string"),
    "phone": ("phone_number", "string"),
    "person_name": ("full_name", "string"),
    "postal_address": ("street_address", "string"),
    "postcode": ("postcode", "string"),
    "date_of_birth": ("date_of_birth", "date"),
    "national_id": ("national_id", "string"),
    "payment_card": ("card_number", "string"),
    "iban": ("iban", "string"),
    "ip_address": ("ip_address", "string"),
    "mac_address": ("mac_address", "string"),
    "geolocation": ("home_latitude", "float"),
    "username": ("username", "string"),
    "crypto_wallet": ("btc_wallet", "string"),
    "secret": ("password", "string"),
}

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def bitcoin_address(rng: random.Random) -> str:
    """A pay-to-pubkey-hash address: version 0, 20 random bytes, Base58Check."""
    payload = b"\x00" + rng.randbytes(20)
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    n, out = int.from_bytes(data, "big"), ""
    while n:
        n, r = divmod(n, 58)
        out = _B58[r] + out
    return "1" * (len(data) - len(data.lstrip(b"\x00"))) + out


def uk_nino(rng: random.Random) -> str:
    first, second = rng.choice("ABCEGHJKLMNPRSTWXYZ"), rng.choice("ABCEGHJKLMNPRSTWXYZ")
    if first + second in ("GB", "NK", "TN", "ZZ", "BG", "KN", "NT"):
        first = "A"
    return f"{first}{second} {rng.randint(0, 99):02d} {rng.randint(0, 99):02d} {rng.randint(0, 99):02d} {rng.choice('ABCD')}"


def german_tax_id(rng: random.Random) -> str:
    from stdnum.de import idnr
    from stdnum.iso7064 import mod_11_10

    while True:  # the ten digits must repeat one digit (the rule is_valid checks): draw until they do
        body = str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(9))
        candidate = body + mod_11_10.calc_check_digit(body)
        if idnr.is_valid(candidate):
            return candidate


def national_id(fake, locale: str, rng: random.Random) -> str:
    if locale == "en_GB":
        return uk_nino(rng)
    if locale == "de_DE":
        return german_tax_id(rng)
    if locale == "es_ES":
        return fake.nif()
    return fake.ssn()  # US SSN, French NIR, Italian codice fiscale, Dutch BSN


def generators(fake, locale: str, rng: random.Random) -> dict[str, Callable[[], Any]]:
    return {
        "email": fake.email,
        "phone": fake.phone_number,
        "person_name": fake.name,
        "postal_address": fake.street_address,
        "postcode": fake.postcode,
        "date_of_birth": lambda: fake.date_of_birth(minimum_age=1, maximum_age=100),
        "national_id": lambda: national_id(fake, locale, rng),
        "payment_card": fake.credit_card_number,
        "iban": fake.iban,
        "ip_address": lambda: fake.ipv4() if rng.random() < 0.8 else fake.ipv6(),
        "mac_address": fake.mac_address,
        "geolocation": lambda: round(float(fake.latitude()), 6),
        "username": fake.user_name,
        "crypto_wallet": lambda: bitcoin_address(rng),
        "secret": lambda: fake.password(length=12),
    }


def locale_table(locale: str, rows: int, seed: int = 7) -> tuple[dict[str, str], list[dict[str, Any]], dict[str, str]]:
    """(column kinds, rows, expected class per column) of one locale's table of people."""
    from faker import Faker

    fake = Faker(locale)
    fake.seed_instance(seed)
    rng = random.Random(f"{seed}-{locale}")
    make = generators(fake, locale, rng)
    kinds = {"customer_id": "integer", **{name: kind for name, kind in COLUMNS.values()}}
    expected = {name: key for key, (name, _) in COLUMNS.items()}
    data = [{"customer_id": i + 1, **{COLUMNS[key][0]: make[key]() for key in COLUMNS}} for i in range(rows)]
    return kinds, data, expected
