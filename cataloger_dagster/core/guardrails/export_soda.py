"""A suite as SodaCL (Soda Core 3's check language): one check per guardrail under
`checks for <table>:`, run by `soda scan`.

A guardrail becomes a native Soda check only where that check measures exactly what the
catalog measures: `row_count`, `missing_count` for a column never NULL, `duplicate_count` for a
key, `freshness` of the update column.  Soda writes a native check's table and column names
into its SQL as they are, so only a plain lower-case name goes there; every other guardrail (and
any guardrail of another name) is a user-defined metric running the catalog's own statement,
whose names ibis quoted.  Each check's `name` is the guardrail's `why`.

Names and values are data: the YAML is written by a YAML dumper, and Soda renders any text
holding ``${`` with Jinja (variables start with ``${``), so in a text holding a ``$`` each ``$``
and ``{`` is written as a Jinja expression giving that character back.
"""

from __future__ import annotations

import hashlib
import math
import re
from decimal import Decimal
from typing import Any, Optional

import yaml

from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite
from cataloger_dagster.core.shown import visible

QUERY_RENDERS = (
    2  # Soda Core 3.5 renders a user-defined metric's query when it reads the check and again when it runs it
)
_PLAIN = re.compile(r"[a-z_][a-z0-9_]{0,62}")
# words a plain name may not be: Soda would write them bare into SQL, where they are keywords
_KEYWORDS = frozenset(
    "all and any array as asc between by case cast check collate column constraint create cross current_date "
    "current_time current_timestamp current_user default desc distinct do else end except false fetch for "
    "foreign from full grant group having in inner intersect into is join lateral leading left like limit "
    "natural not null offset on only or order outer primary references right select session_user some "
    "symmetric table then to trailing true union unique user using when where window with".split()
)


def plain(name: str) -> bool:
    """A name Soda may write bare into its SQL and mean the same column or table."""
    return _PLAIN.fullmatch(name) is not None and name not in _KEYWORDS


def soda_text(text: str, renders: int = 1) -> str:
    """What to write for Soda to read `text` after rendering it `renders` times with Jinja (it
    renders a check's name once and its query twice, and only a text holding a ``$``)."""
    for _ in range(renders if "$" in text else 0):
        text = "".join("${'" + c + "'}" if c in "${" else c for c in text)
    return text


def number(value: float) -> str:
    """A bound as SodaCL reads it: a plain decimal, no exponent."""
    if float(value).is_integer():
        return str(int(value))
    return format(Decimal(repr(float(value))), "f")


def _threshold(g: Guardrail) -> str:
    low = None if g.low is None or math.isinf(g.low) else number(g.low)
    high = None if g.high is None or math.isinf(g.high) else number(g.high)
    if low is not None and high is not None:
        return f"= {low}" if low == high else f"between {low} and {high}"
    if high is not None:
        return f"<= {high}"
    if low is not None:
        return f">= {low}"
    return f">= {number(-1e300)}"  # no band: any number holds


def _freshness(seconds: float) -> str:
    """Soda's freshness threshold counts whole minutes: the band's seconds, rounded down."""
    minutes = max(1, int(seconds // 60))
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    return "".join(f"{n}{unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "m")) if n) or "1m"


def _native(g: Guardrail) -> Optional[str]:
    """The native Soda check meaning exactly `g`, or None."""
    column = g.columns[0] if len(g.columns) == 1 else None
    if g.kind == "row_count" and g.measure == "count" and not g.guards:
        return f"row_count {_threshold(g)}"
    if column is None or not plain(column):
        return None
    if g.kind == "null_rate" and g.low is None and g.high == 0 and not g.guards:
        return f"missing_count({column}) = 0"
    if g.kind == "unique" and g.measure == "rows" and g.low is None and g.high is not None:
        return f"duplicate_count({column}) {_threshold(g)}"
    if g.kind == "freshness" and g.high is not None:
        return f"freshness({column}) < {_freshness(g.high)}"
    return None


def check_of(g: Guardrail, index: int, table_plain: bool) -> dict[str, Any]:
    native = _native(g) if table_plain else None
    if native is not None:
        return {native: {"name": soda_text(visible(g.why))}}
    metric = f"guardrail_{index}"
    return {
        f"{metric} {_threshold(g)}": {
            "name": soda_text(visible(g.why)),
            f"{metric} query": soda_text(g.sql.strip().rstrip(";"), renders=QUERY_RENDERS),
        }
    }


def section_table(table: str) -> str:
    """The table Soda's section is for: the name itself when plain, else a plain stand-in, its own
    to each name (every check of such a table runs the catalog's statement, which names the table
    itself, and Soda keeps one set of metrics per section)."""
    if plain(table):
        return table
    slug = re.sub(r"[^a-z0-9]+", "_", table.lower()).strip("_")[:40]
    digest = hashlib.sha256(table.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"guardrails_of_{slug}_{digest}".replace("__", "_")


def suite_soda(suite: GuardrailSuite) -> str:
    """The suite as a SodaCL checks file."""
    table_plain = plain(suite.table)
    checks = [check_of(g, i, table_plain) for i, g in enumerate(suite.guardrails, start=1)]
    return yaml.safe_dump(
        {f"checks for {section_table(suite.table)}": checks},
        sort_keys=False,
        allow_unicode=False,  # every character outside ASCII escaped: no control character, no bidi
        width=1_000_000,
        default_flow_style=False,
    )
