"""The one ranking of a table's stored scripts (docs/feedback-loop.md, step 3).

The next run starts from the first script of `rank_scripts`, and `cataloger
scripts list|show` marks that same script as "best": both rank through here,
so they cannot disagree.  Higher is better, in this order:

1. its pass rate, lowered by the issues that a later run found it failing on
   (that run's `relearned`), so a script that broke is not fed forward again;
2. its coverage of the current issues (``current_ids``); when they are unknown
   (``None``), the coverage its own run recorded;
3. whether it was written for the current schema (neutral when unknown);
4. fewer sandbox seconds;

and among equals the newest wins.  Metrics are read defensively: a store can
hold hand-edited or older files, and a bad value ranks as missing.

Only scripts the catalog wrote are ranked at all (`script_origin`).  A script
saved from outside (MCP `save_script`) carries metrics measured from its own
printed `record(...)` lines, which its author chose: ranking it would let any
client print "confirmed" for every issue and have its code run first in every
later catalog run.  So it is kept for people to read (`get_script`, `cataloger
scripts show`), and never fed to a run.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional

from cataloger_dagster.core.values import finite_float
from cataloger_dagster.core.results import script_metrics

if TYPE_CHECKING:
    from cataloger_dagster.core.layout import ScriptRecord


CATALOG = "catalog"
MCP = "mcp"
UNKNOWN = "unknown"


def script_origin(metrics: object) -> str:
    """Who wrote a stored script: "catalog" (a catalog run), "mcp" (an MCP client's
    `save_script`), or "unknown" (no metrics to tell).  Metrics written before the
    "origin" field existed are the catalog's unless they carry the marks every MCP save
    has written since save_script existed (agent/source "mcp", a session id)."""
    if not isinstance(metrics, dict):
        return UNKNOWN
    origin = metrics.get("origin")
    if isinstance(origin, str) and origin:
        return origin
    if MCP in (metrics.get("agent"), metrics.get("source")) or "session" in metrics:
        return MCP
    return CATALOG


def _failures(records: list[ScriptRecord]) -> dict[str, int]:
    """Per timestamp, the issues that later runs reusing that script had to relearn."""
    failures: dict[str, int] = {}
    for r in records:
        m = script_metrics(r.metrics)
        if m.based_on and not m.based_on_table and m.relearned:
            failures[m.based_on] = failures.get(m.based_on, 0) + len(m.relearned)
    return failures


def _coverage(metrics: dict, current_ids: Optional[set[str]]) -> float:
    if current_ids is None:
        return finite_float(metrics.get("coverage"), -1.0)
    if not current_ids:
        return 1.0
    answered = metrics.get("answered")
    answered = set(answered) if isinstance(answered, list) else set()
    return len(answered & current_ids) / len(current_ids)


def rank_scripts(
    records: list[ScriptRecord],
    *,
    current_ids: Optional[set[str]] = None,
    schema_hash: Optional[str] = None,
) -> list[ScriptRecord]:
    """The catalog's own ``records``, best first (see the module's docstring for the order);
    scripts of any other origin are left out, so the list may be empty."""
    records = [r for r in records if script_origin(r.metrics) == CATALOG]
    failures = _failures(records)

    def key(record: ScriptRecord) -> tuple:
        m = script_metrics(record.metrics)  # a dict: script_origin gave "catalog"
        rate = finite_float(m.pass_rate, 0.0)
        total = max(1.0, finite_float(m.investigations, 0.0))
        effective = max(0.0, rate - failures.get(record.timestamp, 0) / total)
        return (
            # rounded so that float noise does not outrank the next criteria
            round(effective, 6),
            round(_coverage(record.metrics or {}, current_ids), 6),
            schema_hash is not None and m.schema_hash == schema_hash,
            -finite_float(m.seconds, math.inf),
        )

    # newest first, so that among equals the newest wins (sorted is stable)
    newest_first = sorted(records, key=lambda r: r.timestamp, reverse=True)
    return sorted(newest_first, key=key, reverse=True)
