"""Fix scripts in SQL: statements built as sqlglot expressions, so that every table name,
column name and value reaches the script quoted (an identifier as an identifier, a value as a
literal) in the source's own dialect, whatever characters it holds.  Comments get names only
through `codegen.comment_text` (printable ASCII, one line).

cataloger writes these scripts and never runs them against the source: a person reads one,
tries it on a copy and runs it.  A script runs in one transaction.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Iterable, Optional

import sqlglot
from sqlglot import exp

from cataloger_dagster.core.investigate.codegen import comment_text

# the sqlglot dialect of each database URL scheme
DIALECTS = {
    "duckdb": "duckdb",
    "sqlite": "sqlite",
    "postgres": "postgres",
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
}
STAGING = "cataloger_fix_rows"  # the temporary table a rewrite of the table goes through
RANK = "cataloger_fix_rank"


class Unscriptable(ValueError):
    """A name or value no SQL script can carry (a NUL character, a NaN): the fix is done by hand."""


def _text(value: str) -> str:
    if "\x00" in value:
        raise Unscriptable(f"{value!r} holds a NUL character, which no SQL text can carry")
    return value


def ident(name: str) -> exp.Identifier:
    return exp.to_identifier(_text(name), quoted=True)


def literal(value: Any) -> exp.Expression:
    """A value as a SQL literal: text quoted and escaped by sqlglot for the dialect, numbers as numbers."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(int(value))
    if isinstance(value, (float, Decimal)):
        if not math.isfinite(value):
            raise Unscriptable(f"{value!r} is no SQL number")
        return exp.Literal.number(repr(float(value)) if isinstance(value, float) else str(value))
    if isinstance(value, str):
        return exp.Literal.string(_text(value))
    raise TypeError(f"no SQL literal for a {type(value).__name__}: pass text or a number")


@dataclass(frozen=True)
class FixTarget:
    """The table a script fixes: its name, the source's SQL dialect, and its schema when the
    connection names one (PostgreSQL's ?schema=)."""

    table: str
    dialect: str = "duckdb"
    schema: Optional[str] = None

    def __post_init__(self) -> None:
        if self.dialect not in set(DIALECTS.values()):
            raise ValueError(
                f"no fix scripts for the SQL dialect {self.dialect!r}: one of "
                f"{', '.join(sorted(set(DIALECTS.values())))}"
            )

    def table_expr(self, name: Optional[str] = None) -> exp.Table:
        return exp.Table(
            this=ident(self.table if name is None else name), db=ident(self.schema) if self.schema else None
        )

    def column(self, name: str) -> exp.Column:
        return exp.Column(this=ident(name))

    def sql(self, expression: exp.Expression) -> str:
        # one line per statement: a line break in the text can only come from a quoted name or value
        return expression.sql(dialect=self.dialect, pretty=False)


# --------------------------------------------------------------------------- predicates


def any_of(conditions: Iterable[exp.Expression]) -> exp.Expression:
    items = list(conditions)
    if not items:
        raise ValueError("no condition to combine")
    return exp.or_(*items) if len(items) > 1 else items[0]


def all_of(*conditions: Optional[exp.Expression]) -> exp.Expression:
    items = [c for c in conditions if c is not None]
    return exp.and_(*items) if len(items) > 1 else items[0]


def is_in(column: exp.Expression, values: Iterable[Any]) -> exp.Expression:
    return exp.In(this=column, expressions=[literal(v) for v in values])


def not_in_keys(value: exp.Expression, target: FixTarget, table: str, column: str) -> exp.Expression:
    """``value`` is set and matches no key of ``table.column`` (NULL keys left out, so that NOT IN
    never turns unknown)."""
    key = exp.Column(this=ident(column))
    keys = (
        exp.select(key)
        .from_(target.table_expr(table))
        .where(exp.Not(this=exp.Is(this=key.copy(), expression=exp.Null())))
    )
    return exp.and_(
        exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null())),
        exp.Not(this=exp.In(this=value.copy(), query=exp.Subquery(this=keys))),
    )


# --------------------------------------------------------------------------- statements


def update(target: FixTarget, column: str, value: exp.Expression, where: exp.Expression) -> exp.Expression:
    return exp.update(target.table_expr(), {ident(column): value}, where=where)


def delete(target: FixTarget, where: Optional[exp.Expression]) -> exp.Expression:
    statement = exp.delete(target.table_expr())
    return statement.where(where) if where is not None else statement


def insert_missing_keys(
    target: FixTarget, value: exp.Expression, where: exp.Expression, table: str, column: str
) -> exp.Expression:
    """INSERT INTO table (column) SELECT DISTINCT value FROM the target WHERE ...: the referenced
    table's other columns take their defaults."""
    select = exp.select(value).distinct().from_(target.table_expr()).where(where)
    into = exp.Schema(this=target.table_expr(table), expressions=[ident(column)])
    return exp.Insert(this=into, expression=select)


def _null_count(columns: list[str]) -> exp.Expression:
    terms = [
        exp.Case(
            ifs=[exp.If(this=exp.Is(this=exp.column(ident(c)), expression=exp.Null()), true=exp.Literal.number(1))],
            default=exp.Literal.number(0),
        )
        for c in columns
    ]
    total: exp.Expression = terms[0]
    for term in terms[1:]:
        total = exp.Add(this=total, expression=term)
    return total


