"""The SQL policy of `run_sql`: a statement is parsed, never pattern-matched.

sqlglot parses the text in the database's own dialect; the policy then walks the tree:

* exactly one statement, a query (SELECT, WITH ... SELECT, a set operation of them);
* no node anywhere that writes or changes the session: DML (also inside a CTE), DDL, SELECT INTO,
  FOR UPDATE, COPY, ATTACH, INSTALL, LOAD, PRAGMA, SET, and whatever sqlglot only keeps as
  an opaque command (EXPLAIN, CALL, LOAD...);
* no function outside the dialect's allow-list (`sql_functions`): nothing that runs SQL given
  as text, reads files or the network, takes locks or changes the server gets through;
* on DuckDB, no table that is a file path (DuckDB reads ``FROM 'x.csv'``).

What runs is the SQL sqlglot writes back from the checked tree, with the row limit set in it,
and only when that text reads back as the same tree: twice, by sqlglot itself and by a small
reader of the database's own quoting rules (where the string, identifier and comment forms
of the client's text are read differently by the database and by sqlglot, the written-back
text shows it).  The runner (`sql_run`) sends that one statement through the driver's
single-statement path, on a connection that is read-only in its own right.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import TokenType

from cataloger_dagster.core.fixes.sql import DIALECTS
from cataloger_dagster.mcp.sql_functions import allowed

DEFAULT_ROW_LIMIT = 1000

# Nodes that write, lock or change the session, wherever they sit in the tree.
_FORBIDDEN_NODES: dict[type, str] = {
    exp.Insert: "INSERT",
    exp.Update: "UPDATE",
    exp.Delete: "DELETE",
    exp.Merge: "MERGE",
    exp.Create: "CREATE",
    exp.Drop: "DROP",
    exp.Alter: "ALTER",
    exp.TruncateTable: "TRUNCATE",
    exp.Copy: "COPY",
    exp.Attach: "ATTACH",
    exp.Detach: "DETACH",
    exp.Install: "INSTALL",
    exp.Pragma: "PRAGMA",
    exp.Set: "SET",
    exp.Use: "USE",
    exp.Command: "a command",
    exp.Transaction: "a transaction",
    exp.Commit: "COMMIT",
    exp.Rollback: "ROLLBACK",
    exp.Into: "SELECT INTO (it creates a table)",
    exp.Lock: "a row lock (FOR UPDATE/SHARE)",
    exp.LoadData: "LOAD DATA",
    exp.Grant: "GRANT",
    exp.Cache: "CACHE",
    exp.Uncache: "UNCACHE",
    exp.Refresh: "REFRESH",
    exp.Kill: "KILL",
    exp.Export: "EXPORT",
    exp.Revoke: "REVOKE",
    exp.Comment: "COMMENT",
    exp.Analyze: "ANALYZE",
}
# a table name DuckDB would read as a file (its replacement scans) or a URL
_FILE_LIKE = re.compile(
    r"[/\\:~]|\.(csv|tsv|txt|parquet|json|jsonl|ndjson|gz|zst|xlsx|arrow|db|duckdb|sqlite)$", re.IGNORECASE
)
# the tokens of quoted text: their spans in the written-back SQL are read twice
_QUOTED_TOKENS = {
    TokenType.STRING,
    TokenType.NATIONAL_STRING,
    TokenType.RAW_STRING,
    TokenType.BIT_STRING,
    TokenType.HEX_STRING,
    TokenType.BYTE_STRING,
    TokenType.HEREDOC_STRING,
    TokenType.UNICODE_STRING,
    TokenType.IDENTIFIER,
}
_STRING_PREFIXES = "eEbBxXnN"  # E'..' (backslash escapes), B'..', X'..', N'..'


class PolicyError(ValueError):
    """The statement is not allowed; the message says why and what is."""


@dataclass(frozen=True)
class Decision:
    """What the policy made of one statement: `sql` is what runs (only when allowed)."""

    allowed: bool
    reason: str
    dialect: str
    sql: Optional[str] = None
    row_limit: Optional[int] = None

    def as_dict(self) -> dict:
        return {"allowed": self.allowed, "reason": self.reason, "dialect": self.dialect}


def dialect_of(scheme: str) -> str:
    """The sqlglot dialect of a database URL's scheme (DuckDB's for ibis's other backends: the
    policy then fails closed on what DuckDB's parser cannot read)."""
    return DIALECTS.get(scheme.lower(), "duckdb")


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def _parse(sql: str, dialect: str) -> list[exp.Expression]:
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)  # "falling back to a Command" is a refusal here, not a warning
    try:
        return [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    finally:
        logger.setLevel(level)


def _refusal(tree: exp.Expression, dialect: str) -> Optional[str]:
    if not isinstance(tree, (exp.Query, exp.Subquery)) or isinstance(tree, exp.Values):
        # sqlglot keeps what it cannot parse as a Command holding its first word
        what = str(tree.this).split()[0].upper() if isinstance(tree, exp.Command) and tree.this else tree.key.upper()
        return f"only a query (SELECT or WITH ... SELECT) may run, not {what}"
    for node in tree.walk():
        for kind, what in _FORBIDDEN_NODES.items():
            if isinstance(node, kind):
                inside = " inside a CTE" if node.find_ancestor(exp.CTE) else ""
                return f"{what}{inside} is not allowed: run_sql is read-only"
        # operators (AND, ||, ^...) are function nodes to sqlglot, but call nothing
        if isinstance(node, exp.Func) and not isinstance(node, (exp.Binary, exp.Unary, exp.Connector)):
            name = _function_name(node)
            if not allowed(type(node).__name__, name, dialect):
                return (
                    f"function {name}() is not allowed: run_sql calls only the {dialect} functions that "
                    "compute values (aggregates, window, math, string, date, JSON...), never one that "
                    "runs SQL given as text, reads files or the network, takes locks or acts on the server"
                )
        if isinstance(node, exp.Table):
            if isinstance(node.this, exp.Literal) and node.this.is_string:
                return f"reading the file or URL {node.this.this!r} is not allowed: query the database's tables"
            if dialect == "duckdb" and isinstance(node.this, exp.Identifier) and _FILE_LIKE.search(node.name):
                return f"table {node.name!r} looks like a file or URL, which DuckDB would read: not allowed"
    return None


def _every_row(limit: exp.Expression) -> bool:
    """`LIMIT 100 PERCENT` (or more): a limit that keeps every row, but that DuckDB can only
    apply after counting them all."""
    options = limit.args.get("limit_options")
    given = limit.args.get("expression")
    return (
        options is not None
        and bool(options.args.get("percent"))
        and not options.args.get("with_ties")
        and isinstance(given, exp.Literal)
        and not given.is_string
        and float(given.this) >= 100
    )


def _without_every_row(tree: exp.Query) -> exp.Query:
    tree = tree.copy()
    if (
        isinstance(tree, exp.Select)
        and isinstance(tree.args.get("limit"), exp.Limit)
        and _every_row(tree.args["limit"])
    ):
        tree.set("limit", None)
    return tree


def _with_limit(tree: exp.Query, row_limit: int) -> exp.Expression:
    """The query returning at most `row_limit` rows: its own LIMIT lowered, or one added.  A set
    operation, or a query whose limit is of another form (an OFFSET, a percentage, FETCH FIRST,
    WITH TIES), is wrapped instead, so its meaning stays whole."""
    current = tree.args.get("limit")
    if isinstance(tree, exp.Select) and not tree.args.get("offset"):
        if current is None:
            return tree.limit(row_limit, copy=False)
        given = current.expression if isinstance(current, exp.Limit) else None
        if (
            not current.args.get("limit_options")
            and isinstance(given, exp.Literal)
            and given.is_int
            and int(given.this) <= row_limit
        ):
            return tree
    return _wrapped(tree, row_limit)


def _wrapped(tree: exp.Query, row_limit: int) -> exp.Expression:
    return exp.select("*").from_(tree.subquery("cataloger_rows", copy=True)).limit(row_limit)


def quoted_spans(text: str) -> tuple[list[tuple[int, int]], Optional[str]]:
    """The spans of the quoted strings and identifiers of `text`, read by PostgreSQL's and DuckDB's
    own rules (standard_conforming_strings on: a backslash escapes only in E'...'; a doubled quote
    is one quote), and what a written-back query must never hold outside them: a comment, a
    semicolon, a dollar quote or an unterminated quote."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)

    def word_before(at: int) -> bool:
        return at >= 0 and (text[at].isalnum() or text[at] in "_$")

    while i < n:
        c = text[i]
        if c in "'\"":
            start, escapes = i, False
            if c == "'" and i > 0 and text[i - 1] in _STRING_PREFIXES and not word_before(i - 2):
                start, escapes = i - 1, text[i - 1] in "eE"
            j = i + 1
            while True:
                if j >= n:
                    return spans, "an unterminated quote"
                if escapes and text[j] == "\\":
                    j += 2
                    continue
                if text[j] == c:
                    if j + 1 < n and text[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            spans.append((start, j))
            i = j + 1
            continue
        if text.startswith("--", i) or text.startswith("/*", i):
            return spans, "a comment"
        if c == ";":
            return spans, "a semicolon"
        if c == "$" and not word_before(i - 1):
            return spans, "a dollar quote or parameter"
        i += 1
    return spans, None


def _literals(tree: exp.Expression) -> Counter:
    """The values a query carries as written: its literals and names."""
    found = Counter(("literal", n.is_string, str(n.this)) for n in tree.find_all(exp.Literal))
    found.update(("name", n.quoted, str(n.this)) for n in tree.find_all(exp.Identifier))
    return found


def _misread(text: str, tree: exp.Expression, dialect: str) -> Optional[str]:
    """Why `text` (sqlglot's writing of the checked `tree`) may not run as checked, or None.

    The text must read back, in sqlglot, as the same tree, or (where sqlglot spells a function
    or a clause the dialect's own way) as a tree with the very same literals and names that
    sqlglot writes back unchanged and that passes the policy itself (a string read
    differently would show as a literal lost); and the database's own
    quoting rules must end every string and name where sqlglot ends it."""
    try:
        again = _parse(text, dialect)
    except (ParseError, TokenError):
        again = []
    if len(again) != 1:
        return "sqlglot reads its own writing of it as another query"
    reread = again[0]
    if reread != tree:
        # sqlglot may spell out a default argument (RPAD's ' '), never drop or change one
        if _literals(tree) - _literals(reread):
            return "sqlglot reads its own writing of it with other strings or names"
        if reread.sql(dialect=dialect, comments=False) != text:
            return "sqlglot writes it back differently each time"
        refusal = _refusal(reread, dialect)
        if refusal is not None:
            return f"as written back: {refusal}"
    if dialect not in ("postgres", "duckdb"):
        return None
    spans, problem = quoted_spans(text)
    if problem:
        return f"its written-back form holds {problem} outside quotes"
    tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(text)
    if spans != [(t.start, t.end) for t in tokens if t.token_type in _QUOTED_TOKENS]:
        return f"{dialect} and sqlglot would end its quoted strings or names in different places"
    return None


def check_sql(sql: str, dialect: str, *, row_limit: int = DEFAULT_ROW_LIMIT) -> Decision:
    """The policy's decision on `sql` in `dialect` (a sqlglot dialect name)."""
    if not isinstance(sql, str) or not sql.strip():
        return Decision(False, "the statement is empty: give one SELECT or WITH query", dialect)
    if "\x00" in sql:
        return Decision(False, "the statement holds a NUL character", dialect)
    try:
        statements = _parse(sql, dialect)
    except (ParseError, TokenError) as exc:
        first = str(exc).splitlines()[0][:200]
        return Decision(
            False,
            f"the statement cannot be parsed as {dialect} SQL ({first}); only one SELECT or WITH query is accepted",
            dialect,
        )
    if len(statements) != 1:
        return Decision(False, f"exactly one statement is allowed, not {len(statements)}", dialect)
    tree = statements[0]
    reason = _refusal(tree, dialect)
    if reason is not None or not isinstance(tree, exp.Query):  # _refusal lets only a query by
        return Decision(False, reason or "only one SELECT or WITH query is accepted", dialect)
    # +1: one row more than shown tells the caller the result was cut; the limit in place first,
    # else around the whole query (sqlglot cannot read back every clause followed by a LIMIT)
    tree = _without_every_row(tree)
    for limited in (_with_limit(tree.copy(), row_limit + 1), _wrapped(tree, row_limit + 1)):
        try:
            # what sqlglot cannot write back in this dialect would run with another meaning: refused
            text = limited.sql(dialect=dialect, comments=False, unsupported_level=ErrorLevel.RAISE)
        except Exception as exc:
            first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            return Decision(
                False,
                f"the query cannot be passed on to {dialect} exactly as written ({first}); "
                "rewrite that part (for a CTE, name its columns inside its SELECT)",
                dialect,
            )
        misread = _misread(text, limited, dialect)
        if misread is None:
            break
    else:
        return Decision(
            False,
            f"the query cannot be passed on to {dialect} exactly as written ({misread}); "
            "write strings as plain '...' (a quote doubled inside), without E'...' "
            "backslashes, dollar quotes or adjacent literals",
            dialect,
        )
    return Decision(True, "a read-only query", dialect, sql=text, row_limit=row_limit)


def require_allowed(sql: str, dialect: str, *, row_limit: int = DEFAULT_ROW_LIMIT) -> Decision:
    decision = check_sql(sql, dialect, row_limit=row_limit)
    if not decision.allowed:
        raise PolicyError(decision.reason)
    return decision
