"""DatabaseResource: the catalogued database, reached through ibis, read-only."""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import warnings
from pathlib import Path
from collections.abc import Iterator, Mapping
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

import dagster as dg
import duckdb
import ibis
import ibis.expr.datatypes as dt_
import ibis.expr.operations as ops
from pydantic import BaseModel, Field, PrivateAttr

from cataloger_dagster.core import portable
from cataloger_dagster.core.fixes.sql import DIALECTS, FixTarget
from cataloger_dagster.core.profile.fingerprint import DEFAULT_UPDATE_COLUMNS, compute_fingerprint
from cataloger_dagster.core.models import Fingerprint

# redact_url, scrub_secrets and url_secrets are the redaction's (core/redaction.py), named here too
from cataloger_dagster.core.redaction import redact_url, scrub_secrets, url_secrets  # noqa: F401
from cataloger_dagster.core.shown import visible
from cataloger_dagster.resources import target
from cataloger_dagster.resources.defaults import DEMO_DATABASE

DEFAULT_DATABASE_URL = f"duckdb://{DEMO_DATABASE}"
SNAPSHOT_FILE = "snapshot.duckdb"
# How code inside the sandbox reaches the snapshot, which it sees at /data.
SNAPSHOT_URL = f"duckdb:///data/{SNAPSHOT_FILE}?read_only=true"

log = logging.getLogger(__name__)


class DatabaseError(RuntimeError):
    """The database or one of its tables cannot be used; the message says what to do."""


class NoTablesError(DatabaseError):
    """The database (or the schema the URL names) holds no table to catalog."""


def _server_arguments(url: str, default_port: int) -> dict[str, Any]:
    """A server URL's connection arguments: its query parameters, then user and password (from
    the userinfo or ?user= / ?password=; the userinfo wins), host, port and database."""
    parts = urlsplit(url)
    args: dict[str, Any] = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    if parts.username:
        args["user"] = unquote(parts.username)
    if parts.password:
        args["password"] = unquote(parts.password)
    args["host"] = parts.hostname or args.get("host") or "localhost"
    args["port"] = parts.port or int(args.get("port") or default_port)
    database = unquote(parts.path.lstrip("/")) or args.get("database")
    if database:
        args["database"] = database
    return args


def _postgres_arguments(url: str) -> dict[str, Any]:
    args = _server_arguments(url, 5432)
    args.setdefault("database", None)
    # the server itself refuses writes from this session; last, so a given `options` cannot undo it
    args["options"] = f"{args.get('options', '')} -c default_transaction_read_only=on".strip()
    return args


# MySQLdb.connect takes these as numbers; every other query parameter is passed on as text
MYSQL_INT_PARAMETERS = {"port", "connect_timeout", "read_timeout", "write_timeout", "client_flag"}


def _mysql_arguments(url: str) -> dict[str, Any]:
    """MySQLdb.connect's arguments for a mysql:// or mariadb:// URL, the session read-only."""
    args = _server_arguments(url, 3306)
    for name in MYSQL_INT_PARAMETERS & args.keys():
        args[name] = int(args[name])
    # names and text beyond Latin-1 (the server's default on older installs) arrive intact
    args.setdefault("charset", "utf8mb4")
    # the server refuses writes from this session; it replaces any given init_command, so that
    # it cannot be undone.  MariaDB refuses temporary tables as well (MySQL allows them), so an
    # ibis memtable cannot be joined there: the catalog's queries use none
    args["init_command"] = "SET SESSION TRANSACTION READ ONLY"
    return args


def _mysql_connect(url: str) -> ibis.BaseBackend:
    try:
        import MySQLdb  # ibis's mysql backend needs it, and it is an extra
    except ImportError:
        raise DatabaseError(
            f"cannot connect to {redact_url(url)}: MySQL/MariaDB URLs need the mysql extra: "
            "pip install 'cataloger-dagster[mysql]' "
            "(it compiles mysqlclient: apt-get install libmariadb-dev pkg-config build-essential python3-dev)"
        ) from None
    # ibis asks for time zone 'UTC', which a server without its time zone tables (MariaDB's
    # default) refuses with a warning; the offset means the same and needs no table, so that
    # TIMESTAMP values read the same whatever the server's own zone
    arguments = _mysql_arguments(url)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Unable to set session timezone", category=UserWarning)
        try:
            con = ibis.mysql.connect(**arguments)
        except MySQLdb.OperationalError as exc:
            if exc.args and exc.args[0] == target.MYSQL_UNKNOWN_DATABASE:
                raise target.mysql_missing_database(arguments, redact_url(url)) from None
            raise
    con.raw_sql("SET @@session.time_zone = '+00:00'").close()
    return con


