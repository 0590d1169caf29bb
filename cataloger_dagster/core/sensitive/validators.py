"""Whether one value is of a class: field libraries (python-stdnum, phonenumbers, email-validator)
and the published rules of a format, never a pattern alone where a checksum or a rule exists.

Each validator takes the value as text (a number's digits, a date's ISO form) and answers True or
False; none raises.  Presidio's pattern recognizers are not used here: importing presidio-analyzer
imports spaCy (about 3 s a process, measured), more than the whole classification of a database.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
from typing import Any, Callable

import email_validator
import phonenumbers
from stdnum import bitcoin, iban, luhn
from stdnum.de import idnr
from stdnum.es import dni, nie
from stdnum.fi import hetu
from stdnum.fr import nir
from stdnum.it import codicefiscale
from stdnum.nl import bsn
from stdnum.pl import pesel
from stdnum.se import personnummer
from stdnum.us import ssn

# the regions a number without an international prefix is tried in: the locales the catalog is
# measured on, and a few large ones
PHONE_REGIONS = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "CA", "AU", "IN", "BR", "PL", "SE", "BE", "CH", "AT")
_DIGITS = re.compile(r"\d")
_SEPARATORS = re.compile(r"[\s\-.]")


def digits_of(text: str) -> str:
    return "".join(_DIGITS.findall(text))


def email(text: str) -> bool:
    if "@" not in text or len(text) > 254 or " " in text.strip():
        return False
    try:
        email_validator.validate_email(text.strip(), check_deliverability=False, allow_smtputf8=True)
    except email_validator.EmailNotValidError:
        return False
    return True


def phone(text: str) -> bool:
    s = re.sub(r"\s*(?:x|ext\.?)\s*\d+$", "", text.strip())  # an extension is no part of the number
    digits = digits_of(s)
    if not 7 <= len(digits) <= 15 or re.search(r"[A-Za-z]", s) or as_date(s) is not None:
        return False
    if len(set(digits)) < 3:  # '0000-00-00 00', '555-5555': a filler or a placeholder, no one's number
        return False
    if re.fullmatch(r"-?\d+[.,]\d+", s):  # a measurement with decimals
        return False
    s = re.sub(r"^(\+\d{1,3})\s*\(0\)", r"\1", s)  # "+49 (0) 30": the trunk 0 is dialled at home only
    s = re.sub(r"^00(?=[1-9])", "+", s)
    # a number written as people write phone numbers (an international prefix, the area code in
    # parentheses, groups apart) is taken when its length is possible in the region; a run of bare
    # digits only when the number is valid (an assigned range), as an order number is not
    formatted = s.startswith("+") or "(" in s or len(_SEPARATORS.findall(s)) >= 2
    regions = (None,) if s.startswith("+") else PHONE_REGIONS
    for region in regions:
        try:
            number = phonenumbers.parse(s, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(number) or (formatted and phonenumbers.is_possible_number(number)):
            return True
    return False


def phone_shaped(text: str) -> bool:
    """Written as a phone number (an international prefix or grouped digits, 7 to 15 of them), whether
    or not the number is assigned: enough when the column's name says phone."""
    s = re.sub(r"\s*(?:x|ext\.?)\s*\d+$", "", text.strip())
    return (
        7 <= len(digits_of(s)) <= 15
        and bool(re.fullmatch(r"\+?[\d\s().\-/]+", s))
        and (s.startswith("+") or len(_SEPARATORS.findall(s)) >= 1)
        and as_date(s) is None
    )


def formatted_phone(text: str) -> bool:
    """A phone number inside prose: written as one (not a bare run of digits) and valid or possible."""
    s = text.strip()
    return (s.startswith("+") or "(" in s or len(_SEPARATORS.findall(s)) >= 2) and phone(s)


# IIN ranges of the card networks (Visa, Mastercard, Amex, Discover, JCB, Diners, Maestro, UnionPay)
CARD_PREFIX = re.compile(
    r"^(?:4|5[1-5]|2[2-7]|3[47]|6011|64[4-9]|65|35|30[0-5]|36|38|5018|5020|5038|6304|67|62|50|5[6-9]|6|2131|1800|0604)"
)


def payment_card(text: str) -> bool:
    s = text.strip()
    if re.search(r"[^\d \-]", s):
        return False
    digits = digits_of(s)
    return 12 <= len(digits) <= 19 and bool(CARD_PREFIX.match(digits)) and luhn.is_valid(digits)


def iban_number(text: str) -> bool:
    s = text.strip()
    return len(s) >= 15 and s[:2].isalpha() and iban.is_valid(s)


def ip_address(text: str) -> bool:
    s = text.strip()
    if ("." not in s and ":" not in s) or len(s) < 7:
        return False
    try:
        ipaddress.ip_address(s)
    except ValueError:
        return False
    return True


MAC = re.compile(
    r"^(?:[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})$"
)


def mac_address(text: str) -> bool:
    return bool(MAC.match(text.strip()))


_NINO = re.compile(r"^(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\d{6}[A-D]$")


