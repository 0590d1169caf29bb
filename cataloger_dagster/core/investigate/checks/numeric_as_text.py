"""The check of numeric as text issues."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import (
    as_number,
    outcome,
    share,
    text_that_reads,
)

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import ROWS, pct, t


# --- the block sent to the sandbox starts here ---
def check_numeric_as_text(column, placeholders):
    import re

    hypothesis = f"{column} holds numbers, stored as text"

    def number(value):
        v = value.strip()
        return not re.match(r"^[+-]?0\d", v) and as_number(v) is not None  # leading zeros: a code

    found = text_that_reads(column, placeholders, number)
    if found is None:
        return outcome(
            hypothesis, "refuted", f"the column is typed {t.schema()[column]}", 0, type=str(t.schema()[column])
        )
    n, numbers, others = found
    ok = n and numbers / n >= 0.9
    return outcome(
        hypothesis,
        "confirmed" if ok else "refuted",
        f"{share(numbers, n)} of the values read as numbers once {placeholders or 'nothing'} is set aside",
        ROWS if ok else 0,
        numbers=numbers,
        usable=n,
        percent=pct(numbers, n),
        placeholders_set_aside=placeholders,
        not_numbers=others,
    )
