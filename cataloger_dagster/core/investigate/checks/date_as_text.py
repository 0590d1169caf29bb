"""The check of date as text issues."""

from typing import TYPE_CHECKING

from cataloger_dagster.core.investigate.checks.helpers import outcome, share, text_that_reads, value_counts

if TYPE_CHECKING:  # defined by the session script's setup block
    from cataloger_dagster.core.investigate.checks.session import ROWS, pct, t


# --- the block sent to the sandbox starts here ---
def check_date_as_text(column, date_format, placeholders):
    from datetime import datetime

    hypothesis = f"{column} holds dates, stored as text"

    def parses(value):
        text = " ".join(value.split())
        try:
            if date_format == "ISO 8601":
                datetime.fromisoformat(text.replace("Z", "+00:00"))
            else:
                datetime.strptime(text, date_format)
            return True
        except ValueError:
            return False

    found = text_that_reads(column, placeholders, parses)
    if found is None and t.schema()[column].is_integer() and date_format in ("%Y%m%d", "%Y%m"):
        # dates written as integers (20011229): their digits are read in the same format
        hypothesis = f"{column} holds dates, stored as integers"
        counts = value_counts(t[column].cast("string"))
        found = (
            sum(k for _, k in counts),
            sum(k for v, k in counts if parses(v)),
            sorted(v for v, _ in counts if not parses(v))[:5],
        )
    if found is None:
        return outcome(
            hypothesis, "refuted", f"the column is typed {t.schema()[column]}", 0, type=str(t.schema()[column])
        )
    n, dates, others = found
    ok = n and dates / n >= 0.9
    return outcome(
        hypothesis,
        "confirmed" if ok else "refuted",
        f"{share(dates, n)} of the values read as dates in the format {date_format}",
        ROWS if ok else 0,
        dates=dates,
        usable=n,
        percent=pct(dates, n),
        format=date_format,
        not_dates=others,
    )
