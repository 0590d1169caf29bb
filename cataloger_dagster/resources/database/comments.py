"""A connection for `cataloger writeback`: the comments of the database read, and written only
when told to (`writable`), the one place the catalog writes to a source.  Every other
connection of the catalog is read-only (connection.py)."""

from __future__ import annotations

from typing import Any, Optional

from cataloger_dagster.core.redaction import redact_url, scrub_secrets
from cataloger_dagster.core.writeback.sql import Dialect
from cataloger_dagster.resources.database.connection import (
    SAME_SCHEME,
    _server_arguments,
    file_path,
    mysql_arguments,
    url_scheme,
)
from cataloger_dagster.resources.database.errors import DatabaseError
from cataloger_dagster.resources.target import url_schema

WRITEBACK_SCHEMES = ("duckdb", "postgres", "mysql")


class CommentSession:
    """`core.writeback.session.SqlSession` over a DB-API connection; ``writable`` False keeps the
    session read-only, so that a writeback without --apply cannot change the database."""

    def __init__(self, url: str, *, writable: bool) -> None:
        scheme = SAME_SCHEME.get(url_scheme(url), url_scheme(url))
        if scheme not in WRITEBACK_SCHEMES:
            raise DatabaseError(
                f"{redact_url(url)}: writeback writes comments to DuckDB, PostgreSQL and MySQL/MariaDB only"
            )
        self.dialect: Dialect = scheme  # type: ignore[assignment]
        self.url, self.writable = url, writable
        self.schema: Optional[str] = None
        try:
            self._conn = self._connect()
        except DatabaseError:
            raise
        except Exception as exc:  # drivers may echo the URL or the password
            raise DatabaseError(f"cannot connect to {redact_url(url)}: {scrub_secrets(str(exc), url)}") from None

    def _connect(self) -> Any:
        if self.dialect == "duckdb":
            import duckdb

            path = file_path(self.url)
            if not path.exists():
                raise DatabaseError(f"DuckDB file {path} does not exist: check --database")
            return duckdb.connect(str(path), read_only=not self.writable)
        if self.dialect == "postgres":
            import psycopg

            args = _server_arguments(self.url, 5432)
            args.pop("schema", None)
            args["dbname"] = args.pop("database", None)
            if not self.writable:
                args["options"] = f"{args.get('options', '')} -c default_transaction_read_only=on".strip()
            conn = psycopg.connect(**args)
            # the schema the catalog reads (target.py): the URL's, else the first of the search path
            row = conn.execute("SELECT current_schema()").fetchone()
            self.schema = url_schema(self.url) or (row[0] if row else None)
            conn.rollback()
            return conn
        try:
            import MySQLdb
        except ImportError:
            raise DatabaseError(
                f"cannot connect to {redact_url(self.url)}: MySQL/MariaDB URLs need the mysql extra: "
                "pip install 'cataloger-dagster[mysql]'"
            ) from None
        args = mysql_arguments(self.url)
        if self.writable:
            args.pop("init_command")
        self.schema = args.get("database")
        return MySQLdb.connect(**args)

    def rows(self, query: str) -> list[tuple]:
        try:
            if self.dialect == "duckdb":
                return [tuple(row) for row in self._conn.execute(query).fetchall()]
            cursor = self._conn.cursor()
            try:
                cursor.execute(query)
                return [tuple(row) for row in cursor.fetchall()]
            finally:
                cursor.close()
                if self.dialect == "postgres":
                    self._conn.rollback()  # reads hold no transaction open
        except Exception as exc:
            raise DatabaseError(
                f"cannot read comments from {redact_url(self.url)}: {scrub_secrets(str(exc), self.url)}"
            ) from None

    def execute(self, statements: list[str]) -> None:
        """Runs ``statements`` in one transaction where the database has transactional DDL
        (DuckDB, PostgreSQL): all of a table's comments, or none."""
        if not self.writable:
            raise DatabaseError("this session is read-only: writing comments needs --apply")
        try:
            if self.dialect == "duckdb":
                self._conn.execute("BEGIN")
                try:
                    for statement in statements:
                        self._conn.execute(statement)
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                return
            cursor = self._conn.cursor()
            try:
                for statement in statements:
                    cursor.execute(statement)
                self._conn.commit()
            except BaseException:
                self._conn.rollback()
                raise
            finally:
                cursor.close()
        except DatabaseError:
            raise
        except Exception as exc:
            raise DatabaseError(
                f"cannot write comments to {redact_url(self.url)}: {scrub_secrets(str(exc), self.url)}"
            ) from None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "CommentSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
