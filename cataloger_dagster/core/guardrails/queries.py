"""Each expectation as one SELECT through ibis, in the dialect of the table it is built on.

Every statement returns one row whose first value is `measured`; `keys_sql` returns a few of the
breaking rows' keys.  Names reach the SQL only through ibis, which quotes them: a column named
``x"; drop table t; --`` is a column, never a statement.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import ibis

from cataloger_dagster.core.issues.detectors.rules import breaking
from cataloger_dagster.core.models import ColumnRule

KEYS_SHOWN = 5  # breaking rows' keys a failing result shows


def sql(expr: Any, dialect: Optional[str]) -> str:
    return str(ibis.to_sql(expr, dialect=dialect, pretty=False))


def dialect_of(table: ibis.Table) -> Optional[str]:
    """The dialect a bound table's backend speaks; None for an unbound table (then given)."""
    try:
        return table.get_backend().dialect.__name__.lower()  # type: ignore[attr-defined]
    except Exception:
        return None


def breaking_rows(table: ibis.Table, condition: Any) -> Any:
    """The number of rows meeting `condition` (the breaking ones), as the first value of one row."""
    return table.filter(condition).aggregate(measured=ibis._.count())


def row_count(table: ibis.Table) -> Any:
    return table.aggregate(measured=ibis._.count())


def null_share(table: ibis.Table, column: str) -> Any:
    c = table[column]
    return table.aggregate(measured=c.isnull().ifelse(1.0, 0.0).mean())


def repeated_values(table: ibis.Table, column: str) -> Any:
    """Values of `column` held by more than one row."""
    c = table[column]
    counted = table.filter(c.notnull()).group_by(column).aggregate(n=ibis._.count())
    return counted.filter(counted.n > 1).aggregate(measured=ibis._.count())


def outside(table: ibis.Table, column: str, values: Sequence[Any]) -> Any:
    c = table[column]
    return c.notnull() & ~c.isin(list(values))


def beyond(table: ibis.Table, column: str, low: Optional[float], high: Optional[float]) -> Any:
    c = table[column]
    parts = []
    if low is not None:
        parts.append(c < low)
    if high is not None:
        parts.append(c > high)
    return ibis.or_(*parts) if parts else ibis.literal(False)


def unmatched(pattern: str, table: ibis.Table, column: str) -> Any:
    c = table[column]
    return c.notnull() & ~c.cast("string").re_search(pattern)


def padded(table: ibis.Table, column: str) -> Any:
    c = table[column]
    return c.notnull() & (c != c.strip())


def among(table: ibis.Table, column: str, values: Sequence[Any]) -> Any:
    return table[column].isin(list(values))


def rule_broken(table: ibis.Table, rule: ColumnRule) -> Any:
    return breaking(table, rule)


def orphans(table: ibis.Table, column: str, target: ibis.Table, target_column: str) -> Any:
    """Rows of `table` whose `column` has a value with no row in `target`."""
    keys = target.select(_key=target[target_column]).filter(ibis._["_key"].notnull()).distinct()
    joined = table.filter(table[column].notnull()).left_join(keys, table[column] == keys["_key"])
    return joined.filter(joined["_key"].isnull()).aggregate(measured=ibis._.count())


def newest(table: ibis.Table, column: str) -> Any:
    return table.aggregate(measured=table[column].max())


def keys_of(table: ibis.Table, condition: Any, key: Sequence[str]) -> Any:
    return table.filter(condition).select(*key).order_by(*key).limit(KEYS_SHOWN)
