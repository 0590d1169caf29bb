"""What the index needs besides its table of tables: the data its search and filters run over,
embedded in the page, and the "database at a glance" (the worst tables, the newest findings).

The search runs in the reader's browser over a JSON document inside the page, in a
``<script type="application/json">``: no server, no request, so it works from a ``file://`` URL
and from an object store alike.  Names and descriptions are data there too: every ``<``, ``>``
and ``&`` is written as a JSON escape, so that a table named ``</script><script>…`` cannot end
the element, and the page's script only ever puts text into the page (``textContent``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from cataloger_dagster.core.models import SEVERITIES
from cataloger_dagster.core.sensitive.classes import KEYS

if TYPE_CHECKING:
    from cataloger_dagster.core.render.pages import IndexEntry

WORST_SHOWN = 5  # tables in "the worst tables"
NEWEST_SHOWN = 6  # findings in "the newest findings"
_SEVERITY_RANK: dict[str, int] = {s: n for n, s in enumerate(SEVERITIES)}
# the characters that could end a <script> element or start markup, as JSON escapes
_INERT = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def inert_json(data: Any) -> Markup:
    """``data`` as JSON that is safe inside ``<script type="application/json">``: parsed back by
    ``JSON.parse`` as it was, never read as markup by the HTML parser."""
    text = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))
    for char, escape in _INERT.items():
        text = text.replace(char, escape)
    return Markup(text)


def search_data(entries: Sequence[IndexEntry]) -> dict[str, Any]:
    """One record per table row, in the rows' order (the page finds a row's record by its
    ``data-i``): the words the search looks in and the facts the filters test."""
    return {
        "tables": [
            {
                "table": e.table,
                "description": e.description,
                "owner": e.owner,
                "status": e.status,
                "columns": [
                    {"name": c.name, "type": c.type, "description": c.description, "personal": c.personal}
                    for c in e.columns
                ],
                "findings": [
                    {"type": f.type, "severity": f.severity, "description": f.description, "columns": f.columns}
                    for f in e.findings
                ],
            }
            for e in entries
        ]
    }


def filter_choices(entries: Sequence[IndexEntry]) -> dict[str, list[str]]:
    """The values each filter offers: the severities and finding types present, the owners, and
    the classes of personal data held somewhere (the "personal data" filter, shown when any is)."""
    types = sorted({f.type for e in entries for f in e.findings})
    owners = sorted({e.owner for e in entries if e.owner})
    present = {f.severity for e in entries for f in e.findings}
    held = {k for e in entries for c in e.columns for k in c.personal}
    return {
        "severities": [s for s in SEVERITIES if s in present],
        "types": types,
        "owners": owners,
        "personal": [k for k in KEYS if k in held],
    }


def worst_tables(entries: Sequence[IndexEntry], shown: int = WORST_SHOWN) -> list[IndexEntry]:
    """The cataloged tables most in need of a look: lowest health first, then most high findings;
    a table with no finding is never among them."""
    found = [e for e in entries if e.status != "failed" and e.href and e.findings]
    found.sort(key=lambda e: (e.health, -e.issues_by_severity.get("high", 0), e.table))
    return found[:shown]


def newest_findings(entries: Sequence[IndexEntry], shown: int = NEWEST_SHOWN) -> list[dict[str, Any]]:
    """The open findings first seen most recently (most severe first among those of one moment),
    each with its table: {"table", "href", "finding"}."""
    found = [(f.since, -_SEVERITY_RANK.get(f.severity, 9), e, f) for e in entries for f in e.findings if f.since]
    found.sort(key=lambda x: (x[0], x[1]), reverse=True)
    return [{"table": e.table, "href": e.href, "finding": f} for _, _, e, f in found[:shown]]


def personal_rows(entries: Sequence[IndexEntry]) -> list[dict[str, Any]]:
    """The index's "where personal data lives": one row per column holding a class about a
    person, by table then column, each with its table's page."""
    rows = [
        {
            "table": e.table,
            "href": e.href,
            "column": c.name,
            "classes": c.personal,
            "share": c.personal_share,
            "reviewed": c.personal_reviewed,
        }
        for e in entries
        for c in e.columns
        if c.personal
    ]
    return sorted(rows, key=lambda r: (r["table"], r["column"]))