def rewrite(target: FixTarget, columns: list[str], kept: exp.Select) -> list[exp.Expression]:
    """Replace the table's rows by ``kept`` (a SELECT of ``columns``), through a temporary table,
    keeping the table itself (its types, constraints and grants)."""
    staging = exp.Table(this=ident(STAGING))
    names = [ident(c) for c in columns]
    create = exp.Create(
        this=staging, kind="TABLE", expression=kept, properties=exp.Properties(expressions=[exp.TemporaryProperty()])
    )
    refill = exp.Insert(
        this=exp.Schema(this=target.table_expr(), expressions=names),
        expression=exp.select(*[exp.column(n.copy()) for n in names]).from_(staging.copy()),
    )
    return [create, delete(target, None), refill]


def drop_staging(target: FixTarget) -> exp.Expression:
    # MySQL commits on a plain DROP TABLE; the others know no DROP TEMPORARY
    return exp.Drop(this=exp.Table(this=ident(STAGING)), kind="TABLE", exists=True, temporary=target.dialect == "mysql")


def one_row_per_key(
    target: FixTarget,
    columns: list[str],
    key: list[str],
    *,
    latest: Optional[str] = None,
    comparable: Optional[list[str]] = None,
) -> exp.Select:
    """The table with one row per ``key``: the latest by ``latest`` when given, else the one with
    the fewest NULLs (ties broken by the column values, so that the choice is repeatable).  Rows
    whose one-column key is NULL are all kept: a missing key repeats nothing."""
    order: list[exp.Expression] = []
    if latest:
        late = exp.column(ident(latest))
        order += [
            exp.Ordered(
                this=exp.Case(
                    ifs=[exp.If(this=exp.Is(this=late, expression=exp.Null()), true=exp.Literal.number(1))],
                    default=exp.Literal.number(0),
                )
            ),
            exp.Ordered(this=late.copy(), desc=True),
        ]
    tie = comparable if comparable is not None else columns
    if tie:
        order.append(exp.Ordered(this=_null_count(tie)))
        order += [exp.Ordered(this=exp.column(ident(c))) for c in tie if c not in key]
    window = exp.Window(
        this=exp.RowNumber(),
        partition_by=[exp.column(ident(k)) for k in key],
        order=exp.Order(expressions=order) if order else None,
    )
    ranked = exp.select(*[exp.column(ident(c)) for c in columns], exp.alias_(window, ident(RANK))).from_(
        target.table_expr()
    )
    first: exp.Expression = exp.EQ(this=exp.column(ident(RANK)), expression=exp.Literal.number(1))
    if len(key) == 1:
        first = exp.or_(first, exp.Is(this=exp.column(ident(key[0])), expression=exp.Null()))
    return (
        exp.select(*[exp.column(ident(c)) for c in columns])
        .from_(exp.Subquery(this=ranked, alias=exp.TableAlias(this=ident("ranked"))))
        .where(first)
    )


def distinct_rows(target: FixTarget, columns: list[str]) -> exp.Select:
    return exp.select(*[exp.column(ident(c)) for c in columns]).distinct().from_(target.table_expr())


# --------------------------------------------------------------------------- the script


def script(
    target: FixTarget,
    statements: list[exp.Expression],
    *,
    title: str,
    issue_id: str,
    notes: Iterable[str] = (),
    after: Iterable[exp.Expression] = (),
) -> str:
    """The file a person runs: a header of comments (names only through `comment_text`), then
    ``statements`` in one transaction, then ``after`` (clean-up that must follow the commit)."""
    header = [
        f"-- {comment_text(title)}",
        f"-- Issue {comment_text(issue_id)} of table {comment_text(target.table)} ({target.dialect}).",
        "-- Written by cataloger from the issue's evidence; cataloger never runs it against your data.",
        "-- Read it, try it on a copy of the table, then run it yourself. Names and values are quoted as SQL",
        "-- identifiers and literals: whatever they hold, they stay data.",
        *(f"-- {comment_text(note)}" for note in notes),
    ]
    begin = "BEGIN TRANSACTION;" if target.dialect == "sqlite" else "BEGIN;"
    body = [f"{target.sql(s)};" for s in statements]
    tail = [f"{target.sql(s)};" for s in after]
    return "\n".join([*header, begin, *body, "COMMIT;", *tail]) + "\n"


def statements_of(text: str, dialect: str) -> list[exp.Expression]:
    """The statements of a script as sqlglot reads them (for checks that a script is what it says)."""
    return [s for s in sqlglot.parse(text, read=dialect) if s is not None]


# --------------------------------------------------------------------------- display


def _hidden(char: str) -> bool:
    """Characters that change how text looks without showing: controls, bidi overrides, separators."""
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") and char not in "\t"


def _shown(text: str, keep_breaks: bool) -> str:
    return "".join(ascii(c)[1:-1] if _hidden(c) and not (keep_breaks and c == "\n") else c for c in text)


def shown_script(text: str, dialect: Optional[str]) -> str:
    """A script as a page shows it: the quoted names and values with their line breaks, bidi
    overrides and control characters written as escapes (\\n, \\u202e), so that a name cannot
    pass for a statement or reorder the text; the script's own lines unchanged."""
    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(text) if dialect else []
    except Exception:  # not SQL we can read: every hidden character but the line breaks shows
        return _shown(text, keep_breaks=True)
    quoted = [(t.start, t.end + 1) for t in tokens if t.token_type.name in ("IDENTIFIER", "STRING")]
    out, position = [], 0
    for start, end in quoted:
        out.append(_shown(text[position:start], keep_breaks=True))
        out.append(_shown(text[start:end], keep_breaks=False))
        position = end
    out.append(_shown(text[position:], keep_breaks=True))
    return "".join(out)
