"""One table's writeback over a connection to the database: its comments read, the changes
planned from its latest understanding, the statements, the script, and applying them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Optional, Protocol

from cataloger_dagster.core.grammar import count_noun
from cataloger_dagster.core.layout import UNDERSTANDING, table_prefix
from cataloger_dagster.core.results import StoredUnderstanding, latest_results
from cataloger_dagster.core.shown import visible
from cataloger_dagster.core.store import Store
from cataloger_dagster.core.writeback import ledger, sql
from cataloger_dagster.core.writeback.mysql import DefinitionError, column_definitions
from cataloger_dagster.core.writeback.plan import CommentChange, plan_comments


class WritebackError(ValueError):
    """One table cannot be written back; the message says why and what to do (the caller names
    the table)."""


class SqlSession(Protocol):
    """A connection to the database as the writeback uses it."""

    dialect: sql.Dialect
    schema: Optional[str]  # PostgreSQL's schema, MySQL's database; None for DuckDB (the file's own)

    def rows(self, query: str) -> list[tuple]: ...
    def execute(self, statements: list[str]) -> None: ...


@dataclass(frozen=True)
class TableComments:
    """A table's comments now: its own (None for none) and each column's, in the table's order;
    for MySQL, each column's definition without its comment."""

    table: Optional[str]
    columns: dict[str, Optional[str]]
    definitions: dict[str, str] = field(default_factory=dict)

    def by_object(self) -> dict[Optional[str], Optional[str]]:
        found: dict[Optional[str], Optional[str]] = {None: self.table}
        found.update(self.columns)
        return found


def read_comments(session: SqlSession, table: str) -> TableComments:
    table_query, columns_query = sql.comment_queries(session.dialect, session.schema, table)
    own = session.rows(table_query)
    if not own:
        raise WritebackError("no such table in the database (or no longer): check the name")
    columns = {name: comment or None for name, comment in session.rows(columns_query)}
    definitions = {}
    if session.dialect == "mysql":
        [(_, create)] = session.rows(sql.show_create_table(session.schema, table))
        try:
            definitions = column_definitions(create)
        except DefinitionError as exc:
            raise WritebackError(f"cannot read its columns' definitions ({exc})") from None
    return TableComments(own[0][0] or None, columns, definitions)


@dataclass(frozen=True)
class TableWriteback:
    table: str
    changes: list[CommentChange]
    statements: list[str]


def plan_table(store: Store, database: str, session: SqlSession, table: str, *, overwrite: bool) -> TableWriteback:
    """The writeback of ``table`` from its latest understanding; nothing is written."""
    prefix = table_prefix(database, table)
    found = latest_results(store, prefix, UNDERSTANDING, limit=1)
    if not found:
        raise WritebackError("no catalog run has written an understanding yet; run `cataloger run` first")
    understanding: StoredUnderstanding = found[0][1]
    current = read_comments(session, table)
    changes = plan_comments(
        table, understanding, current.by_object(), ledger.catalog_comments(store, prefix), overwrite=overwrite
    )
    statements = []
    for change in changes:
        if change.action != "write":
            continue
        if change.column is None:
            statements.append(sql.table_comment(session.dialect, session.schema, table, change.new))
        else:
            definition = current.definitions.get(change.column, "")
            statements.append(
                sql.column_comment(session.dialect, session.schema, table, change.column, change.new, definition)
            )
    return TableWriteback(table, changes, statements)


def script(writebacks: Iterable[TableWriteback], dialect: sql.Dialect) -> str:
    """The statements of every table, each table's under a line naming it; runnable as it is."""
    lines = [f"-- cataloger writeback: the catalog's descriptions as {dialect} comments"]
    for wb in writebacks:
        lines.append(f"\n-- {visible(wb.table)}: {count_noun(len(wb.statements), 'comment')} to write")
        lines += wb.statements
    return "\n".join(lines) + "\n"


def remember(store: Store, database: str, wb: TableWriteback, *, applied: bool) -> None:
    """Adds the texts ``wb`` writes to the table's ledger (ledger.py), applied or only scripted."""
    ledger.remember(store, table_prefix(database, wb.table), wb.changes, applied=applied)
