"""The SQL policy of `run_sql`: a statement is parsed, never pattern-matched.

sqlglot parses the text in the database's own dialect; the policy then walks the tree:

* exactly one statement, a query (SELECT, WITH ... SELECT, a set operation of them);
* no node anywhere that writes or changes the session: DML (also inside a CTE), DDL, SELECT INTO,
  FOR UPDATE, COPY, ATTACH, INSTALL, LOAD, PRAGMA, SET, and whatever sqlglot only keeps as
  an opaque command (EXPLAIN, CALL, LOAD...);
* no function that reads files or the network, runs SQL given as text, or touches the server
  (per dialect: read_csv, glob, pg_read_file, lo_import, dblink, LOAD_FILE, load_extension...),
  and, on DuckDB, no table that is a file path (DuckDB reads ``FROM 'x.csv'``).

What runs is the SQL sqlglot generates back from the checked tree, with the row limit set in
it: the database never sees text the policy did not read.  Defence in depth stays with the
connection (read-only, a statement timeout: `sql_run`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Optional

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError

from cataloger_dagster.core.fixes.sql import DIALECTS

DEFAULT_ROW_LIMIT = 1000

# Nodes that write, lock or change the session, wherever they sit in the tree.
_FORBIDDEN_NODES: dict[type, str] = {
    exp.Insert: "INSERT", exp.Update: "UPDATE", exp.Delete: "DELETE", exp.Merge: "MERGE",
    exp.Create: "CREATE", exp.Drop: "DROP", exp.Alter: "ALTER", exp.TruncateTable: "TRUNCATE",
    exp.Copy: "COPY", exp.Attach: "ATTACH", exp.Detach: "DETACH", exp.Install: "INSTALL",
    exp.Pragma: "PRAGMA", exp.Set: "SET", exp.Use: "USE", exp.Command: "a command",
    exp.Transaction: "a transaction", exp.Commit: "COMMIT", exp.Rollback: "ROLLBACK",
    exp.Into: "SELECT INTO (it creates a table)", exp.Lock: "a row lock (FOR UPDATE/SHARE)",
    exp.LoadData: "LOAD DATA", exp.Grant: "GRANT", exp.Cache: "CACHE", exp.Uncache: "UNCACHE",
    exp.Refresh: "REFRESH", exp.Kill: "KILL", exp.Export: "EXPORT", exp.Revoke: "REVOKE",
    exp.Comment: "COMMENT", exp.Analyze: "ANALYZE",
}

# Functions that read files or the network, run SQL given as text, change settings or the
# server, or sleep: by dialect ("*" applies to every dialect).  Names are compared lower-case,
# without schema (pg_catalog.pg_read_file is pg_read_file).
_BLOCKED_FUNCTIONS: dict[str, set[str]] = {
    "*": {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "load_file",
          "sleep", "benchmark", "sys_exec", "sys_eval"},
    "duckdb": {
        "read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json", "read_json_auto",
        "read_json_objects", "read_json_objects_auto", "read_ndjson", "read_ndjson_auto",
        "read_ndjson_objects", "read_text", "read_blob", "glob", "sniff_csv", "parquet_metadata",
        "parquet_schema", "parquet_file_metadata", "parquet_kv_metadata", "parquet_bloom_probe",
        "iceberg_scan", "iceberg_metadata", "iceberg_snapshots", "delta_scan", "read_xlsx", "st_read",
        "st_read_meta", "sqlite_scan", "sqlite_attach", "postgres_scan", "postgres_scan_pushdown",
        "postgres_attach", "postgres_query", "postgres_execute", "mysql_scan", "mysql_query",
        "mysql_execute", "query", "query_table", "getenv", "duckdb_secrets", "which_secret",
        "load_aws_credentials", "httpfs", "http_get", "http_post", "duckdb_extensions",
        "install_extension", "load_extension", "checkpoint", "force_checkpoint", "duckdb_settings",
        "current_setting", "set_config", "arrow_scan", "pandas_scan", "read_avro", "read_gsheet",
    },
    "postgres": {
        "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_ls_logdir",
        "pg_ls_waldir", "pg_ls_tmpdir", "pg_ls_archive_statusdir", "pg_file_write", "pg_file_rename",
        "pg_file_unlink", "pg_logdir_ls", "lo_import", "lo_export", "lo_get", "lo_put", "lo_from_bytea",
        "lo_open", "lo_create", "lo_creat", "lo_unlink", "loread", "lowrite", "dblink", "dblink_exec",
        "dblink_connect", "dblink_connect_u", "dblink_send_query", "dblink_get_result", "dblink_open",
        "dblink_fetch", "set_config", "current_setting", "pg_reload_conf", "pg_rotate_logfile",
        "pg_terminate_backend", "pg_cancel_backend", "pg_sleep", "pg_sleep_for", "pg_sleep_until",
        "pg_notify", "pg_advisory_lock", "pg_advisory_xact_lock", "pg_advisory_lock_shared",
        "pg_try_advisory_lock", "pg_try_advisory_xact_lock", "nextval", "setval",
        "query_to_xml", "query_to_xml_and_xmlschema", "query_to_xmlschema", "cursor_to_xml",
        "cursor_to_xmlschema", "database_to_xml", "database_to_xml_and_xmlschema",
        "pg_create_restore_point", "pg_switch_wal", "pg_promote", "pg_import_system_collations",
        "txid_current", "pg_current_xact_id", "pg_logical_emit_message", "pg_replication_origin_create",
    },
    "mysql": {"load_file", "get_lock", "release_lock", "release_all_locks", "sleep", "benchmark",
              "master_pos_wait", "source_pos_wait", "sys_exec", "sys_eval"},
    "sqlite": {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "zipfile", "sqlar_compress",
               "sqlar_uncompress"},
}
# Families, whatever their exact name: DuckDB's readers and scanners, PostgreSQL's file
# and large-object functions, dblink's
_BLOCKED_PATTERNS: dict[str, re.Pattern] = {
    "duckdb": re.compile(r"^(read_|.*_scan$|.*_attach$|parquet_|iceberg_|delta_|http)"),
    "postgres": re.compile(r"^(pg_read|pg_ls_|pg_file|lo_|dblink|pg_stat_file)"),
}
# a table name DuckDB would read as a file (its replacement scans) or a URL
_FILE_LIKE = re.compile(r"[/\\:~]|\.(csv|tsv|txt|parquet|json|jsonl|ndjson|gz|zst|xlsx|arrow|db|duckdb|sqlite)$",
                        re.IGNORECASE)


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


def _blocked_function(name: str, dialect: str) -> bool:
    if name in _BLOCKED_FUNCTIONS["*"] or name in _BLOCKED_FUNCTIONS.get(dialect, ()):
        return True
    pattern = _BLOCKED_PATTERNS.get(dialect)
    return bool(pattern and pattern.match(name))


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
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if _blocked_function(name, dialect):
                return (f"function {name}() is not allowed: it reads files or the network, runs SQL "
                        "given as text, or acts on the server")
        if isinstance(node, exp.Table):
            if isinstance(node.this, exp.Literal) and node.this.is_string:
                return f"reading the file or URL {node.this.this!r} is not allowed: query the database's tables"
            if dialect == "duckdb" and isinstance(node.this, exp.Identifier) and _FILE_LIKE.search(node.name):
                return f"table {node.name!r} looks like a file or URL, which DuckDB would read: not allowed"
    return None


def _with_limit(tree: exp.Query, row_limit: int) -> exp.Expression:
    """The query returning at most `row_limit` rows: its own LIMIT lowered, or one added.  A set
    operation or a query with an OFFSET is wrapped instead, so its meaning stays whole."""
    if isinstance(tree, exp.Select) and not tree.args.get("offset"):
        current = tree.args.get("limit")
        given = current.expression if isinstance(current, exp.Limit) else None
        if isinstance(given, exp.Literal) and given.is_int and int(given.this) <= row_limit:
            return tree
        return tree.limit(row_limit, copy=True)
    return exp.select("*").from_(tree.subquery("cataloger_rows", copy=True)).limit(row_limit)


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
        return Decision(False, f"the statement cannot be parsed as {dialect} SQL ({first}); "
                               "only one SELECT or WITH query is accepted", dialect)
    if len(statements) != 1:
        return Decision(False, f"exactly one statement is allowed, not {len(statements)}", dialect)
    tree = statements[0]
    reason = _refusal(tree, dialect)
    if reason is not None:
        return Decision(False, reason, dialect)
    # +1: one row more than shown tells the caller the result was cut
    limited = _with_limit(tree, row_limit + 1)
    try:
        # what sqlglot cannot write back in this dialect would run with another meaning: refused
        text = limited.sql(dialect=dialect, comments=False, unsupported_level=ErrorLevel.RAISE)
    except Exception as exc:
        first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        return Decision(False, f"the query cannot be passed on to {dialect} exactly as written ({first}); "
                               "rewrite that part (for a CTE, name its columns inside its SELECT)", dialect)
    return Decision(True, "a read-only query", dialect, sql=text, row_limit=row_limit)


def require_allowed(sql: str, dialect: str, *, row_limit: int = DEFAULT_ROW_LIMIT) -> Decision:
    decision = check_sql(sql, dialect, row_limit=row_limit)
    if not decision.allowed:
        raise PolicyError(decision.reason)
    return decision
