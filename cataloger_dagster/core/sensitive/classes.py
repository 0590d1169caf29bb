"""The classes of personal or secret data a column can hold: the one list every part reads."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DataClass:
    key: str  # what the profile, tags and `--json` carry
    label: str  # what a page's badge says
    personal: bool  # about a person (the "where personal data lives" list); else a secret


CLASSES: tuple[DataClass, ...] = (
    DataClass("email", "e-mail", True),
    DataClass("phone", "phone number", True),
    DataClass("person_name", "person name", True),
    DataClass("postal_address", "postal address", True),
    DataClass("postcode", "postcode", True),
    DataClass("date_of_birth", "date of birth", True),
    DataClass("national_id", "national id", True),
    DataClass("payment_card", "payment card", True),
    DataClass("iban", "IBAN", True),
    DataClass("ip_address", "IP address", True),
    DataClass("mac_address", "MAC address", True),
    DataClass("geolocation", "precise location", True),
    DataClass("username", "username", True),
    DataClass("crypto_wallet", "crypto wallet", True),
    DataClass("secret", "secret or credential", False),
)

BY_KEY: dict[str, DataClass] = {c.key: c for c in CLASSES}
KEYS: tuple[str, ...] = tuple(BY_KEY)


def label(key: str) -> str:
    return BY_KEY[key].label if key in BY_KEY else key


def column_tags(keys: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Dagster tags of a column holding these classes: ``{"pii": "", "sensitive/email": ""}``."""
    if not keys:
        return {}
    tags = {"pii": ""} if any(BY_KEY[k].personal for k in keys if k in BY_KEY) else {}
    return {**tags, **{f"sensitive/{k}": "" for k in keys}}
