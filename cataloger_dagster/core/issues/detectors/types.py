"""Numbers and dates stored as text: judged on the parsed values, with placeholders set aside.

One root cause, one issue: the 'NA' strings that made a numeric column text are part of
this issue's evidence, not a second issue.
"""

from __future__ import annotations

from typing import Optional

import ibis.expr.datatypes as dt

from cataloger_dagster.core.grammar import verb_for
from cataloger_dagster.core.issues.detectors.context import (
    Context, count, is_identifier, issue, name_words, pct,
)
from cataloger_dagster.core.models import ColumnProfile, IssueModel

TYPE_SHARE = 0.9   # share of the non-placeholder values that must parse before a text column "is" numbers or dates
NOT_NUMERIC_TEXT = {"phone", "zip", "postal", "postcode", "iban", "account", "code", "sku", "id"}


def _examples(values: dict[str, int], limit: int = 5) -> list[str]:
    return [v for v, _ in sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def stored_as_text(ctx: Context, cp: ColumnProfile, dtype: dt.DataType) -> Optional[IssueModel]:
    if not dtype.is_string() or cp.name in ctx.carried_as_text:
        return None
    reading = ctx.reading(cp)
    if reading is None or reading.kind is None or reading.share < TYPE_SHARE:
        return None
    if reading.kind == "number" and (name_words(cp.name) & NOT_NUMERIC_TEXT or is_identifier(cp.name)):
        return None  # identifiers and codes written with digits are text on purpose
    kind = reading.kind
    values = reading.weighted()
    low, high = values[0][0], values[-1][0]
    shown = (lambda v: f"{v:g}") if kind == "number" else (lambda v: v.isoformat(sep=" ").removesuffix(" 00:00:00"))
    placeholders = reading.placeholders
    unparsed = reading.unparsed
    held = f"{pct(reading.parsed_rows, reading.candidates)} of its {count(reading.candidates, 'value')} are {kind}s"
    extra = []
    if placeholders:
        n = sum(placeholders.values())
        extra.append(f"{count(n, 'row')} {verb_for(n, 'holds')} placeholders "
                     f"({', '.join(repr(v) for v in _examples(placeholders, 3))}) that forced the text type")
    if unparsed:
        n = sum(unparsed.values())
        extra.append(f"{count(n, 'row')} {verb_for(n, 'holds')} other text "
                     f"({', '.join(repr(v) for v in _examples(unparsed, 3))})")
    if kind == "date":
        extra.append(f"read as dates they run from {shown(low)} to {shown(high)}, "
                     "not the alphabetical range a text sort gives")
    target = "a numeric type" if kind == "number" else "DATE or TIMESTAMP"
    how = "TRY_CAST" if kind == "number" else f"parsing with the format {reading.date_format!r}"
    return issue(
        ctx, "numeric_as_text" if kind == "number" else "date_as_text", cp.name,
        severity="medium", category="quick_fixes", affectedRows=reading.usable,
        description=f"{cp.name} is stored as text ({dtype}) but {held}, so "
                    + ("sums, sorting and comparisons treat them as strings" if kind == "number"
                       else "date arithmetic and ranges do not work on it")
                    + (f"; {'; '.join(extra)}" if extra else "") + ".",
        suggestedAction=f"Convert {cp.name} to {target} ({how})"
                        + (f", storing the placeholders {', '.join(repr(v) for v in _examples(placeholders, 3))} as NULL"
                           if placeholders else "")
                        + (", and review the values that do not convert." if unparsed else "."),
        details={"kind": kind, "usable": reading.usable, "parsed": reading.parsed_rows,
                 "share": reading.share, "placeholders": placeholders,
                 "unparsed": dict(sorted(unparsed.items(), key=lambda kv: (-kv[1], kv[0]))[:10]),
                 "unparsed_rows": sum(unparsed.values()), "date_format": reading.date_format,
                 "min": shown(low), "max": shown(high)},
    )
