"""The check of a column's class of personal or secret data (core/sensitive/classifier.py decides it
from the first values it samples): the class re-validated on a larger seeded sample of the column.

The sandbox has none of the host's field libraries (email-validator, python-stdnum, phonenumbers),
so the rules this check needs travel with it as plain Python: an e-mail's syntax, the Luhn digit,
IBAN's mod-97, the ipaddress module; the patterns the host's validators hold (a card network's
prefix, a MAC address, a postcode) come in with the check's claim, from core/sensitive/validators.py.
A class no rule here can prove (a phone number, a national id, a name) is "inconclusive"; such
classes get no hypothesis (core/sensitive/hypotheses.py CHECKED).
No value leaves the check: its evidence is counts and shares.
"""

from typing import TYPE_CHECKING

import ibis

from cataloger_dagster.core.investigate.checks.helpers import count, outcome, share

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import pct, t


# --- the block sent to the sandbox starts here ---
def check_sensitive_class(column, claim):
    """`claim`: the class ("data_class", its "label"), the share of valid values that holds it
    ("needed"), the host's "pattern" of the class if it has one, "today" (ISO date), the values
    to read at "most" and the sample's "seed"."""
    import ipaddress
    import re
    from datetime import date, datetime

    data_class, label, needed, pattern = claim["data_class"], claim["label"], claim["needed"], claim["pattern"]
    today, most, seed = claim["today"], claim["most"], claim["seed"]
    hypothesis = f"{column} holds {label} values"
    dotted = r"[\w!#$%&'*+/=?^`{|}~\-]+(?:\.[\w!#$%&'*+/=?^`{|}~\-]+)*"
    label_re = r"[^\W_](?:[\w\-]{0,61}[^\W_])?"
    email_re = re.compile(rf"({dotted})@({label_re}(?:\.{label_re})+)")
    shaped = re.compile(pattern) if pattern else None

    def text_of(value):
        if isinstance(value, (date, datetime)):
            return value.isoformat()
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value).strip()

    def email(s):
        found = email_re.fullmatch(s)
        return (
            bool(found) and len(s) <= 254 and len(found.group(1)) <= 64 and not found.group(2).split(".")[-1].isdigit()
        )

    def luhn(digits):
        total = 0
        for i, d in enumerate(reversed(digits)):
            d = int(d) * (2 if i % 2 else 1)
            total += d - 9 if d > 9 else d
        return total % 10 == 0

    def payment_card(s):
        if re.search(r"[^\d \-]", s):
            return False
        digits = re.sub(r"\D", "", s)
        return 12 <= len(digits) <= 19 and bool(shaped.match(digits)) and luhn(digits)

    def iban(s):
        s = re.sub(r"[\s\-]", "", s).upper()
        if len(s) < 15 or len(s) > 34 or not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]+", s):
            return False
        return int("".join(str(int(ch, 36)) for ch in s[4:] + s[:4])) % 97 == 1

    def ip_address(s):
        try:
            ipaddress.ip_address(s)
        except ValueError:
            return False
        return ("." in s or ":" in s) and len(s) >= 7

    def as_day(value):
        if isinstance(value, datetime):
            return value.date()
        if isinstance(value, date):
            return value
        for fmt in ("%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%Y/%m/%d", "%d-%m-%Y"):
            try:
                return datetime.strptime(str(value).strip()[:10], fmt).date()
            except ValueError:
                continue
        return None

    def date_of_birth(value):
        day, now = as_day(value), date.fromisoformat(today)
        return day is not None and date(now.year - 120, 1, 1) <= day <= now

    rules = {
        "email": lambda value: email(text_of(value)),
        "payment_card": lambda value: payment_card(text_of(value)),
        "iban": lambda value: iban(text_of(value)),
        "ip_address": lambda value: ip_address(text_of(value)),
        "mac_address": lambda value: bool(shaped.match(text_of(value))),
        "postcode": lambda value: bool(shaped.match(text_of(value).upper())),
        "date_of_birth": date_of_birth,
    }
    if data_class not in rules:
        return outcome(hypothesis, "inconclusive", f"the sandbox has no rule that proves a {label}", 0)
    present = t.filter(t[column].notnull())
    if t.schema()[column].is_string():
        present = present.filter(t[column].strip() != "")
    total = int(present.count().execute())
    values = present.select(v=present[column])
    if total > most:
        # every step-th value in the column's order, from an offset the seed gives: the same
        # values each run and on every backend (a seeded TABLESAMPLE is DuckDB's alone), so the
        # stored script run against the database reproduces the sandbox's evidence
        step = -(-total // most)
        ranked = values.mutate(r=ibis.row_number().over(order_by="v"))
        values = ranked.filter(ranked.r % step == seed % step).select("v")
    read = [r["v"] for r in values.to_pyarrow().to_pylist()]
    valid = sum(1 for value in read if rules[data_class](value))
    n = len(read)
    if not n:
        return outcome(hypothesis, "inconclusive", f"{column} has no value to check", 0)
    holds = valid / n >= needed
    said = f"{share(valid, n)} of {count(n, 'sampled value')} validate as {label}"
    return outcome(
        hypothesis,
        "confirmed" if holds else "refuted",
        f"{said} ({share(round(needed * n), n)} needed)",
        valid,
        data_class=data_class,
        sampled=n,
        valid=valid,
        invalid=n - valid,
        percent_valid=pct(valid, n),
        needed_percent=pct(needed, 1),
        non_null=total,
        seed=seed if total > most else None,
    )
