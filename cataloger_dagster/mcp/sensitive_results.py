"""What `run_sql` and `execute_python` hand back, under the sensitive-values policy.

The columns the stored profile classifies as sensitive are known by table.  A `run_sql` result
column whose values come from one of them, by the lineage of the statement the SQL policy wrote
back (an alias, an expression, a concatenation, a CTE or a subquery in between), has every value
replaced as the policy says (only what is found inside, in a free-text column).  A count of them
is no value of theirs and stays.  Where the lineage cannot be traced, a result column named like
a sensitive column is taken as it.  Besides, every text (a cell, a printed line) goes through the
policy's scrub of what proves its class and of the sensitive columns' own values, read from the
database once per table and held in memory only.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

import sqlglot
from sqlglot import exp
from sqlglot.lineage import lineage
from sqlglot.optimizer.qualify import qualify

from cataloger_dagster.core.sensitive.masking import KnownValues, ValuePolicy

if TYPE_CHECKING:
    from cataloger_dagster.mcp.catalog import Catalog

WHOLE, INSIDE = "whole", "inside"  # the value is personal; personal values are inside the text
KNOWN_PER_COLUMN = 5000  # distinct values of one sensitive column held to scrub text


def _hidden(value: Any, how: Optional[str], values: ValuePolicy) -> Any:
    if how == WHOLE:
        return values.protect(value)
    return values.value(value)


class SensitiveResults:
    """The sensitive columns of the catalog's tables, and what a result of them may show."""

    def __init__(self, catalog: "Catalog", values: ValuePolicy, read_values: Callable[[str, str], Iterable[Any]]):
        """``read_values(table, column)``: that column's distinct values (a bounded number)."""
        self.catalog, self.values, self.read_values = catalog, values, read_values
        self._known: dict[str, KnownValues] = {}
        self._lock = threading.Lock()

    def classes(self, table: str) -> dict[str, str]:
        """{column: WHOLE or INSIDE} of the table's sensitive columns, as its stored profile says."""
        if table not in self.catalog.tables():
            return {}
        found = self.catalog.results(table)
        if found is None or found.profile is None:
            return {}
        return {
            c.name: INSIDE if all(s.in_text for s in c.sensitive) else WHOLE
            for c in found.profile.columns
            if c.sensitive
        }

    def known(self, table: str) -> KnownValues:
        """The values of the table's wholly sensitive columns, read once (in memory only)."""
        with self._lock:
            if table not in self._known:
                known = KnownValues()
                for column, how in self.classes(table).items():
                    if how == WHOLE:
                        known.add(str(v) for v in self.read_values(table, column) if isinstance(v, str))
                self._known[table] = known
            return self._known[table]

    def policy_for(self, tables: Iterable[str]) -> ValuePolicy:
        """The policy with the known values of `tables` (those of the catalog among them)."""
        known = KnownValues()
        for table in tables:
            for values in self.known(table).by_first.values():
                known.add(values)
        return ValuePolicy(self.values.policy, self.values.key, known)

    # ------------------------------------------------------------------ run_sql

    def _tables(self, tree: exp.Expression) -> dict[str, str]:
        """{name as the query writes it, lower-cased: the catalog's table} of the tables read."""
        catalogued = {t.lower(): t for t in self.catalog.tables()}
        return {
            t.name.lower(): catalogued[t.name.lower()] for t in tree.find_all(exp.Table) if t.name.lower() in catalogued
        }

    def output_classes(self, sql: str, dialect: str, columns: list[str]) -> list[Optional[str]]:
        """WHOLE, INSIDE or None for each result column of `sql` (the statement that ran)."""
        try:
            tree = sqlglot.parse_one(sql, dialect=dialect)
        except Exception:  # noqa: BLE001 - the policy parsed it; a failure here is a bug: hide by name
            return self._by_name(list(self.catalog.tables()), columns)
        tables = self._tables(tree)
        classes = {table: self.classes(table) for table in set(tables.values())}
        if not any(classes.values()):
            return [None] * len(columns)
        try:
            return self._by_lineage(tree, dialect, tables, classes, columns)
        except Exception:  # noqa: BLE001 - sqlglot cannot trace every query: hide by name then
            return self._by_name(list(tables.values()), columns)

    def _by_name(self, tables: list[str], columns: list[str]) -> list[Optional[str]]:
        named: dict[str, str] = {}
        for table in tables:
            for column, how in self.classes(table).items():
                if named.get(column.lower()) != WHOLE:
                    named[column.lower()] = how
        return [named.get(c.lower()) for c in columns]

    def _by_lineage(
        self,
        tree: exp.Expression,
        dialect: str,
        tables: dict[str, str],
        classes: dict[str, dict[str, str]],
        columns: list[str],
    ) -> list[Optional[str]]:
        schema: dict[str, dict[str, str]] = {}
        for written, table in tables.items():
            found = self.catalog.results(table)
            if found is not None and found.profile is not None:
                schema[written] = {c.name.lower(): "TEXT" for c in found.profile.columns}
        qualified = qualify(tree.copy(), schema=schema, dialect=dialect, validate_qualify_columns=False)
        if not isinstance(qualified, exp.Query) or len(qualified.selects) != len(columns):
            raise ValueError("the result's columns are not the query's")
        by_written = {w: {c.lower(): how for c, how in classes.get(t, {}).items()} for w, t in tables.items()}
        out: list[Optional[str]] = []
        for projection in qualified.selects:
            inner = projection.unalias() if isinstance(projection, exp.Alias) else projection
            if isinstance(inner, (exp.Count, exp.ApproxDistinct)):
                out.append(None)  # how many, never which
                continue
            node = lineage(projection.alias_or_name, qualified, schema=schema, dialect=dialect)
            sources: set[str] = set()
            for leaf in node.walk():
                if leaf.downstream or not isinstance(leaf.expression, exp.Table):
                    continue
                column = exp.to_column(leaf.name).name.lower()
                how = by_written.get(leaf.expression.name.lower(), {}).get(column)
                if how:
                    sources.add(how)
            out.append(WHOLE if WHOLE in sources else INSIDE if sources else None)
        return out

    def result(self, result: dict, sql: str, dialect: str) -> dict:
        """`run_sql`'s result with no sensitive value in clear."""
        try:
            tables = list(set(self._tables(sqlglot.parse_one(sql, dialect=dialect)).values()))
        except Exception:  # noqa: BLE001 - see output_classes
            tables = list(self.catalog.tables())
        how = self.output_classes(sql, dialect, result["columns"])
        values = self.policy_for(tables)
        rows = [[_hidden(v, h, values) for v, h in zip(row, how)] for row in result["rows"]]
        return {**result, "rows": rows, "sensitive_columns": [c for c, h in zip(result["columns"], how) if h]}

    def text(self, table: str, text: Any) -> Any:
        """What `execute_python` printed over `table`, its sensitive values scrubbed."""
        return self.policy_for([table]).value(text)
