"""A suite as a plain SQL file: each assertion a statement, with what it measures, the band it
must stay in and why it exists in the comment above it.  Names and values are data: a comment
holds no line break nor control character (`visible`), so no name can end it and start a
statement of its own."""

from __future__ import annotations

from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite
from cataloger_dagster.core.shown import visible


def _comment(text: str) -> str:
    return "-- " + visible(text).replace("\n", " ")


def _band(g: Guardrail) -> str:
    low = "" if g.low is None else f">= {g.low:g}"
    high = "" if g.high is None else f"<= {g.high:g}"
    return " and ".join(part for part in (low, high) if part) or "anything"


def suite_sql(suite: GuardrailSuite) -> str:
    head = [
        _comment(
            f"Guardrails of {suite.database} / {suite.table}, version {suite.version}, built from run {suite.built_at}"
        ),
        _comment(f"Dialect {suite.dialect}. Each statement returns one number, which must be as its comment says."),
        "",
    ]
    body = []
    for g in suite.guardrails:
        body += [
            _comment(f"{g.name}: {g.measure} {_band(g)}"),
            _comment(g.why),
            g.sql.rstrip().rstrip(";") + ";",
            "",
        ]
    return "\n".join(head + body)
