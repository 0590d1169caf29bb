"""DatabaseResource: the catalogued database, reached through ibis, read-only."""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit

import dagster as dg
import duckdb
import ibis
from pydantic import BaseModel, Field, PrivateAttr

from cataloger_dagster.fingerprint import DEFAULT_UPDATE_COLUMNS, compute_fingerprint
from cataloger_dagster.models import Fingerprint

DEFAULT_DATABASE_URL = "duckdb://data/demo.duckdb"
SNAPSHOT_FILE = "snapshot.duckdb"
# How code inside the sandbox reaches the snapshot, which it sees at /data.
SNAPSHOT_URL = f"duckdb:///data/{SNAPSHOT_FILE}?read_only=true"

log = logging.getLogger(__name__)


class DatabaseError(RuntimeError):
    """The database or one of its tables cannot be used; the message says what to do."""


def redact_url(url: str) -> str:
    """The URL with any password replaced, safe for logs, HTML and JSON."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


def _file_path(url: str) -> Path:
    # duckdb://relative.db, duckdb:///abs/path.db and a bare path all work
    rest = url.split("://", 1)[1] if "://" in url else url
    rest = rest.split("?", 1)[0]
    return Path(unquote(rest)).expanduser()


class Snapshot(BaseModel):
    """A read-only copy of one table for the sandbox."""

    path: str
    url: str                  # ibis URL of the copy, as the sandbox will see it
    table: str
    rows: int
    source_rows: int
    sampled: bool
    seed: int | None = None


class DatabaseResource(dg.ConfigurableResource):
    """The database to catalog, as an ibis connection URL.

    `duckdb://path`, `sqlite://path`, `postgres://user:pass@host:port/db` (and
    any other URL ibis accepts).  Connections are opened read-only wherever the
    backend allows it: the catalog never writes to the source database.
    """

    url: str = Field(default=DEFAULT_DATABASE_URL, description="ibis connection URL of the database to catalog")
    name: str | None = Field(default=None, description="Name used in the store; defaults to the database's own name")
    snapshot_row_limit: int = Field(
        default=1_000_000, description="Tables larger than this are sampled (seeded) for the sandbox"
    )
    snapshot_seed: int = 42
    update_columns: list[str] = Field(default_factory=lambda: list(DEFAULT_UPDATE_COLUMNS))

    _conn: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    # ------------------------------------------------------------------ naming

    @property
    def scheme(self) -> str:
        return self.url.split("://", 1)[0].lower() if "://" in self.url else "duckdb"

    @property
    def safe_url(self) -> str:
        return redact_url(self.url)

    @property
    def database_name(self) -> str:
        if self.name:
            return self.name
        if self.scheme in ("duckdb", "sqlite"):
            return _file_path(self.url).stem or "memory"
        path = urlsplit(self.url).path.strip("/")
        return re.sub(r"[^A-Za-z0-9_.-]", "_", path or self.scheme)

    # ------------------------------------------------------------- connection

    def connect(self) -> ibis.BaseBackend:
        with self._lock:
            if self._conn is None:
                self._conn = self._open()
            return self._conn

    def _open(self) -> ibis.BaseBackend:
        scheme = self.scheme
        try:
            if scheme == "duckdb":
                path = _file_path(self.url)
                if not path.exists():
                    raise DatabaseError(
                        f"DuckDB file {path} does not exist: create it (for the demo, "
                        f"`cataloger demo-db {path}`) or set CATALOGER_DATABASE to another URL"
                    )
                return ibis.duckdb.connect(str(path), read_only=True)
            if scheme == "sqlite":
                path = _file_path(self.url)
                if not path.exists():
                    raise DatabaseError(f"SQLite file {path} does not exist: check CATALOGER_DATABASE")
                con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
                return ibis.sqlite.from_connection(con)
            if scheme in ("postgres", "postgresql"):
                parts = urlsplit(self.url)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                return ibis.postgres.connect(
                    host=parts.hostname or "localhost",
                    port=parts.port or 5432,
                    user=unquote(parts.username) if parts.username else None,
                    password=unquote(parts.password) if parts.password else None,
                    database=parts.path.lstrip("/") or None,
                    # the server itself refuses writes from this session
                    options="-c default_transaction_read_only=on",
                    **query,
                )
            return ibis.connect(self.url)
        except DatabaseError:
            raise
        except Exception as exc:  # the driver's message, without the password
            message = str(exc).replace(self.url, self.safe_url)
            raise DatabaseError(f"cannot connect to {self.safe_url}: {message}") from None

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
        return sorted(self.connect().list_tables())

    def table(self, name: str) -> ibis.Table:
        conn = self.connect()
        try:
            return conn.table(name)
        except Exception as exc:
            tables = self.list_tables()
            if name in tables:  # it exists but cannot be read: a broken view, no permission
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise DatabaseError(
                    f"table {name!r} in {self.safe_url} cannot be read ({type(exc).__name__}: {first}); "
                    "fix or drop it, or catalog the other tables with --table"
                ) from None
            raise DatabaseError(
                f"table {name!r} not found in {self.safe_url}; tables: {', '.join(tables[:20])}"
            ) from None

    def catalog(self) -> dict[str, ibis.Table]:
        """Every readable table of the database by name (for cross-table checks).

        A table that cannot be opened (a broken view, no permission) is left
        out with a warning: it must not stop the checks of the other tables.
        """
        found = {}
        for name in self.list_tables():
            try:
                found[name] = self.table(name)
            except DatabaseError as exc:
                log.warning("cross-table checks skip %s: %s", name, exc)
        return found

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
        """Copy one table (or a seeded sample of a huge one) into a new DuckDB file.

        The copy has the same table name, so code written against the snapshot
        runs unchanged against the real database.  `references` adds the
        distinct key columns of other tables that checks join against (orphan
        references).  The file is made read-only.
        """
        limit = self.snapshot_row_limit if row_limit is None else row_limit
        table = self.table(name)
        total = int(table.count().execute())
        sampled = total > limit
        source = table
        if sampled:
            # oversample a little so the limit is reached, then cut exactly
            fraction = min(1.0, limit / total * 1.1)
            source = table.sample(fraction, seed=self.snapshot_seed).limit(limit)
        dest = Path(dest_dir)
        dest.mkdir(parents=True, exist_ok=True)
        path = dest / SNAPSHOT_FILE
        if path.exists():
            raise DatabaseError(f"snapshot {path} already exists: use a fresh directory")
        reader = source.to_pyarrow_batches(chunk_size=100_000)
        with duckdb.connect(str(path)) as out:
            out.register("snapshot_source", reader)
            out.execute(f'CREATE TABLE "{_quote(name)}" AS SELECT * FROM snapshot_source')
            out.unregister("snapshot_source")
            rows = out.execute(f'SELECT count(*) FROM "{_quote(name)}"').fetchone()[0]
            for other, columns in (references or {}).items():
                if other == name:
                    continue
                keys = self.table(other).select(*columns).distinct()
                out.register("snapshot_keys", keys.to_pyarrow_batches(chunk_size=100_000))
                out.execute(f'CREATE TABLE "{_quote(other)}" AS SELECT * FROM snapshot_keys')
                out.unregister("snapshot_keys")
        path.chmod(0o444)
        return Snapshot(
            path=str(path),
            url=f"duckdb://{path}?read_only=true",
            table=name,
            rows=int(rows),
            source_rows=total,
            sampled=sampled,
            seed=self.snapshot_seed if sampled else None,
        )


def _quote(identifier: str) -> str:
    return identifier.replace('"', '""')
