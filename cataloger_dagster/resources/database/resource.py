"""DatabaseResource: the catalogued database, reached through ibis, read-only."""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

import dagster as dg
import ibis
from pydantic import Field, PrivateAttr

from cataloger_dagster.core.fixes.sql import DIALECTS, FixTarget
from cataloger_dagster.core.models import Fingerprint
from cataloger_dagster.core.profile.fingerprint import DEFAULT_UPDATE_COLUMNS, compute_fingerprint
from cataloger_dagster.core.redaction import redact_url, scrub_secrets
from cataloger_dagster.core.shown import visible
from cataloger_dagster.core.writeback.documented import Documented, from_manifest, read_manifest, with_comments
from cataloger_dagster.core.writeback.sql import DIALECTS as DIALECTS_WITH_COMMENTS, comment_queries
from cataloger_dagster.resources import target
from cataloger_dagster.resources.database.connection import (
    FILE_SCHEMES,
    SAME_SCHEME,
    file_path,
    in_memory,
    open_connection,
    quote_identifier,
    server_location,
    url_scheme,
)
from cataloger_dagster.resources.database.errors import DatabaseError, NoTablesError
from cataloger_dagster.resources.database.mysql_types import mysql_table
from cataloger_dagster.resources.database.snapshots import Snapshot, write_snapshot
from cataloger_dagster.resources.defaults import DEMO_DATABASE

DEFAULT_DATABASE_URL = f"duckdb://{DEMO_DATABASE}"

log = logging.getLogger(__name__)


