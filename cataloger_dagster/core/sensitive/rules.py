"""Whether one value is of a class of personal or secret data: the rules the classifier
(core/sensitive/classifier.py) applies to a column's first values on the host, and the sandbox's
check of a class (core/investigate/checks/sensitive_class.py) applies, unchanged, to a larger
sample of the column.  One definition, so the stored script run by hand reaches the sandbox's
verdict.

What lies below the marker line is shipped as a block of the session script, before the check:
it may import only the standard library, phonenumbers and python-stdnum (the sandbox image's
pins, cataloger_dagster/sandbox_recipe/requirements.txt), and its top-level names must not be
any other block's (a test holds both).  Each rule takes the value as text (a number's digits, a
date's ISO form; `value_text` makes it) and answers True or False; none raises.  An e-mail's rule
is the exception: the host asks email-validator (core/sensitive/validators.py), which the sandbox
has not, and the sandbox checks the syntax (`email_syntax`), held to the host's by a test.
"""

# --- the block sent to the sandbox starts here ---
import datetime as dt
import ipaddress
import re
from typing import Any, Callable

import phonenumbers
from stdnum import bitcoin, luhn
from stdnum import iban as stdnum_iban
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
DIGIT = re.compile(r"\d")
PHONE_SEPARATORS = re.compile(r"[\s\-.]")
DAY_FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%Y/%m/%d", "%d-%m-%Y")


def value_text(value: Any) -> str:
    """A value as the rules read it: a date's ISO form, a whole float's digits."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def digits_of(text: str) -> str:
    return "".join(DIGIT.findall(text))


def day_of(value: Any) -> dt.date | None:
    """The date a value is or reads as (in a common day-first, month-first or ISO format), else None."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        s = value.strip()
        for fmt in DAY_FORMATS:
            try:
                return dt.datetime.strptime(s[:10], fmt).date()
            except ValueError:
                continue
    return None


_EMAIL_DOTTED = r"[\w!#$%&'*+/=?^`{|}~\-]+(?:\.[\w!#$%&'*+/=?^`{|}~\-]+)*"
_EMAIL_LABEL = r"[^\W_](?:[\w\-]{0,61}[^\W_])?"
EMAIL_SYNTAX = re.compile(rf"({_EMAIL_DOTTED})@({_EMAIL_LABEL}(?:\.{_EMAIL_LABEL})+)")


def email_syntax(text: str) -> bool:
    """An e-mail address's syntax (RFC 5322's dot-atom, a domain of labels, no numeric top level)."""
    s = text.strip()
    found = EMAIL_SYNTAX.fullmatch(s)
    if found is None:
        return False
    return len(s) <= 254 and len(found.group(1)) <= 64 and not found.group(2).split(".")[-1].isdigit()


def network_address(text: str) -> bool:
    """An IP address or network ('10.0.0.12', '10.0.0.0/24'): dotted digits that are no phone number
    (a number written with dots has groups an address cannot have, as '02.123.45.67' or five groups)."""
    try:
        ipaddress.ip_interface(text.strip())
    except ValueError:
        return False
    return True


def phone(text: str) -> bool:
    s = re.sub(r"\s*(?:x|ext\.?)\s*\d+$", "", text.strip())  # an extension is no part of the number
    digits = digits_of(s)
    if not 7 <= len(digits) <= 15 or re.search(r"[A-Za-z]", s) or day_of(s) is not None or network_address(s):
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
    formatted = s.startswith("+") or "(" in s or len(PHONE_SEPARATORS.findall(s)) >= 2
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
        and (s.startswith("+") or len(PHONE_SEPARATORS.findall(s)) >= 1)
        and day_of(s) is None
        and not network_address(s)
    )


def formatted_phone(text: str) -> bool:
    """A phone number inside prose: written as one (not a bare run of digits) and valid or possible."""
    s = text.strip()
    return (s.startswith("+") or "(" in s or len(PHONE_SEPARATORS.findall(s)) >= 2) and phone(s)


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
    return len(s) >= 15 and s[:2].isalpha() and stdnum_iban.is_valid(s)


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


NINO = re.compile(r"^(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\d{6}[A-D]$")


def uk_nino(text: str) -> bool:
    """The UK National Insurance number's rules (HMRC): letters the prefix never uses, suffix A to D."""
    return bool(NINO.match(re.sub(r"\s", "", text.strip().upper())))


# national identifiers with a checksum or a fixed structure (python-stdnum); a value of digits alone
# validates in some of them by chance (one in eleven for an 11-proof), so the classifier asks for
# the column's name too before it trusts digits
NATIONAL_IDS: tuple[Callable[[str], bool], ...] = (
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
    for check in NATIONAL_IDS:
        try:
            if check(s):
                return True
        except Exception:  # a validator's own parsing error is a "no"
            continue
    return False


NAME_WORD = re.compile(r"^[^\W\d_][^\W\d_'’.\-]*(?:['’.\-][^\W\d_]+)*\.?$")


def person_name(text: str) -> bool:
    words = text.strip().split()
    return 1 <= len(words) <= 5 and all(NAME_WORD.match(w) for w in words) and any(w[0].isupper() for w in words)


def postal_address(text: str) -> bool:
    s = text.strip()
    return (
        5 <= len(s) <= 200 and bool(re.search(r"\d", s)) and bool(re.search(r"[^\W\d_]{2}", s)) and len(s.split()) >= 2
    )


POSTCODE_FORMATS = (
    r"\d{5}(?:-\d{4})?",  # US ZIP, and the five digits of DE, FR, ES, IT
    r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}",  # UK
    r"\d{4} ?[A-Z]{2}",  # NL
    r"\d{4}",  # BE, AT, CH, DK, AU
    r"\d{3} ?\d{2}",  # SE
    r"\d{2}-\d{3}",  # PL
    r"[A-Z]\d[A-Z] ?\d[A-Z]\d",  # CA
)
POSTCODE = re.compile(r"^(?:" + "|".join(POSTCODE_FORMATS) + r")$")


def postcode(text: str) -> bool:
    return bool(POSTCODE.match(text.strip().upper()))


def date_of_birth(value: Any, today: dt.date | None = None) -> bool:
    """A date a living person may be born on: not in the future, at most 120 years back."""
    day = day_of(value)
    if day is None:
        return False
    today = today or dt.date.today()
    return dt.date(today.year - 120, 1, 1) <= day <= today


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


SECRET_FORMATS = (
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
TOKEN = re.compile("|".join(SECRET_FORMATS))


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


# each rule of a class by its name, as a hypothesis's claim names the rules the classifier applied
# (core/sensitive/hypotheses.py); an e-mail is checked by its syntax here (see the module's docstring),
# a date of birth against the claim's day and a coordinate within its bound
RULES_BY_NAME: dict[str, Callable[..., bool]] = {
    "email": email_syntax,
    "phone": phone,
    "phone_shaped": phone_shaped,
    "payment_card": payment_card,
    "iban_number": iban_number,
    "ip_address": ip_address,
    "mac_address": mac_address,
    "national_id": national_id,
    "person_name": person_name,
    "postal_address": postal_address,
    "postcode": postcode,
    "date_of_birth": date_of_birth,
    "known_secret": known_secret,
    "credential": credential,
    "crypto_wallet": crypto_wallet,
    "ethereum_address": ethereum_address,
    "username": username,
}
