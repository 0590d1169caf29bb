"""The check of a column's class of personal or secret data (core/sensitive/classifier.py decides it
from the first values it samples): the class re-validated on a larger seeded sample of the column.

The rules are the classifier's own (core/sensitive/rules.py, sent as a block before this check;
the sandbox image has phonenumbers and python-stdnum for them), named by the claim: the rules of
the class the classifier could apply, those that need the column's name only when it had it.
An e-mail's rule is its syntax, as the sandbox has no email-validator.

For a class whose values carry their own proof (a checksum, a structure) "confirmed" means the
values are of the class.  For a class whose values alone prove nothing (a person's name, a postal
address, a username, a postcode, a date of birth, a precise location, a credential or a phone
number the column's name announced) it means less: the values keep the class's shape on a sample
many times larger than the classifier's, at the share the column's name asked for (WITH_NAME); a
"refuted" says the first values were not the column's.
No value leaves the check: its evidence is counts and shares.
"""

from typing import TYPE_CHECKING

import ibis

from cataloger_dagster.core.investigate.checks.helpers import count, outcome, share

if TYPE_CHECKING:  # defined by the session script's setup block and the rules block before this one
    from cataloger_dagster.core.investigate.checks.session import pct, t
    from cataloger_dagster.core.sensitive.rules import RULES_BY_NAME, coordinate, date_of_birth, value_text


# --- the block sent to the sandbox starts here ---
def check_sensitive_class(column, claim):
    """`claim`: the class ("data_class", its "label"), the share of valid values that holds it
    ("needed"), the names of the classifier's "rules" that validate it (core/sensitive/rules.py),
    a coordinate's "bound", "today" (ISO date), the values to read at "most" and the sample's
    "seed"."""
    from datetime import date

    data_class, label, needed = claim["data_class"], claim["label"], claim["needed"]
    today, most, seed = date.fromisoformat(claim["today"]), claim["most"], claim["seed"]
    hypothesis = f"{column} holds {label} values"
    rules = [RULES_BY_NAME[name] for name in claim["rules"]]

    def valid(value):
        if data_class == "date_of_birth":
            return date_of_birth(value, today)
        if data_class == "geolocation":
            return coordinate(value, claim["bound"])
        s = value_text(value)
        return any(rule(s) for rule in rules)

    if not rules and data_class not in ("date_of_birth", "geolocation"):
        return outcome(hypothesis, "inconclusive", f"no rule of the classifier proves a {label}", 0)
    present = t.filter(t[column].notnull())
    if t.schema()[column].is_string():
        present = present.filter(t[column].strip() != "")
    total = int(present.count().execute())

    def sampled(expr):
        values = present.select(v=expr)
        if total > most:
            # every step-th value in the column's order, from an offset the seed gives: the same
            # values each run and on every backend (a seeded TABLESAMPLE is DuckDB's alone), so the
            # stored script run against the database reproduces the sandbox's evidence
            step = -(-total // most)
            ranked = values.mutate(r=ibis.row_number().over(order_by="v"))
            values = ranked.filter(ranked.r % step == seed % step).select("v")
        return [r["v"] for r in values.to_pyarrow().to_pylist()]

    try:
        read = sampled(present[column])
    except Exception:  # a type Arrow cannot take (an inet, a range): its text, as the snapshot holds it
        read = sampled(present[column].cast("string"))
    n = len(read)
    if not n:
        return outcome(hypothesis, "inconclusive", f"{column} has no value to check", 0)
    matched = sum(1 for value in read if valid(value))
    holds = matched / n >= needed
    said = f"{share(matched, n)} of {count(n, 'sampled value')} validate as {label}"
    return outcome(
        hypothesis,
        "confirmed" if holds else "refuted",
        f"{said} ({share(round(needed * n), n)} needed)",
        matched,
        data_class=data_class,
        sampled=n,
        valid=matched,
        invalid=n - matched,
        percent_valid=pct(matched, n),
        needed_percent=pct(needed, 1),
        non_null=total,
        seed=seed if total > most else None,
    )
