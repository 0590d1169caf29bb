"""A table without rows: one finding, and the only one, since nothing in it can be judged.

A table that ought to hold data and holds none is the first thing a reader of the catalog
must learn (a failed or truncated load, the URL's wrong schema, a table no longer fed); a
table meant to stay empty (a staging table between loads) is dismissed once by a reviewer.
"""

from __future__ import annotations

from cataloger_dagster.core.issues.detectors.context import Context, count
from cataloger_dagster.core.models import IssueModel


def empty_table(ctx: Context) -> IssueModel:
    columns = list(ctx.table.columns)
    # table-wide: it names no column, or the page would tag every column with it
    return IssueModel(
        id=f"{ctx.name}_empty_table",
        type="empty_table",
        affectedColumns=[],
        severity="medium",
        category="smart_fixes",
        description=f"{ctx.name} has no rows: its {count(len(columns), 'column')} hold nothing to profile or check.",
        suggestedAction="Check the load that fills it (a failed or truncated load, a load into another "
        "schema); drop the table if nothing uses it, or dismiss this if it is empty by design.",
        details={"rows": 0, "columns": len(columns)},
    )