class Catalog(Mapping[str, ibis.Table]):
    """The tables of a database by name, opened on first look-up.  A table that cannot be
    opened (a broken view, no permission) is missing, with a warning: it must not stop the
    checks of the other tables."""

    def __init__(self, database: "DatabaseResource", names: list[str]) -> None:
        self._database, self._names = database, list(names)
        self._opened: dict[str, ibis.Table | None] = {}

    def __getitem__(self, name: str) -> ibis.Table:
        if name not in self._opened:
            if name not in self._names:
                raise KeyError(name)
            try:
                self._opened[name] = self._database.table(name)
            except DatabaseError as exc:
                log.warning("cross-table checks skip %s: %s", visible(name), visible(exc))
                self._opened[name] = None
        if self._opened[name] is None:
            raise KeyError(name)
        return self._opened[name]

    def __contains__(self, name: object) -> bool:
        return name in self._names  # without opening it: a name test must stay cheap

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class DatabaseResource(dg.ConfigurableResource):
    """The database to catalog, as an ibis connection URL.

    `duckdb://path`, `sqlite://path`, `postgres://user:pass@host:port/db`,
    `mysql://user:pass@host:port/db` (or `mariadb://`), and any other URL ibis accepts.  Connections are opened read-only wherever the
    backend allows it: the catalog never writes to the source database.
    """

    url: str = Field(default=DEFAULT_DATABASE_URL, description="ibis connection URL of the database to catalog")
    name: str | None = Field(
        default=None,
        description="The catalog's name in the store (CATALOGER_NAME, --name); "
        "default: the file's name, or the server's host_port/database/schema",
    )
    snapshot_row_limit: int = Field(
        default=1_000_000, description="Tables larger than this are sampled (seeded) for the sandbox"
    )
    snapshot_seed: int = 42
    # what a value of a column holding personal or secret data becomes when it leaves (core/sensitive/masking.py)
    sensitive_values: Literal["mask", "hash", "drop"] = "mask"
    update_columns: list[str] = Field(default_factory=lambda: list(DEFAULT_UPDATE_COLUMNS))
    dbt_manifest: str | None = Field(
        default=None, description="A dbt project's manifest.json: its descriptions and tests of the tables, as context"
    )

    _conn: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _location: Any = PrivateAttr(default=None)  # (connection, its DuckDB catalog and schema)
    # what the open connection reads its tables from, checked as it opened: PostgreSQL's
    # (database, schema), MySQL's database; None for a file
    _target: Any = PrivateAttr(default=None)
    _manifest: Any = PrivateAttr(default=None)  # the dbt manifest, read on first use

    # ------------------------------------------------------------------ naming

    @property
    def scheme(self) -> str:
        return url_scheme(self.url)

    @property
    def safe_url(self) -> str:
        return redact_url(self.url)

    def __repr_args__(self):
        # a resource's repr can end up in a log line or an error message
        for name, value in super().__repr_args__():
            yield name, redact_url(value) if name == "url" and isinstance(value, str) else value

    @property
    def database_name(self) -> str:
        """The catalog's name: the one given (`name`, CATALOGER_NAME, --name), else `default_name`."""
        return self.name or self.default_name

    @property
    def default_name(self) -> str:
        """The name the source gives its catalog: a file's name with its extension (`bikes.duckdb`),
        a server's `host_port/database/schema`; never a credential."""
        if self.scheme in FILE_SCHEMES:
            path = file_path(self.url)
            return "memory" if in_memory(path) else path.name
        host, database, schema = server_location(self.url)
        return "/".join(part for part in (host.replace(":", "_"), database, schema) if part) or self.scheme

    @property
    def source(self) -> str:
        """What the catalog's results are of, without a credential: the scheme and the file's
        absolute path, or the scheme, host:port, database and schema."""
        scheme = SAME_SCHEME.get(self.scheme, self.scheme)
        if self.scheme in FILE_SCHEMES:
            path = file_path(self.url)
            return f"{scheme}://:memory:" if in_memory(path) else f"{scheme}://{path.resolve()}"
        host, database, schema = server_location(self.url)
        return f"{scheme}://{host}/{database}" + (f"?schema={schema}" if schema else "")

    @property
    def stem_name(self) -> str:
        """The name this source's catalog had before catalogs were named by their whole source
        (a file's stem, a server's database): where its earlier results may be."""
        if self.scheme in FILE_SCHEMES:
            return file_path(self.url).stem or "memory"
        path = urlsplit(self.url).path.strip("/")
        return re.sub(r"[^A-Za-z0-9_.-]", "_", path or self.scheme)

    # ------------------------------------------------------------- connection

    def connect(self) -> ibis.BaseBackend:
        """The connection, opened on first use; its schema or database is checked then, so that a
        URL pointing at none (or at the server's own catalog) fails before any table is tried."""
        with self._lock:
            if self._conn is None:
                conn = open_connection(self.url)
                try:
                    self._target = self._check_target(conn)
                except BaseException:
                    conn.disconnect()
                    raise
                self._conn = conn
            return self._conn

    def _check_target(self, conn: ibis.BaseBackend) -> Any:
        try:
            if self.scheme in ("postgres", "postgresql"):
                return target.postgres_target(conn, self.url, self.safe_url)
            if self.scheme in ("mysql", "mariadb"):
                return target.mysql_target(conn, self.safe_url)
            return None
        except target.WrongTarget as exc:
            raise DatabaseError(scrub_secrets(str(exc), self.url)) from None
        except Exception as exc:
            raise DatabaseError(
                f"cannot read the schemas of {self.safe_url}: {scrub_secrets(str(exc), self.url)}"
            ) from None

    @property
    def shown_target(self) -> str:
        """The URL as it may be shown, with the schema it reads (PostgreSQL's, which the URL may not name)."""
        self.connect()
        if self.scheme in ("postgres", "postgresql") and self._target:
            return f"{self.safe_url} (schema {self._target[1]})"
        return self.safe_url

    def no_tables_error(self) -> NoTablesError:
        return NoTablesError(f"no tables in {self.shown_target}: nothing to catalog; check the URL's database/schema")

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        # a read-only DuckDB connection still keeps writers out of the file
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.disconnect()
                finally:
                    self._conn = None

    # ----------------------------------------------------------------- tables

    def list_tables(self) -> list[str]:
        """The user tables (and views) of the database, or of the schema the URL names: never
        the system catalogs."""
        conn = self.connect()
        try:
            if self.scheme == "duckdb":  # its catalog and schema asked once, not two queries a listing
                return sorted(conn.list_tables(database=self._duckdb_location(conn)))
            if self.scheme == "sqlite":
                return sorted(t for t in conn.list_tables() if not target.is_sqlite_internal(t))
            if self.scheme in ("postgres", "postgresql"):  # the schema checked as the connection opened
                return sorted(conn.list_tables(database=self._target))
            return sorted(conn.list_tables())
        except Exception as exc:  # the sensors report this message in every failed tick
            raise DatabaseError(
                f"cannot list the tables of {self.safe_url}: {scrub_secrets(str(exc), self.url)}"
            ) from None

    def _duckdb_location(self, conn: ibis.BaseBackend) -> tuple[str, str]:
        """The (catalog, schema) a DuckDB connection lists its tables in, as ibis would ask for
        them on each listing; the connection is read-only, so they never change under it."""
        with self._lock:
            if self._location is None or self._location[0] is not conn:
                self._location = (conn, (conn.current_catalog, conn.current_database))
            return self._location[1]

    def table(self, name: str) -> ibis.Table:
        conn = self.connect()
        try:
            if self.scheme == "sqlite" and target.is_sqlite_internal(name):
                raise DatabaseError(self.missing_table(name, self.list_tables()))
            if self.scheme == "duckdb":  # in the file's own schema: DuckDB resolves its internal views too
                return conn.table(name, database=self._duckdb_location(conn))
            table = conn.table(name)
            return mysql_table(conn, table) if self.scheme in ("mysql", "mariadb") else table
        except DatabaseError:
            raise
        except Exception as exc:
            if self.scheme == "sqlite" and (declared := _sqlite_declared(conn, name)) is not None:
                return declared
            tables = self.list_tables()
            if name in tables:  # it exists but cannot be read: a broken view, no permission
                message = scrub_secrets(str(exc), self.url).strip()
                first = message.splitlines()[0] if message else type(exc).__name__
                raise DatabaseError(
                    f"table {name!r} in {self.safe_url} cannot be read ({type(exc).__name__}: {first}); "
                    "fix or drop it, or catalog the other tables with --table"
                ) from None
            raise DatabaseError(self.missing_table(name, tables)) from None

    def missing_table(self, name: str, tables: list[str]) -> str:
        """Why `name`, not among `tables` (the listing), cannot be cataloged: it does not exist,
        or it is one of the database's own catalog tables, which are never cataloged."""
        listed = (", ".join(tables[:20]) or "none") + (f" ... ({len(tables)} in all)" if len(tables) > 20 else "")
        if self._is_system_table(name):
            return (
                f"table {name!r} is one of the database's own catalog tables, not a user table of "
                f"{self.shown_target}: only user tables are cataloged; tables: {listed}"
            )
        return f"table {name!r} not found in {self.shown_target}; tables: {listed}"

    def _is_system_table(self, name: str) -> bool:
        conn = self.connect()
        try:
            if self.scheme == "sqlite":
                return target.is_sqlite_internal(name)
            if self.scheme == "duckdb":
                return target.duckdb_system_table(conn, name)
            if self.scheme in ("postgres", "postgresql"):
                return target.postgres_system_table(conn, name)
            if self.scheme in ("mysql", "mariadb"):
                return target.mysql_system_table(conn, name)
        except Exception as exc:  # noqa: BLE001 - the "not found" message still holds
            log.debug("cannot tell whether %r is a system table: %s", name, exc)
        return False

    def catalog(self) -> "Catalog":
        """Every table of the database by name (for cross-table checks), each opened when
        first looked up: the reference search of a table that has stored profiles of the
        others opens only the few it verifies against."""
        return Catalog(self, self.list_tables())

    def fix_target(self, name: str) -> FixTarget | None:
        """Where a smart-fix script for table `name` points: the table, in this database's SQL
        dialect, in the schema the URL names (PostgreSQL's ?schema=).  None for a backend we write
        no SQL for."""
        dialect = DIALECTS.get(self.scheme)
        if dialect is None:
            return None
        return FixTarget(name, dialect, target.url_schema(self.url) if dialect == "postgres" else None)

    def documented(self, name: str) -> Documented:
        """What table `name`'s own documentation says: the dbt manifest's descriptions and tests,
        then the database's comments where dbt has none.  Comments that cannot be read count as
        none (they are context, never a reason to fail a run); a manifest that cannot be read is
        an error naming it."""
        documented = Documented()
        if self.dbt_manifest:
            if self._manifest is None:
                self._manifest = read_manifest(self.dbt_manifest)
            documented = from_manifest(self._manifest, name)
        dialect = next((d for d in DIALECTS_WITH_COMMENTS if d == SAME_SCHEME.get(self.scheme, self.scheme)), None)
        if dialect is None:
            return documented
        conn = self.connect()
        schema = self._target[1] if dialect == "postgres" else self._target if dialect == "mysql" else None
        table_query, columns_query = comment_queries(dialect, schema, name)
        try:
            own = _comment_rows(conn, dialect, table_query)
            columns = dict(_comment_rows(conn, dialect, columns_query))
        except Exception as exc:  # noqa: BLE001 - a driver's error of any kind: no comments
            log.info(visible(f"{name}: its comments could not be read ({scrub_secrets(str(exc), self.url)})"))
            return documented
        return with_comments(documented, own[0][0] if own else None, columns)

    def fingerprint(self, name: str, *, row_count: int | None = None) -> Fingerprint:
        return compute_fingerprint(self.table(name), row_count=row_count, update_columns=self.update_columns)

    def fingerprints(self) -> dict[str, Fingerprint]:
        return {name: self.fingerprint(name) for name in self.list_tables()}

    # --------------------------------------------------------------- snapshot

    def write_snapshot(
        self,
        name: str,
        dest_dir: str | os.PathLike,
        *,
        row_limit: int | None = None,
        references: dict[str, list[str]] | None = None,
    ) -> Snapshot:
        """A read-only copy of table `name` in a new DuckDB file in `dest_dir` (snapshots.py)."""
        return write_snapshot(self, name, dest_dir, row_limit=row_limit, references=references)


