"""A category's values and a number's bounds, read back from their guardrail's statement for GX's
`ExpectColumnValuesToBeInSet` and `ExpectColumnValuesToBeBetween`.  The suite keeps them only as
SQL, so a reading counts only when the statement built from it again (queries.py, as the pins
build it) is the stored statement exactly: anything else stays the catalog's own statement."""

from __future__ import annotations

from typing import Any, Optional

import ibis
import sqlglot
from sqlglot import exp

from cataloger_dagster.core.guardrails import queries as q
from cataloger_dagster.core.guardrails.model import Guardrail


def _parsed(g: Guardrail, dialect: Optional[str], kind: str) -> Optional[tuple[exp.Expression, Any]]:
    """The statement's tree, and an unbound table of the one column, named as the statement names
    its table (with its catalog and database, as a backend's table renders)."""
    try:
        tree = sqlglot.parse_one(g.sql, read=dialect or None)
    except sqlglot.errors.ParseError:
        return None
    table = tree.find(exp.Table)
    if table is None:
        return None
    where = {"catalog": table.catalog or None, "database": table.db or None}
    return tree, ibis.table({g.columns[0]: kind}, name=table.name, **where)


def _same(g: Guardrail, built: Any, dialect: Optional[str]) -> bool:
    try:
        return q.sql(built, dialect) == g.sql
    except Exception:  # noqa: BLE001 - a statement ibis cannot build again is not a reading
        return False


def accepted_values(g: Guardrail, dialect: Optional[str]) -> Optional[list[str]]:
    if g.kind != "accepted_values" or len(g.columns) != 1 or g.high != 0 or g.low or g.measure != "rows":
        return None
    parsed = _parsed(g, dialect, "string")
    found = parsed[0].find(exp.In) if parsed else None
    if (
        parsed is None
        or found is None
        or not all(isinstance(v, exp.Literal) and v.is_string for v in found.expressions)
    ):
        return None
    values = [v.this for v in found.expressions]
    t = parsed[1]
    return values if _same(g, q.breaking_rows(t, q.outside(t, g.columns[0], values)), dialect) else None


def bounds(g: Guardrail, dialect: Optional[str]) -> Optional[tuple[float, float]]:
    if g.kind != "range" or len(g.columns) != 1 or g.high != 0 or g.low or g.measure != "rows" or g.guards:
        return None
    parsed = _parsed(g, dialect, "float64")
    if parsed is None:
        return None
    below, above = parsed[0].find(exp.LT), parsed[0].find(exp.GT)
    if below is None or above is None:
        return None
    try:
        low, high = float(below.expression.sql()), float(above.expression.sql())
    except ValueError:
        return None
    t = parsed[1]
    return (low, high) if _same(g, q.breaking_rows(t, q.beyond(t, g.columns[0], low, high)), dialect) else None
