"""The check of out of range issues."""

from typing import TYPE_CHECKING

import ibis
from cataloger_dagster.core.investigate.checks.helpers import (
    as_date,
    as_number,
    count,
    outcome,
    share,
    value_counts,
)

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import pct, t


# --- the block sent to the sandbox starts here ---
def check_out_of_range(column, rules, now, exclude):
    import datetime as _dt

    hypothesis = f"{column} follows {', '.join(rules)}, and the rows breaking it are errors"
    c = t[column]
    when = _dt.datetime.fromisoformat(now)
    dtype = t.schema()[column]

    def stamp(moment):
        if dtype.is_string():
            return None
        if dtype.is_date():
            return ibis.date(moment.date())
        if dtype.timezone is None:
            moment = moment.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return ibis.literal(moment, type=dtype)

    conditions = {
        "negative": lambda: c < 0,
        "outside 0-100": lambda: (c < 0) | (c > 100),
        "age above 130": lambda: c > 130,
        "in the future": lambda: c > stamp(when + _dt.timedelta(days=1)),
        "before 1900": lambda: c < stamp(_dt.datetime(1900, 1, 1, tzinfo=when.tzinfo)),
    }
    keep = ~c.isin(exclude) if exclude else ibis.literal(True)
    if dtype.is_string():  # dates or numbers stored as text: read them in Python
        floor = _dt.datetime(1900, 1, 1)
        tests = {
            "negative": lambda v: as_number(v) is not None and as_number(v) < 0,
            "outside 0-100": lambda v: as_number(v) is not None and not 0 <= as_number(v) <= 100,
            "age above 130": lambda v: as_number(v) is not None and as_number(v) > 130,
            "in the future": lambda v: (
                as_date(v) is not None
                and as_date(v).replace(tzinfo=None) > (when + _dt.timedelta(days=1)).replace(tzinfo=None)
            ),
            "before 1900": lambda v: as_date(v) is not None and as_date(v).replace(tzinfo=None) < floor,
        }
        pairs = value_counts(c, where=keep)
        counts = {rule: sum(k for v, k in pairs if tests[rule](v)) for rule in rules}
        present = sum(k for _, k in pairs)
    else:
        counts = {rule: int(t.filter(conditions[rule]() & keep).count().execute()) for rule in rules}
        present = int(t.filter(c.notnull() & keep).count().execute())
    n = sum(counts.values())
    part = n / present if present else 0.0
    evidence = dict(rows=n, percent=pct(n, present), by_rule=counts)
    if not n:
        return outcome(hypothesis, "refuted", "no row breaks the rule", 0, **evidence)
    if part > 0.2:
        return outcome(
            hypothesis,
            "refuted",
            f"{share(n, present)} of the values break it: the column does not follow this rule",
            n,
            **evidence,
        )
    if part <= 0.05:
        return outcome(
            hypothesis,
            "confirmed",
            f"{count(n, 'row')} ({share(n, present)}) break a rule the rest of the column keeps",
            n,
            **evidence,
        )
    return outcome(
        hypothesis,
        "inconclusive",
        f"{share(n, present)} of the values break it: more than slips, fewer than a column that ignores the rule",
        n,
        **evidence,
    )
