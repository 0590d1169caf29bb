"""Running a query the SQL policy allowed, through the catalog's own DatabaseResource.

The policy (`sql_policy`) decides what may run; this module adds what the connection itself
can enforce, per backend: a read-only transaction or connection (DatabaseResource already opens
DuckDB read_only, SQLite mode=ro, PostgreSQL with default_transaction_read_only and MySQL with
a read-only session; here PostgreSQL also runs each query in a READ ONLY transaction), a
statement timeout, and the row limit the policy wrote into the SQL.  Nothing reaches the
database before the policy allowed it.
"""

from __future__ import annotations

import base64
import math
import threading
import time
from datetime import date, datetime, time as time_of_day, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Optional
from uuid import UUID

from cataloger_dagster.mcp.sql_policy import DEFAULT_ROW_LIMIT, Decision, check_sql, dialect_of

if TYPE_CHECKING:
    from cataloger_dagster.resources.database import DatabaseResource

DEFAULT_TIMEOUT_S = 30.0
MAX_TEXT = 2000      # characters of one value shown; a longer one is cut and says so


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


class QueryRunner:
    """Runs allowed queries on one DatabaseResource, one at a time (its connection is shared)."""

    def __init__(self, database: DatabaseResource, *, row_limit: int = DEFAULT_ROW_LIMIT,
                 timeout_s: float = DEFAULT_TIMEOUT_S, lock: Optional[threading.Lock] = None):
        self.database = database
        self.dialect = dialect_of(database.scheme)
        self.row_limit = row_limit
        self.timeout_s = timeout_s
        # every user of the database's one connection holds it (a DuckDB connection is not
        # safe for two threads at once)
        self.lock = lock or threading.Lock()
        self._hardened = False

    def check(self, sql: str) -> Decision:
        return check_sql(sql, self.dialect, row_limit=self.row_limit)

    def run(self, decision: Decision) -> dict:
        """The rows of an allowed query: {"columns", "rows", "truncated", "row_limit", "seconds"}."""
        if not decision.allowed or decision.sql is None:
            raise ValueError("only a query the policy allowed can run")  # callers check first
        started = time.monotonic()
        with self.lock:
            try:
                columns, rows = self._execute(decision.sql, decision.row_limit + 1)
            except QueryError:
                raise
            except Exception as exc:
                from cataloger_dagster.resources.database import scrub_secrets

                message = scrub_secrets(str(exc), self.database.url).strip().splitlines()
                raise QueryError(f"the database refused the query: {type(exc).__name__}: "
                                 f"{message[0] if message else ''}"[:500]) from None
        truncated = len(rows) > decision.row_limit
        return {
            "columns": columns,
            "rows": [[_cell(v) for v in row] for row in rows[:decision.row_limit]],
            "truncated": truncated,
            "row_limit": decision.row_limit,
            "seconds": round(time.monotonic() - started, 3),
        }

    # ------------------------------------------------------------------ backends

    def _execute(self, sql: str, fetch: int) -> tuple[list[str], list[tuple]]:
        backend = self.database.connect()
        scheme = self.database.scheme
        if scheme == "duckdb":
            return self._duckdb(backend.con, sql, fetch)
        if scheme in ("postgres", "postgresql"):
            return self._postgres(backend.con, sql, fetch)
        if scheme == "sqlite":
            return self._sqlite(backend.con, sql, fetch)
        if scheme in ("mysql", "mariadb"):
            return self._mysql(backend.con, sql, fetch)
        raise QueryError(f"run_sql does not support {scheme}:// databases (it supports duckdb, postgres, "
                         "sqlite, mysql and mariadb)")

    def _duckdb(self, con, sql: str, fetch: int):
        if not self._hardened:
            # DuckDB's own switch for files, URLs and extensions: a second wall behind the
            # policy's list of reader functions.  It cannot be turned back on by a query.
            con.execute("SET enable_external_access = false")
            self._hardened = True
        cursor = con.cursor()
        timer = threading.Timer(self.timeout_s, cursor.interrupt)
        timer.start()
        try:
            result = cursor.execute(sql)
            columns = [d[0] for d in result.description or []]
            return columns, result.fetchmany(fetch)
        except Exception as exc:
            if not timer.is_alive():
                raise QueryError(f"the query ran longer than {self.timeout_s:g} s and was stopped") from None
            raise exc
        finally:
            timer.cancel()
            cursor.close()

    def _postgres(self, con, sql: str, fetch: int):
        import psycopg

        try:
            with con.transaction(), con.cursor() as cur:
                cur.execute("SET TRANSACTION READ ONLY")
                cur.execute("SELECT set_config('statement_timeout', %s, true)", (f"{int(self.timeout_s * 1000)}ms",))
                cur.execute(sql)
                columns = [d.name for d in cur.description or []]
                rows = cur.fetchmany(fetch)
                raise _Done(columns, rows)
        except _Done as done:
            return done.columns, done.rows
        except psycopg.errors.QueryCanceled:
            raise QueryError(f"the query ran longer than {self.timeout_s:g} s and was stopped") from None

    def _sqlite(self, con, sql: str, fetch: int):
        deadline = time.monotonic() + self.timeout_s
        con.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
        try:
            cur = con.execute(sql)
            columns = [d[0] for d in cur.description or []]
            return columns, cur.fetchmany(fetch)
        except Exception as exc:
            if time.monotonic() > deadline:
                raise QueryError(f"the query ran longer than {self.timeout_s:g} s and was stopped") from None
            raise exc
        finally:
            con.set_progress_handler(None, 0)

    def _mysql(self, con, sql: str, fetch: int):
        cur = con.cursor()
        try:
            try:  # MariaDB counts seconds, MySQL milliseconds
                cur.execute("SET SESSION max_statement_time = %s", (self.timeout_s,))
            except Exception:
                cur.execute("SET SESSION MAX_EXECUTION_TIME = %s", (int(self.timeout_s * 1000),))
            cur.execute(sql)
            columns = [d[0] for d in cur.description or []]
            return columns, list(cur.fetchmany(fetch))
        finally:
            cur.close()


class _Done(Exception):
    """Leaves psycopg's transaction block by an exception, so that it rolls back: nothing a
    query did (it can do nothing) is ever committed."""

    def __init__(self, columns: list[str], rows: list[tuple]):
        super().__init__("done")
        self.columns, self.rows = columns, rows


def run_query(runner: QueryRunner, sql: str) -> tuple[Decision, Optional[dict]]:
    """The policy's decision, and the rows when it allowed the query (the database never sees
    a refused one)."""
    decision = runner.check(sql)
    if not decision.allowed:
        return decision, None
    return decision, runner.run(decision)