# MySQL's spatial types (information_schema's DATA_TYPE): ibis reads them as geospatial
# (which needs geoarrow and geopandas) or not at all; the catalog reads them as WKT text
MYSQL_SPATIAL = frozenset(
    {
        "geometry",
        "point",
        "linestring",
        "polygon",
        "multipoint",
        "multilinestring",
        "multipolygon",
        "geometrycollection",
        "geomcollection",
    }
)


@ibis.udf.scalar.builtin(name="ST_AsText")
def _st_as_text(geometry: bytes) -> str:  # type: ignore[empty-body]  # the database's function: never run here
    """MySQL's ST_AsText: the geometry as well-known text."""


def _exact_uint64(column: ibis.Column) -> ibis.Column:
    return column.cast(dt_.Decimal(precision=20, scale=0))


def _mysql_table(conn: ibis.BaseBackend, table: ibis.Table) -> ibis.Table:
    """`table` with the MySQL types that ibis misreads given as the catalog can use them.

    * TINYINT(1), what MySQL makes of BOOLEAN: boolean, as in the other backends (read as
      numbers, flags get means and outliers instead of a true/false count).  Any other
      TINYINT stays an integer.
    * BIT(1): boolean; BIT(n): an integer (ibis would take the driver's bytes for one).
    * BIGINT UNSIGNED and BIT(64): DECIMAL(20, 0).  ibis reads MySQL results through pandas,
      where an integer column with NULLs becomes float64: values above 2**53 lose digits
      and those above 2**63 stop the snapshot ("Float value ... was truncated").
    * YEAR: a 16-bit integer (ibis's 8-bit one cannot hold 1901..2155).
    * SET: its text, 'red,blue' (ibis types it an array, which MySQL cannot query).
    * spatial types: their WKT text, POINT(1 2).
    """
    op = table.op()
    with conn.raw_sql(
        "SELECT column_name, data_type, column_type FROM information_schema.columns "
        "WHERE table_schema = DATABASE() AND table_name = %s",
        args=(op.name,),
    ) as cur:
        types = {name: (data_type.lower(), column_type.lower()) for name, data_type, column_type in cur.fetchall()}
    declared: dict[str, dt_.DataType] = {}
    shown: dict[str, Any] = {}  # column -> what shows its values, or None
    for name, dtype in table.schema().items():
        data_type, column_type = types.get(name, ("", ""))
        declared[name], shown[name] = dtype, None
        if column_type == "tinyint(1)":
            declared[name] = dt_.Boolean(nullable=dtype.nullable)
        elif data_type == "year":
            declared[name] = dt_.Int16(nullable=dtype.nullable)
        elif data_type == "set":
            declared[name] = dt_.String(nullable=dtype.nullable)
        elif data_type == "bit":
            declared[name] = dt_.Binary(nullable=dtype.nullable)
            shown[name] = (
                (lambda c: c.cast("uint64") != 0)
                if column_type == "bit(1)"
                else (_exact_uint64 if column_type == "bit(64)" else lambda c: c.cast("int64"))
            )
        elif data_type == "bigint" and "unsigned" in column_type:
            shown[name] = _exact_uint64
        elif data_type in MYSQL_SPATIAL:
            declared[name] = dt_.Binary(nullable=dtype.nullable)
            shown[name] = _st_as_text
    if all(declared[name] == dtype for name, dtype in table.schema().items()):
        return table
    raw = ops.DatabaseTable(op.name, schema=ibis.schema(declared), source=conn, namespace=op.namespace).to_expr()
    if not any(shown.values()):
        return raw
    return raw.select(**{name: show(raw[name]) if show else raw[name] for name, show in shown.items()})


FILE_SCHEMES = ("duckdb", "sqlite")
# spellings of one protocol: a source reached through either is the same source
SAME_SCHEME = {"postgresql": "postgres", "mariadb": "mysql"}
DEFAULT_PORTS = {"postgres": 5432, "postgresql": 5432, "mysql": 3306, "mariadb": 3306}


def _in_memory(path: Path) -> bool:
    return str(path) in ("", ".", ":memory:") or str(path).startswith(":memory:")


