"""What a column's name, and the names of its neighbours, say about the data it holds."""

from __future__ import annotations

from cataloger_dagster.core import text

# the words (or runs of words, joined by "_") of a column name that point at a class; the name is
# also read joined ("emailaddress", "ipaddr") for names written without separators
_NAME_HINTS: dict[str, tuple[str, ...]] = {
    "email": ("email", "e_mail", "mail", "emailaddress", "mail_address"),
    "phone": ("phone", "telephone", "tel", "mobile", "cell", "fax", "msisdn", "phonenumber", "telefon", "telefono"),
    "person_name": (
        "first_name",
        "last_name",
        "firstname",
        "lastname",
        "surname",
        "given_name",
        "family_name",
        "full_name",
        "fullname",
        "middle_name",
        "maiden_name",
        "forename",
        "givenname",
        "familyname",
        "contact_name",
        "customer_name",
        "person_name",
        "employee_name",
        "patient_name",
        "nom",
        "prenom",
        "nombre",
        "apellido",
        "vorname",
        "nachname",
        "cognome",
    ),
    "postal_address": (
        "address",
        "street",
        "addr",
        "address_line",
        "street_address",
        "streetaddress",
        "adresse",
        "direccion",
        "indirizzo",
    ),
    "postcode": (
        "zip",
        "zipcode",
        "zip_code",
        "postcode",
        "post_code",
        "postal_code",
        "postalcode",
        "plz",
        "cap",
        "codigo_postal",
    ),
    "date_of_birth": ("birth", "dob", "birthday", "birthdate", "born", "date_of_birth", "geburtsdatum"),
    "national_id": (
        "ssn",
        "nino",
        "national_id",
        "nationalid",
        "national_insurance",
        "social_security",
        "tax_id",
        "taxid",
        "dni",
        "nie",
        "nif",
        "bsn",
        "nir",
        "codice_fiscale",
        "codicefiscale",
        "pesel",
        "personnummer",
        "hetu",
        "steuer_id",
        "idnr",
        "passport",
        "id_number",
        "identity_number",
        "sin",
        "ni_number",
    ),
    "payment_card": ("card_number", "cardnumber", "credit_card", "creditcard", "cc_number", "pan", "card_no", "card"),
    "iban": ("iban", "bank_account", "account_number"),
    "ip_address": ("ip", "ipaddress", "ip_address", "ipv4", "ipv6", "ip_addr", "remote_addr", "client_ip"),
    "mac_address": ("mac", "mac_address", "macaddress", "hwaddr"),
    "geolocation": (
        "lat",
        "latitude",
        "lon",
        "lng",
        "long",
        "longitude",
        "geo",
        "coordinates",
        "gps",
        "geolocation",
        "location",
    ),
    "username": ("username", "user_name", "login", "handle", "screen_name", "nickname", "userid_name"),
    "crypto_wallet": ("wallet", "btc", "bitcoin", "eth_address", "wallet_address", "crypto_address"),
    "secret": (
        "password",
        "passwd",
        "pwd",
        "secret",
        "token",
        "api_key",
        "apikey",
        "access_key",
        "private_key",
        "credential",
        "credentials",
        "password_hash",
        "auth_token",
        "access_token",
        "refresh_token",
        "client_secret",
        "session_key",
        "passphrase",
        "pin",
    ),
}

# the words of a neighbour's name that say the rows are people (a coordinate next to them is where a
# person is, not an airport)
PERSON_WORDS = frozenset(
    "user customer person people patient driver member employee client rider passenger contact subscriber "
    "account visitor buyer owner citizen student device".split()
)

# words that say a name-like column names a thing, not a person
THING_WORDS = frozenset(
    "product item company airport airline city country station street_name file host server table "
    "category brand team store shop model project event".split()
)


def _runs(words: list[str]) -> set[str]:
    runs = set(words)
    for size in (2, 3, 4):
        runs |= {"_".join(words[i : i + size]) for i in range(len(words) - size + 1)}
    runs.add("".join(words))
    return runs


def name_classes(name: str) -> set[str]:
    """The classes a column's name points at: ``customer_email`` -> {"email"}."""
    runs = _runs(text.words(name))
    return {key for key, hints in _NAME_HINTS.items() if runs & set(hints)}


def bare_name(name: str) -> bool:
    """The column is called ``name`` (or ``<something>_name``) and no more: a person's only when its
    neighbours say the rows are people."""
    words = text.words(name)
    return bool(words) and words[-1] == "name" and not (set(words) & THING_WORDS)


def about_people(names: list[str], table: str = "") -> bool:
    """The table's name or its columns' say that its rows are (or belong to) people."""
    found = set(text.words(table))
    for n in names:
        found |= set(text.words(n))
    singulars = {w[:-1] for w in found if w.endswith("s")}
    return bool((found | singulars) & PERSON_WORDS)