def uk_nino(text: str) -> bool:
    """The UK National Insurance number's rules (HMRC): letters the prefix never uses, suffix A to D."""
    return bool(_NINO.match(re.sub(r"\s", "", text.strip().upper())))


# national identifiers with a checksum or a fixed structure (python-stdnum); a value of digits alone
# validates in some of them by chance (one in eleven for an 11-proof), so the classifier asks for
# the column's name too before it trusts digits
_NATIONAL: tuple[Callable[[str], bool], ...] = (
    ssn.is_valid,
    uk_nino,
    nir.is_valid,
    codicefiscale.is_valid,
    dni.is_valid,
    nie.is_valid,
    bsn.is_valid,
    idnr.is_valid,
    pesel.is_valid,
    personnummer.is_valid,
    hetu.is_valid,
)


def national_id(text: str) -> bool:
    s = text.strip()
    if not 8 <= len(s) <= 24:
        return False
    for check in _NATIONAL:
        try:
            if check(s):
                return True
        except Exception:  # a validator's own parsing error is a "no"
            continue
    return False


_LETTERS = re.compile(r"^[^\W\d_][^\W\d_'’.\-]*(?:['’.\-][^\W\d_]+)*\.?$")


def person_name(text: str) -> bool:
    words = text.strip().split()
    return 1 <= len(words) <= 5 and all(_LETTERS.match(w) for w in words) and any(w[0].isupper() for w in words)


def postal_address(text: str) -> bool:
    s = text.strip()
    return (
        5 <= len(s) <= 200 and bool(re.search(r"\d", s)) and bool(re.search(r"[^\W\d_]{2}", s)) and len(s.split()) >= 2
    )


_POSTCODES = (
    r"\d{5}(?:-\d{4})?",  # US ZIP, and the five digits of DE, FR, ES, IT
    r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}",  # UK
    r"\d{4} ?[A-Z]{2}",  # NL
    r"\d{4}",  # BE, AT, CH, DK, AU
    r"\d{3} ?\d{2}",  # SE
    r"\d{2}-\d{3}",  # PL
    r"[A-Z]\d[A-Z] ?\d[A-Z]\d",  # CA
)
POSTCODE = re.compile(r"^(?:" + "|".join(_POSTCODES) + r")$")


def postcode(text: str) -> bool:
    return bool(POSTCODE.match(text.strip().upper()))


def date_of_birth(value: Any, today: dt.date | None = None) -> bool:
    """A date a living person may be born on: not in the future, at most 120 years back."""
    day = as_date(value)
    if day is None:
        return False
    today = today or dt.date.today()
    return dt.date(today.year - 120, 1, 1) <= day <= today


def as_date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        s = value.strip()
        for fmt in ("%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%Y/%m/%d", "%d-%m-%Y"):
            try:
                return dt.datetime.strptime(s[:10], fmt).date()
            except ValueError:
                continue
    return None


def coordinate(value: Any, bound: float) -> bool:
    """A latitude (bound 90) or longitude (180) given to at least three decimals (about 100 m)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return False
    if not -bound <= x <= bound:
        return False
    text = repr(x) if not isinstance(value, str) else value.strip()
    _, _, decimals = text.partition(".")
    return len(decimals.rstrip("0")) >= 3


_TOKENS = (
    r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key
    r"gh[pousr]_[0-9A-Za-z]{36,}|github_pat_[0-9A-Za-z_]{40,}",  # GitHub
    r"xox[abposr]-[0-9A-Za-z-]{10,}",  # Slack
    r"(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}",  # Stripe
    r"sk-(?:ant-|proj-)?[0-9A-Za-z_\-]{20,}",  # OpenAI, Anthropic
    r"AIza[0-9A-Za-z_\-]{35}",  # Google API key
    r"eyJ[0-9A-Za-z_\-]{8,}\.eyJ[0-9A-Za-z_\-]{8,}\.[0-9A-Za-z_\-]{8,}",  # a JSON Web Token
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
    r"\$2[aby]?\$\d\d\$[./0-9A-Za-z]{53}",  # bcrypt
    r"\$argon2(?:id|i|d)\$\S+",
    r"\$[156]\$[^$\s]+\$[./0-9A-Za-z]{20,}",  # crypt(3) hashes
)
TOKEN = re.compile("|".join(_TOKENS))


def known_secret(text: str) -> bool:
    """A credential of a published format (an API key's prefix, a token's structure, a password hash)."""
    return bool(TOKEN.fullmatch(text.strip()))


def credential(text: str) -> bool:
    """A value a column named for a secret holds: one word of at least six characters."""
    s = text.strip()
    return known_secret(s) or (len(s) >= 6 and not re.search(r"\s", s))


def crypto_wallet(text: str) -> bool:
    s = text.strip()
    try:
        return bitcoin.is_valid(s)
    except Exception:
        return False


def ethereum_address(text: str) -> bool:
    return bool(re.fullmatch(r"0x[0-9a-fA-F]{40}", text.strip()))


def username(text: str) -> bool:
    return bool(re.fullmatch(r"[\w.\-@+]{2,40}", text.strip())) and not text.strip().isdigit()