def _comment_rows(conn: ibis.BaseBackend, dialect: str, query: str) -> list[tuple]:
    # DuckDB's raw_sql hands back the connection itself: a cursor of its own is closed instead
    cur = conn.con.cursor() if dialect == "duckdb" else conn.raw_sql(query)  # type: ignore[attr-defined]
    try:
        return [tuple(row) for row in (cur.execute(query) if dialect == "duckdb" else cur).fetchall()]
    finally:
        cur.close()


def _sqlite_declared(conn: ibis.BaseBackend, name: str) -> ibis.Table | None:
    """A SQLite table ibis cannot open: a column declared without a type in an empty table
    leaves ibis nothing to infer its type from.  Such a column is read as text."""
    from ibis.backends.sql.datatypes import SQLiteType

    try:
        with conn._safe_raw_sql(f'PRAGMA table_info("{quote_identifier(name)}")') as cur:
            declared = [(row[1], row[2]) for row in cur.fetchall()]
        if not declared:
            return None
        schema = {col: SQLiteType.from_string(kind) if kind else ibis.dtype("string") for col, kind in declared}
        # a type name ibis does not know (CREATE TABLE AS writes "NUM") is read as text too
        schema = {col: ibis.dtype("string") if t.is_unknown() else t for col, t in schema.items()}
        return conn.sql(f'SELECT * FROM "{quote_identifier(name)}"', schema=schema)
    except Exception:  # the caller reports the table's own error
        return None
