"""Whether one value is of a class: field libraries (python-stdnum, phonenumbers, email-validator)
and the published rules of a format, never a pattern alone where a checksum or a rule exists.

The rules live in core/sensitive/rules.py, which the sandbox's check of a class runs too; this
module adds the one the host alone can run, an e-mail address checked by email-validator.
Each validator takes the value as text (a number's digits, a date's ISO form) and answers True or
False; none raises.  Presidio's pattern recognizers are not used here: importing presidio-analyzer
imports spaCy (about 3 s a process, measured), more than the whole classification of a database.
"""

from __future__ import annotations

import email_validator

from cataloger_dagster.core.sensitive.rules import (
    CARD_PREFIX,
    MAC,
    PHONE_REGIONS,
    POSTCODE,
    TOKEN,
    coordinate,
    credential,
    crypto_wallet,
    date_of_birth,
    digits_of,
    ethereum_address,
    formatted_phone,
    iban_number,
    ip_address,
    known_secret,
    mac_address,
    national_id,
    payment_card,
    person_name,
    phone,
    phone_shaped,
    postal_address,
    postcode,
    uk_nino,
    username,
)

__all__ = [
    "CARD_PREFIX",
    "MAC",
    "PHONE_REGIONS",
    "POSTCODE",
    "TOKEN",
    "coordinate",
    "credential",
    "crypto_wallet",
    "date_of_birth",
    "digits_of",
    "email",
    "ethereum_address",
    "formatted_phone",
    "iban_number",
    "ip_address",
    "known_secret",
    "mac_address",
    "national_id",
    "payment_card",
    "person_name",
    "phone",
    "phone_shaped",
    "postal_address",
    "postcode",
    "uk_nino",
    "username",
]


def email(text: str) -> bool:
    if "@" not in text or len(text) > 254 or " " in text.strip():
        return False
    try:
        email_validator.validate_email(text.strip(), check_deliverability=False, allow_smtputf8=True)
    except email_validator.EmailNotValidError:
        return False
    return True
