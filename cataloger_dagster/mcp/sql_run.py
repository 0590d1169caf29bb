"""Running a query the SQL policy allowed: that one statement, bounded, on a read-only connection.

The policy (`sql_policy`) decides what may run and hands over the SQL it wrote back; this module
sends exactly that text as ONE statement through the driver's single-statement path, and adds
what the connection itself enforces, per backend:

* PostgreSQL: a server-side cursor (``DECLARE ... CURSOR FOR``, sent with the extended
  protocol, which takes one statement and, in a cursor, only a query) in a ``READ ONLY``
  transaction with ``statement_timeout`` and ``standard_conforming_strings`` set, always rolled
  back; and no run over a superuser (or a role that may read server files or run programs)
  unless the server was started with ``--allow-superuser-sql``.
* DuckDB: a fresh in-memory instance per call with the file attached read-only, external
  access off, the configuration locked and a memory limit of its own, so nothing one call sets
  reaches the next; DuckDB's own parser must read the text as one SELECT.
* SQLite (read-only file) and MySQL/MariaDB (read-only session): their drivers run one
  statement per call; MySQL's rows are read through an unbuffered cursor.

Rows are fetched in small chunks and the fetch stops at the row limit or the byte limit,
whatever LIMIT the query holds, so a result is never materialised whole.
"""

from __future__ import annotations

import base64
import math
import re
import threading
import time
from datetime import date, datetime, time as time_of_day, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Callable, Optional
from uuid import UUID

from cataloger_dagster.mcp.sql_policy import DEFAULT_ROW_LIMIT, Decision, check_sql, dialect_of

if TYPE_CHECKING:
    from cataloger_dagster.resources.database.resource import DatabaseResource

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_BYTE_LIMIT = 8_000_000  # bytes of values fetched for one reply at most
DEFAULT_DUCKDB_MEMORY = "512MB"  # each run_sql call's own DuckDB instance
MAX_TEXT = 2000  # characters of one value shown; a longer one is cut and says so
_CHUNK = 256  # rows fetched at once at most (fewer when rows are large)

# The role run_sql should use on PostgreSQL (SECURITY.md shows it; a test creates it): it can
# read the tables and nothing else, whatever query reaches it.
READER_ROLE_SQL = """\
CREATE ROLE {role} LOGIN PASSWORD '{password}' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
ALTER ROLE {role} SET default_transaction_read_only = on;
ALTER ROLE {role} SET statement_timeout = '30s';
ALTER ROLE {role} SET idle_in_transaction_session_timeout = '60s';
REVOKE pg_read_server_files, pg_write_server_files, pg_execute_server_program FROM {role};
GRANT CONNECT ON DATABASE {database} TO {role};
GRANT USAGE ON SCHEMA {schema} TO {role};
GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role};
ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT ON TABLES TO {role};"""

# a role that may act on the server beyond its tables
_POWERFUL_ROLE = """\
SELECT r.rolname, r.rolsuper OR pg_has_role(current_user, 'pg_read_server_files', 'MEMBER')
       OR pg_has_role(current_user, 'pg_write_server_files', 'MEMBER')
       OR pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER')
FROM pg_roles r WHERE r.rolname = current_user"""


class QueryError(RuntimeError):
    """The database refused or stopped an allowed query; the message is free of credentials."""


