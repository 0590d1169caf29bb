"""The one ranking of a table's stored scripts (docs/feedback-loop.md, step 3).

The next run starts from the first script of `rank_scripts`, and `cataloger
scripts list|show` marks that same script as "best": both rank through here,
so they cannot disagree.  Higher is better, in this order:

1. the script has metrics at all;
2. its pass rate, lowered by the issues that a later run found it failing on
   (that run's `relearned`), so a script that broke is not fed forward again;
3. its coverage of the current issues (``current_ids``); when they are unknown
   (``None``), the coverage its own run recorded;
4. whether it was written for the current schema (neutral when unknown);
5. fewer sandbox seconds;

and among equals the newest wins.  Metrics are read defensively: a store can
hold hand-edited or older files, and a bad value ranks as missing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional

from cataloger_dagster.core.values import finite_float

if TYPE_CHECKING:
    from cataloger_dagster.core.layout import ScriptRecord


def _failures(records: list[ScriptRecord]) -> dict[str, int]:
    """Per timestamp, the issues that later runs reusing that script had to relearn."""
    failures: dict[str, int] = {}
    for r in records:
        m = r.metrics or {}
        relearned = m.get("relearned")
        if m.get("based_on") and not m.get("based_on_table") and isinstance(relearned, list) and relearned:
            failures[m["based_on"]] = failures.get(m["based_on"], 0) + len(relearned)
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
    """``records`` best first (see the module's docstring for the order)."""
    failures = _failures(records)

    def key(record: ScriptRecord) -> tuple:
        m = record.metrics
        if not isinstance(m, dict):
            return (0, -1.0, -1.0, False, -math.inf)
        rate = finite_float(m.get("pass_rate"), 0.0)
        total = max(1.0, finite_float(m.get("investigations"), 0.0))
        effective = max(0.0, rate - failures.get(record.timestamp, 0) / total)
        return (
            1,
            # rounded so that float noise does not outrank the next criteria
            round(effective, 6),
            round(_coverage(m, current_ids), 6),
            schema_hash is not None and m.get("schema_hash") == schema_hash,
            -finite_float(m.get("seconds"), math.inf),
        )

    # newest first, so that among equals the newest wins (sorted is stable)
    newest_first = sorted(records, key=lambda r: r.timestamp, reverse=True)
    return sorted(newest_first, key=key, reverse=True)