def _server_location(url: str) -> tuple[str, str, str]:
    """(host:port, database, schema) of a server URL, each '' when it has none; PostgreSQL's
    schema is `public` unless ?schema= names another (the search_path a role starts with)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    query = parse_qs(parts.query)
    port: int | str | None
    try:
        port = parts.port or DEFAULT_PORTS.get(scheme)
    except ValueError:  # not a number: shown as written, never an error of the name
        port = parts.netloc.rsplit(":", 1)[-1]
    host = parts.hostname or query.get("host", [""])[-1] or ("localhost" if scheme in DEFAULT_PORTS else "")
    location = f"{host}:{port}" if host and port else host
    database = unquote(parts.path.strip("/")) or query.get("database", [""])[-1]
    schema = query.get("schema", [""])[-1] or ("public" if SAME_SCHEME.get(scheme, scheme) == "postgres" else "")
    return location, database, schema


def _file_path(url: str) -> Path:
    # duckdb://relative.db, duckdb:///abs/path.db and a bare path all work
    rest = url.split("://", 1)[1] if "://" in url else url
    rest = rest.split("?", 1)[0]
    return Path(unquote(rest)).expanduser()


class Snapshot(BaseModel):
    """A read-only copy of one table for the sandbox."""

    path: str
    url: str  # ibis URL of the copy, as the sandbox will see it
    table: str
    rows: int
    source_rows: int
    sampled: bool
    seed: int | None = None
    # columns the copy holds as text (or leaves out: portable.LEFT_OUT), and why
    as_text: dict[str, str] = Field(default_factory=dict)


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

    _conn: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _location: Any = PrivateAttr(default=None)  # (connection, its DuckDB catalog and schema)
    # what the open connection reads its tables from, checked as it opened: PostgreSQL's
    # (database, schema), MySQL's database; None for a file
    _target: Any = PrivateAttr(default=None)

    # ------------------------------------------------------------------ naming

    @property
    def scheme(self) -> str:
        return self.url.split("://", 1)[0].lower() if "://" in self.url else "duckdb"

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
            path = _file_path(self.url)
            return "memory" if _in_memory(path) else path.name
        host, database, schema = _server_location(self.url)
        return "/".join(part for part in (host.replace(":", "_"), database, schema) if part) or self.scheme

    @property
    def source(self) -> str:
        """What the catalog's results are of, without a credential: the scheme and the file's
        absolute path, or the scheme, host:port, database and schema."""
        scheme = SAME_SCHEME.get(self.scheme, self.scheme)
        if self.scheme in FILE_SCHEMES:
            path = _file_path(self.url)
            return f"{scheme}://:memory:" if _in_memory(path) else f"{scheme}://{path.resolve()}"
        host, database, schema = _server_location(self.url)
        return f"{scheme}://{host}/{database}" + (f"?schema={schema}" if schema else "")

    @property
    def stem_name(self) -> str:
        """The name this source's catalog had before catalogs were named by their whole source
        (a file's stem, a server's database): where its earlier results may be."""
        if self.scheme in FILE_SCHEMES:
            return _file_path(self.url).stem or "memory"
        path = urlsplit(self.url).path.strip("/")
        return re.sub(r"[^A-Za-z0-9_.-]", "_", path or self.scheme)

    # ------------------------------------------------------------- connection

    def connect(self) -> ibis.BaseBackend:
        """The connection, opened on first use; its schema or database is checked then, so that a
        URL pointing at none (or at the server's own catalog) fails before any table is tried."""
        with self._lock:
            if self._conn is None:
                conn = self._open()
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
                return ibis.postgres.connect(**_postgres_arguments(self.url))
            if scheme in ("mysql", "mariadb"):
                return _mysql_connect(self.url)
            return ibis.connect(self.url)
        except DatabaseError:
            raise
        except target.WrongTarget as exc:
            raise DatabaseError(scrub_secrets(str(exc), self.url)) from None
        except Exception as exc:  # drivers may echo the URL, the DSN or the password itself
            raise DatabaseError(f"cannot connect to {self.safe_url}: {scrub_secrets(str(exc), self.url)}") from None

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
            return _mysql_table(conn, table) if self.scheme in ("mysql", "mariadb") else table
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
        # Types Arrow cannot carry (DuckDB's INTERVAL and UNION, PostgreSQL's ranges, mixed
        # SQLite columns...) go as text; a column that still fails is found and sent as text
        # too, and one that fails even as text is left out: never the whole table.
        # MySQL decimals wider than DuckDB's 38 digits go as exact text first
        source = _arrow_safe(source)
        view, as_text = portable.portable(source, portable.sqlite_mixed_reasons(table))
        try:
            self._copy(view, path, name)
        except Exception:
            _remove_database(path)
            view, as_text = portable.portable(source, portable.retry_reasons(view, as_text))
            try:
                self._copy(view, path, name)
            except Exception as exc:
                _remove_database(path)
                raise DatabaseError(
                    f"table {name!r} cannot be copied for the sandbox even with its unusual columns "
                    f"as text ({type(exc).__name__}: {scrub_secrets(str(exc), self.url).splitlines()[0][:200]})"
                ) from None
        for column, why in as_text.items():
            log.info(
                "snapshot of %s: column %r %s (%s)",
                visible(name),
                column,
                "left out" if why == portable.LEFT_OUT else "carried as text",
                why,
            )
        with duckdb.connect(str(path)) as out:
            rows = out.execute(f'SELECT count(*) FROM "{_quote(name)}"').fetchone()[0]  # type: ignore[index]  # a count's row
            for other, columns in (references or {}).items():
                if other == name:
                    continue
                keys, _ = portable.portable(self.table(other).select(*columns))
                keys = keys.distinct()
                out.register("snapshot_keys", keys.to_pyarrow_batches(chunk_size=100_000))
                out.execute(f'CREATE TABLE "{_quote(other)}" AS SELECT * FROM snapshot_keys')
                out.unregister("snapshot_keys")
        # read-only; readable by others only where they can reach it (a sandbox's private
        # folder is 0700 and setgid to the sandbox's group, which then reads it)
        path.chmod(0o444 if dest.stat().st_mode & 0o005 == 0o005 else 0o440)
        return Snapshot(
            path=str(path),
            url=f"duckdb://{path}?read_only=true",
            table=name,
            rows=int(rows),
            source_rows=total,
            sampled=sampled,
            seed=self.snapshot_seed if sampled else None,
            as_text=as_text,
        )

    @staticmethod
    def _copy(view: ibis.Table, path: Path, name: str) -> None:
        reader = view.to_pyarrow_batches(chunk_size=100_000)
        with duckdb.connect(str(path)) as out:
            out.register("snapshot_source", reader)
            out.execute(f'CREATE TABLE "{_quote(name)}" AS SELECT * FROM snapshot_source')
            out.unregister("snapshot_source")


def _sqlite_declared(conn: ibis.BaseBackend, name: str) -> ibis.Table | None:
    """A SQLite table ibis cannot open: a column declared without a type in an empty table
    leaves ibis nothing to infer its type from.  Such a column is read as text."""
    from ibis.backends.sql.datatypes import SQLiteType

    try:
        with conn._safe_raw_sql(f'PRAGMA table_info("{_quote(name)}")') as cur:
            declared = [(row[1], row[2]) for row in cur.fetchall()]
        if not declared:
            return None
        schema = {col: SQLiteType.from_string(kind) if kind else ibis.dtype("string") for col, kind in declared}
        # a type name ibis does not know (CREATE TABLE AS writes "NUM") is read as text too
        schema = {col: ibis.dtype("string") if t.is_unknown() else t for col, t in schema.items()}
        return conn.sql(f'SELECT * FROM "{_quote(name)}"', schema=schema)
    except Exception:  # the caller reports the table's own error
        return None


def _remove_database(path: Path) -> None:
    for leftover in (path, path.with_name(path.name + ".wal")):
        leftover.unlink(missing_ok=True)


# DuckDB's DECIMAL holds 38 digits; MySQL's holds 65
DUCKDB_MAX_DECIMAL_DIGITS = 38


def _arrow_safe(table: ibis.Table) -> ibis.Table:
    """`table` with the columns the DuckDB snapshot cannot hold carried as text (exact)."""
    wide = [
        name
        for name, dtype in table.schema().items()
        if dtype.is_decimal() and (dtype.precision or 0) > DUCKDB_MAX_DECIMAL_DIGITS
    ]
    return table.mutate(**{name: table[name].cast("string") for name in wide}) if wide else table


def _quote(identifier: str) -> str:
    return identifier.replace('"', '""')