def _cell(value: Any) -> Any:
    """A value as JSON carries it (the exact text where JSON has no type for it)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value if not isinstance(value, str) or len(value) <= MAX_TEXT else value[:MAX_TEXT] + "…(cut)"
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (Decimal, UUID, timedelta)):
        return str(value)
    if isinstance(value, (datetime, date, time_of_day)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return {"base64": base64.b64encode(data[:MAX_TEXT]).decode(), "bytes": len(data)}
    if isinstance(value, (list, tuple)):
        return [_cell(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _cell(v) for k, v in value.items()}
    return _cell(str(value))


def _size(value: Any) -> int:
    """About how many bytes a fetched value takes (what the byte limit counts)."""
    if value is None or isinstance(value, (bool, int, float)):
        return 8
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return len(value)
    if isinstance(value, (list, tuple)):
        return 8 + sum(_size(v) for v in value)
    if isinstance(value, dict):
        return 8 + sum(_size(k) + _size(v) for k, v in value.items())
    return len(str(value))


class _Rows:
    """The rows of one reply, taken one at a time until the row or the byte limit is reached."""

    def __init__(self, row_limit: int, byte_limit: int):
        self.row_limit, self.byte_limit = row_limit, byte_limit
        self.rows: list[list] = []
        self.bytes = 0
        self.largest = 0  # bytes of the largest row so far
        self.cut_by: Optional[str] = None  # "rows" or "bytes" once the result was cut

    def wanted(self) -> int:
        """How many rows to fetch next (0: stop): one first, then twice as many as so far, and
        never more than the bytes left hold at the size of the largest row seen."""
        if self.cut_by:
            return 0
        room = self.row_limit + 1 - len(self.rows)  # one more than shown tells the result goes on
        by_bytes = (self.byte_limit - self.bytes) // self.largest + 1 if self.largest else 1
        return max(1, min(room, _CHUNK, 2 * len(self.rows) or 1, by_bytes))

    def take(self, chunk: list) -> bool:
        """Keeps the rows of `chunk` within the limits; False when the fetch must stop."""
        for row in chunk:
            if len(self.rows) >= self.row_limit:
                self.cut_by = "rows"
                return False
            size = sum(_size(v) for v in row)
            self.bytes += size
            self.largest = max(self.largest, size)
            if self.bytes > self.byte_limit:
                self.cut_by = "bytes"
                return False
            self.rows.append([_cell(v) for v in row])
        return bool(chunk)

    def drain(self, fetch: Callable[[int], list]) -> None:
        while (wanted := self.wanted()) and self.take(fetch(wanted)):
            pass


class QueryRunner:
    """Runs allowed queries on one DatabaseResource, one at a time where its connection is shared."""

    def __init__(
        self,
        database: DatabaseResource,
        *,
        row_limit: int = DEFAULT_ROW_LIMIT,
        byte_limit: int = DEFAULT_BYTE_LIMIT,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        lock: Optional[threading.Lock] = None,
        allow_superuser: bool = False,
        duckdb_memory: str = DEFAULT_DUCKDB_MEMORY,
    ):
        self.database = database
        self.dialect = dialect_of(database.scheme)
        self.row_limit = row_limit
        self.byte_limit = byte_limit
        self.timeout_s = timeout_s
        self.allow_superuser = allow_superuser
        self.duckdb_memory = duckdb_memory
        # every user of the database's one connection holds it (a connection is not safe for
        # two threads at once)
        self.lock = lock or threading.Lock()
        self._role_checked = False

    def check(self, sql: str) -> Decision:
        return check_sql(sql, self.dialect, row_limit=self.row_limit)

    def run(self, decision: Decision) -> dict:
        """The rows of an allowed query: {"columns", "rows", "truncated", "truncated_by", "row_limit",
        "byte_limit", "bytes", "seconds"}."""
        if not decision.allowed or decision.sql is None or decision.row_limit is None:
            raise ValueError("only a query the policy allowed can run")  # callers check first
        started = time.monotonic()
        taken = _Rows(decision.row_limit, self.byte_limit)
        try:
            columns = self._execute(decision.sql, taken)
        except QueryError:
            raise
        except Exception as exc:
            from cataloger_dagster.core.redaction import scrub_secrets

            message = scrub_secrets(str(exc), self.database.url).strip().splitlines()
            raise QueryError(
                f"the database refused the query: {type(exc).__name__}: {message[0] if message else ''}"[:500]
            ) from None
        return {
            "columns": columns,
            "rows": taken.rows,
            "truncated": taken.cut_by is not None,
            "truncated_by": taken.cut_by,
            "row_limit": decision.row_limit,
            "byte_limit": self.byte_limit,
            "bytes": taken.bytes,
            "seconds": round(time.monotonic() - started, 3),
        }

    # ------------------------------------------------------------------ backends

    def _execute(self, sql: str, taken: _Rows) -> list[str]:
        scheme = self.database.scheme
        if scheme == "duckdb":
            return self._duckdb(sql, taken)
        if scheme not in ("postgres", "postgresql", "sqlite", "mysql", "mariadb"):
            raise QueryError(
                f"run_sql does not support {scheme}:// databases (it supports duckdb, postgres, "
                "sqlite, mysql and mariadb)"
            )
        with self.lock:
            con = self.database.connect().con
            if scheme in ("postgres", "postgresql"):
                return self._postgres(con, sql, taken)
            if scheme == "sqlite":
                return self._sqlite(con, sql, taken)
            return self._mysql(con, sql, taken)

    def _timed_out(self) -> QueryError:
        return QueryError(f"the query ran longer than {self.timeout_s:g} s and was stopped")

    def duckdb_connection(self):
        """A DuckDB instance of its own over the database file: attached read-only, no external
        access, its configuration locked, its own memory limit.  What a query could set there
        (it can set nothing) ends with it."""
        import duckdb

        from cataloger_dagster.resources.database.connection import file_path

        path = file_path(self.database.url)
        if not path.exists():
            raise QueryError(f"DuckDB file {path} does not exist: check CATALOGER_DATABASE")
        # no temporary directory: the memory limit is a limit, never a spill to the server's disk;
        # no Python replacement scans: a table name never reaches a variable of this process
        con = duckdb.connect(
            ":memory:",
            config={
                "memory_limit": self.duckdb_memory,
                "temp_directory": "",
                "python_enable_replacements": False,
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
                "allow_community_extensions": False,
            },
        )
        try:
            # the file's own name as its catalog, as when DuckDB opens it directly
            name = (
                path.stem
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", path.stem)
                and path.stem.lower() not in ("memory", "system", "temp", "main")
                else "db"
            )
            con.execute(f"ATTACH '{str(path).replace(chr(39), chr(39) * 2)}' AS \"{name}\" (READ_ONLY)")
            con.execute(f'USE "{name}"')
            con.execute("SET enable_progress_bar = false")  # stdout/stderr may be the MCP channel
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
        except BaseException:
            con.close()
            raise
        return con

    def _duckdb(self, sql: str, taken: _Rows) -> list[str]:
        import duckdb

        con = self.duckdb_connection()
        timer = threading.Timer(self.timeout_s, con.interrupt)
        try:
            statements = con.extract_statements(sql)
            # duckdb's stubs list none of the enum's members
            if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:  # type: ignore[attr-defined]
                kinds = ", ".join(s.type.name for s in statements) or "nothing"
                raise QueryError(f"DuckDB reads the query as {kinds}, not one SELECT: it did not run")
            timer.start()
            result = con.execute(statements[0])  # one prepared statement; its result streams
            columns = [d[0] for d in result.description or []]
            taken.drain(result.fetchmany)
            return columns
        except duckdb.InterruptException:
            raise self._timed_out() from None
        finally:
            timer.cancel()
            con.close()

    def _check_role(self, con) -> None:
        if self.allow_superuser or self._role_checked:
            return
        with con.transaction(), con.cursor() as cur:
            role, powerful = cur.execute(_POWERFUL_ROLE).fetchone()
        if powerful:
            raise QueryError(
                f"run_sql refuses to run over the PostgreSQL role {role!r}: it is a superuser or may read "
                "server files or run programs, so one query could act on the server. Connect as a "
                "read-only role (SECURITY.md gives the SQL to create one), or start the server with "
                "--allow-superuser-sql"
            )
        self._role_checked = True

    def _postgres(self, con, sql: str, taken: _Rows) -> list[str]:
        import psycopg

        self._check_role(con)
        # statement_timeout bounds each FETCH; this bounds the whole call
        timer = threading.Timer(self.timeout_s, con.cancel_safe)
        timer.start()
        try:
            with con.transaction():
                with con.cursor() as setup:
                    setup.execute("SET TRANSACTION READ ONLY")
                    # a backslash in '...' is itself (the policy reads strings so), whatever the
                    # server's default
                    setup.execute(
                        "SELECT set_config('statement_timeout', %s, true), "
                        "set_config('standard_conforming_strings', 'on', true)",
                        (f"{int(self.timeout_s * 1000)}ms",),
                    )
                # DECLARE ... CURSOR FOR <sql> with the extended protocol: one statement, a query
                with con.cursor(name="cataloger_run_sql", scrollable=False) as cur:
                    cur.execute(sql)
                    columns = [d.name for d in cur.description or []]
                    taken.drain(cur.fetchmany)
                raise _Done(columns)
        except _Done as done:
            return done.columns
        except psycopg.errors.QueryCanceled:
            raise self._timed_out() from None
        finally:
            timer.cancel()

    def _sqlite(self, con, sql: str, taken: _Rows) -> list[str]:
        deadline = time.monotonic() + self.timeout_s
        con.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
        try:
            cur = con.execute(sql)  # sqlite3 runs one statement, refuses more
            columns = [d[0] for d in cur.description or []]
            taken.drain(cur.fetchmany)
            return columns
        except Exception as exc:
            if time.monotonic() > deadline:
                raise self._timed_out() from None
            raise exc
        finally:
            con.set_progress_handler(None, 0)

    def _mysql(self, con, sql: str, taken: _Rows) -> list[str]:
        from MySQLdb.cursors import SSCursor

        setup = con.cursor()
        try:
            try:  # MariaDB counts seconds, MySQL milliseconds
                setup.execute("SET SESSION max_statement_time = %s", (self.timeout_s,))
            except Exception:
                setup.execute("SET SESSION MAX_EXECUTION_TIME = %s", (int(self.timeout_s * 1000),))
        finally:
            setup.close()
        # unbuffered: rows cross as they are fetched, and those never fetched are read and dropped
        # when the cursor closes, so the client never holds more than the limits take
        cur = con.cursor(SSCursor)
        try:
            cur.execute(sql)  # the connection has no CLIENT.MULTI_STATEMENTS: one statement
            columns = [d[0] for d in cur.description or []]
            taken.drain(lambda n: list(cur.fetchmany(n)))
            return columns
        finally:
            cur.close()


class _Done(Exception):
    """Leaves psycopg's transaction block by an exception, so that it rolls back: nothing a
    query did (it can do nothing) is ever committed."""

    def __init__(self, columns: list[str]):
        super().__init__("done")
        self.columns = columns


def run_query(runner: QueryRunner, sql: str) -> tuple[Decision, Optional[dict]]:
    """The policy's decision, and the rows when it allowed the query (the database never sees
    a refused one)."""
    decision = runner.check(sql)
    if not decision.allowed:
        return decision, None
    return decision, runner.run(decision)
