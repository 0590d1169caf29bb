"""Databases that hold every type of their backend, for the "no type aborts a table" tests.

Each backend is one entry of BACKENDS: a function that fills an empty database (a DuckDB or
SQLite file, a fresh PostgreSQL schema, a new MySQL/MariaDB database) and returns the ibis
URL to catalog it with, plus the tables it made and, per table, the columns that hold an
unusual type.  Every database has the same shapes beside its types:

* `every_type`: one column per type (60 rows, every column NULL on one of them);
* `empty_table` and `one_row`: the same columns, with 0 and 1 rows;
* `all_null`: typed columns that hold only NULLs;
* `wide_table`: 1,000 columns;
* `order` (a reserved word) and `données` (not ASCII), with quoted, reserved and unicode
  column names.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROWS = 60
WIDE = 1000
ODD_COLUMNS = ["select", "group by", "naïve ✓", 'say "hi"', "UPPER"]
ODD_TABLES = ["order", "données"]


@dataclass
class Built:
    backend: str
    url: str                                  # what `cataloger run --database` takes
    tables: list[str]
    unusual: dict[str, list[str]] = field(default_factory=dict)   # table -> columns of unusual types


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _odd_tables(execute: Callable[[str], object], series: str, text: str = "VARCHAR") -> None:
    """`order` and `données`: odd names, ordinary values (numbers, labels, a few missing)."""
    cols = ", ".join(f"{q(c)} {t}" for c, t in zip(ODD_COLUMNS, ["INTEGER", text, text, "DOUBLE PRECISION", text]))
    for table in ODD_TABLES:
        execute(f"CREATE TABLE {q(table)} ({cols})")
        execute(f"INSERT INTO {q(table)} SELECT {series}")


# --------------------------------------------------------------------------- DuckDB

_DUCKDB_TYPES = {
    "id": ("INTEGER", "i"),
    "flag": ("BOOLEAN", "i % 2 = 0"),
    "tiny": ("TINYINT", "(i % 100)::TINYINT"),
    "big": ("BIGINT", "i * 1000000000"),
    "huge": ("HUGEINT", "170141183460469231731687303715884105727::HUGEINT // 1000 * i"),
    "uhuge": ("UHUGEINT", "i::UHUGEINT * 1000000000000000000000"),
    "ubig": ("UBIGINT", "i::UBIGINT"),
    "real_": ("REAL", "i / 3.0"),
    "dbl": ("DOUBLE", "CASE WHEN i = 7 THEN 'NaN'::DOUBLE ELSE i / 7.0 END"),
    "dec": ("DECIMAL(18,3)", "i / 3.0"),
    "dec38": ("DECIMAL(38,10)", "i / 3.0"),
    "label": ("VARCHAR", "'label ' || (i % 5)"),
    "day": ("DATE", "DATE '2020-01-01' + i::INTEGER"),
    "clock": ("TIME", "TIME '10:00:00' + INTERVAL (i) MINUTE"),
    "clock_tz": ("TIMETZ", "'10:00:00+02'::TIMETZ"),
    "ts": ("TIMESTAMP", "TIMESTAMP '2020-01-01' + INTERVAL (i) HOUR"),
    "ts_tz": ("TIMESTAMPTZ", "TIMESTAMPTZ '2020-01-01 00:00:00+00' + INTERVAL (i) HOUR"),
    "ts_ns": ("TIMESTAMP_NS", "(TIMESTAMP '2020-01-01' + INTERVAL (i) HOUR)::TIMESTAMP_NS"),
    "ts_s": ("TIMESTAMP_S", "(TIMESTAMP '2020-01-01' + INTERVAL (i) HOUR)::TIMESTAMP_S"),
    "ts_ms": ("TIMESTAMP_MS", "(TIMESTAMP '2020-01-01' + INTERVAL (i) HOUR)::TIMESTAMP_MS"),
    "span": ("INTERVAL", "INTERVAL (i) DAY + INTERVAL 1 MONTH"),
    "bits": ("BIT", "'0101'::BIT"),
    "blob_": ("BLOB", "('\\xAA\\xBB' || i::VARCHAR)::BLOB"),
    "uid": ("UUID", "md5(i::VARCHAR)::UUID"),
    "doc": ("JSON", "('{\"a\": ' || i || '}')::JSON"),
    "mood_": ("mood", "(['sad', 'ok', 'happy'])[i % 3 + 1]::mood"),
    "list_": ("INTEGER[]", "[i, i + 1]"),
    "nested_list": ("VARCHAR[][]", "[['a'], ['b', 'c']]"),
    "record": ("STRUCT(a INTEGER, b VARCHAR, s INTERVAL)", "{'a': i, 'b': 'x', 's': INTERVAL (i) DAY}"),
    "map_": ("MAP(VARCHAR, INTEGER)", "MAP {'k': i}"),
    "array3": ("INTEGER[3]", "[i, i, i]::INTEGER[3]"),
    "either": ("UNION(num INTEGER, str VARCHAR)",
               "CASE WHEN i % 2 = 0 THEN i::INTEGER::UNION(num INTEGER, str VARCHAR) "
               "ELSE ('s' || i)::UNION(num INTEGER, str VARCHAR) END"),
}
DUCKDB_UNUSUAL = ["uhuge", "span", "bits", "either", "record", "clock_tz", "mood_", "huge"]


def build_duckdb(root: Path, _schema=None) -> Built:
    import duckdb

    path = root / "every_type.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
        series = f"(SELECT range AS i FROM range(1, {ROWS + 1}))"
        _typed_tables(con.execute, _DUCKDB_TYPES, series)
        _common_tables(con.execute, "INTEGER", "VARCHAR", "DOUBLE", "DATE", series)
    return Built("duckdb", f"duckdb://{path}", _tables(), {"every_type": DUCKDB_UNUSUAL})


# --------------------------------------------------------------------------- PostgreSQL

_POSTGRES_TYPES = {
    "id": ("integer", "i"),
    "flag": ("boolean", "i % 2 = 0"),
    "small": ("smallint", "i"),
    "big": ("bigint", "i::bigint * 1000000000"),
    "real_": ("real", "i / 3.0"),
    "dbl": ("double precision", "CASE WHEN i = 7 THEN 'NaN'::float8 ELSE i / 7.0 END"),
    "num": ("numeric", "i / 3.0"),
    "num2": ("numeric(12,2)", "i / 3.0"),
    "cash": ("money", "(i * 1.5)::numeric::money"),
    "label": ("varchar(20)", "'label ' || (i % 5)"),
    "body": ("text", "'text ' || i"),
    "code": ("char(3)", "'abc'"),
    "day": ("date", "DATE '2020-01-01' + i"),
    "clock": ("time", "TIME '10:00' + make_interval(mins => i)"),
    "clock_tz": ("timetz", "'10:00+02'::timetz"),
    "ts": ("timestamp", "TIMESTAMP '2020-01-01' + make_interval(hours => i)"),
    "ts_tz": ("timestamptz", "TIMESTAMPTZ '2020-01-01 00:00+00' + make_interval(hours => i)"),
    "span": ("interval", "make_interval(months => 1, days => i)"),
    "uid": ("uuid", "md5(i::text)::uuid"),
    "doc": ("json", "json_build_object('a', i)"),
    "docb": ("jsonb", "jsonb_build_object('a', i, 'b', array[1, 2])"),
    "bytes_": ("bytea", "('\\xaabb' || lpad(to_hex(i), 2, '0'))::bytea"),
    "ints": ("integer[]", "array[i, i + 1]"),
    "grid": ("text[][]", "array[['a', 'b'], ['c', 'd']]"),
    "host": ("inet", "('10.0.0.' || i)::inet"),
    "net": ("cidr", "'10.0.0.0/8'::cidr"),
    "mac": ("macaddr", "'08:00:2b:01:02:03'::macaddr"),
    "words": ("tsvector", "to_tsvector('english', 'the quick fox ' || i)"),
    "query_": ("tsquery", "to_tsquery('fox')"),
    "ints_range": ("int4range", "int4range(i, i + 10)"),
    "ts_range": ("tstzrange", "tstzrange('2020-01-01', '2020-01-02')"),
    "days": ("daterange", "daterange('2020-01-01', '2020-02-01')"),
    "ranges": ("nummultirange", "'{[1,2],[5,6]}'::nummultirange"),
    "spot": ("point", "point(i, i)"),
    "line_": ("line", "line(point(0, 0), point(1, 1))"),
    "seg": ("lseg", "lseg(point(0, 0), point(i, i))"),
    "box_": ("box", "box(point(0, 0), point(i, i))"),
    "route": ("path", "path(polygon '((0,0),(1,1),(2,0))')"),
    "shape": ("polygon", "polygon '((0,0),(1,1),(2,0))'"),
    "ring": ("circle", "circle(point(0, 0), i)"),
    "mood_": ("mood", "(array['sad', 'ok', 'happy'])[i % 3 + 1]::mood"),
    "positive": ("posint", "i::posint"),
    "pair_": ("pair", "row(i, 'x')::pair"),
    "bits": ("bit(4)", "B'0101'"),
    "varbits": ("varbit", "B'10'"),
    "markup": ("xml", "('<a>' || i || '</a>')::xml"),
}
POSTGRES_UNUSUAL = ["cash", "span", "uid", "grid", "host", "net", "mac", "words", "query_", "ints_range",
                    "ts_range", "days", "ranges", "spot", "line_", "seg", "box_", "route", "shape", "ring",
                    "mood_", "positive", "pair_", "bits", "varbits", "markup", "num"]


def build_postgres(admin_url: str, schema: str) -> Built:
    import psycopg

    with psycopg.connect(admin_url.replace("postgres://", "postgresql://"), autocommit=True) as con:
        con.execute(f"SET search_path TO {schema}")
        con.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
        con.execute("CREATE DOMAIN posint AS integer CHECK (VALUE > 0)")
        con.execute("CREATE TYPE pair AS (a integer, b text)")
        series = f"(SELECT generate_series(1, {ROWS}) AS i)"
        _typed_tables(con.execute, _POSTGRES_TYPES, series)
        _common_tables(con.execute, "integer", "text", "double precision", "date", series)
    return Built("postgres", f"{admin_url}?schema={schema}", _tables(), {"every_type": POSTGRES_UNUSUAL})


# --------------------------------------------------------------------------- SQLite

SQLITE_MIXED = [1, 2.5, "three", b"\x00\xff", -7, "2020-01-01", 0.0]


def build_sqlite(root: Path, _schema=None) -> Built:
    """SQLite's types are affinities: the unusual columns hold values of several storage
    classes (integers, reals, text and blobs in one column), as `sqlite3 .import` and
    hand-made databases often do, and text-only columns of numbers and dates."""
    path = root / "every_type.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE every_type (id INTEGER PRIMARY KEY, flag BOOLEAN, amount REAL, price NUMERIC, "
                "label TEXT, day DATE, ts TIMESTAMP, bytes_ BLOB, anything, mixed_int INTEGER, "
                "mixed_text TEXT, number_text TEXT, date_text TEXT)")
    rows = []
    for i in range(1, ROWS + 1):
        odd = SQLITE_MIXED[i % len(SQLITE_MIXED)]
        rows.append((i, i % 2, i / 3, i * 1.5, f"label {i % 5}", f"2020-01-{i % 28 + 1:02d}",
                     f"2020-01-01 {i % 24:02d}:00:00", bytes([i, 255 - i]), odd,
                     odd if i % 3 else i, odd if i % 2 else f"t{i}", f"{i / 10 - 3:.1f}",
                     f"2020/01/{i % 28 + 1:02d}"))
    rows.append((ROWS + 1, *[None] * 12))
    con.executemany(f"INSERT INTO every_type VALUES ({', '.join('?' * 13)})", rows)
    con.execute("CREATE TABLE empty_table AS SELECT * FROM every_type WHERE 0")
    con.execute("CREATE TABLE one_row AS SELECT * FROM every_type WHERE id = 1")
    _common_tables(lambda sql: con.execute(sql), "INTEGER", "TEXT", "REAL", "DATE",
                   f"(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {ROWS}) "
                   "SELECT i FROM s)")
    con.commit()
    con.close()
    return Built("sqlite", f"sqlite://{path}", _tables(), {"every_type": ["anything", "mixed_int", "mixed_text"]})


# --------------------------------------------------------------------------- MySQL / MariaDB

_MYSQL_TYPES = {
    "id": ("INT", "i"),
    "flag": ("BOOLEAN", "i % 2 = 0"),
    "tiny": ("TINYINT", "i - 50"),
    "tiny_u": ("TINYINT UNSIGNED", "i * 4"),
    "small": ("SMALLINT", "i * -500"),
    "small_u": ("SMALLINT UNSIGNED", "i * 1000"),
    "medium": ("MEDIUMINT", "i * -100000"),
    "medium_u": ("MEDIUMINT UNSIGNED", "i * 250000"),
    "int_": ("INT", "i * -30000000"),
    "int_u": ("INT UNSIGNED", "i * 70000000"),
    "big": ("BIGINT", "CASE WHEN i = 1 THEN -9223372036854775808 ELSE i * 1000000000 END"),
    "big_u": ("BIGINT UNSIGNED", "CASE WHEN i = 2 THEN 18446744073709551615 ELSE i END"),
    "dec": ("DECIMAL(10,2)", "i / 3"),
    "dec65": ("DECIMAL(65,30)", "CAST(i AS DECIMAL(65,30)) / 3 + 100000000000000000000000000000000"),
    "flt": ("FLOAT", "i / 7"),
    "dbl": ("DOUBLE", "i / 7"),
    "bit1": ("BIT(1)", "i % 2"),
    "bits": ("BIT(12)", "i * 60"),
    "bit64": ("BIT(64)", "CASE WHEN i = 3 THEN 18446744073709551615 ELSE i END"),
    "day": ("DATE", "DATE '2020-01-01' + INTERVAL i DAY"),
    "ts": ("DATETIME(6)", "TIMESTAMP '2020-01-01 00:00:00' + INTERVAL i HOUR + INTERVAL i MICROSECOND"),
    "stamp": ("TIMESTAMP NULL", "TIMESTAMP '2020-01-01 00:00:00' + INTERVAL i MINUTE"),
    "clock": ("TIME(6)", "CASE WHEN i = 5 THEN TIME '-838:59:59' ELSE SEC_TO_TIME(i * 7200 + 0.5) END"),
    "yr": ("YEAR", "1901 + i"),
    "code": ("CHAR(3)", "'abc'"),
    "label": ("VARCHAR(20)", "CONCAT('label ', i % 5)"),
    "body": ("TEXT", "CONCAT('text é ', i)"),
    "longbody": ("LONGTEXT", "CASE WHEN i = 6 THEN REPEAT('x', 70000) ELSE CONCAT('long ', i) END"),
    "bin4": ("BINARY(4)", "UNHEX(LPAD(HEX(i), 8, '0'))"),
    "varbin": ("VARBINARY(16)", "UNHEX(CONCAT('AABB', LPAD(HEX(i), 2, '0')))"),
    "blob_": ("BLOB", "UNHEX(CONCAT(LPAD(HEX(i), 2, '0'), '00FF'))"),
    "size": ("ENUM('small','medium','large')", "ELT(i % 3 + 1, 'small', 'medium', 'large')"),
    "colours": ("SET('red','green','blue')", "ELT(i % 4 + 1, '', 'red', 'red,blue', 'green,blue,red')"),
    "doc": ("JSON", "JSON_OBJECT('a', i, 'b', JSON_ARRAY(1, 2))"),
    "spot": ("POINT", "POINT(i, i % 7)"),
    "shape": ("GEOMETRY", "CASE WHEN i % 2 = 1 THEN POINT(i, 0) "
                          "ELSE ST_GeomFromText(CONCAT('LINESTRING(0 0, ', i, ' 1)')) END"),
    "route": ("LINESTRING", "ST_GeomFromText(CONCAT('LINESTRING(0 0, ', i, ' ', i, ')'))"),
    "area": ("POLYGON", "ST_GeomFromText(CONCAT('POLYGON((0 0, ', i, ' 0, ', i, ' ', i, ', 0 0))'))"),
    "spots": ("MULTIPOINT", "ST_GeomFromText(CONCAT('MULTIPOINT(0 0, ', i, ' 1)'))"),
}
# MariaDB's own types, where the server has them (MySQL has none of them)
_MARIADB_TYPES = {
    "inet6": ("host6", "INET6", "CONCAT('2001:db8::', HEX(i))"),
    "inet4": ("host4", "INET4", "CONCAT('10.0.0.', i)"),
    "uuid": ("uid", "UUID", "CONCAT('00000000-0000-4000-8000-', LPAD(i, 12, '0'))"),
}
MYSQL_UNUSUAL = ["big_u", "dec65", "bit1", "bits", "bit64", "clock", "yr", "size", "colours", "doc",
                 "spot", "shape", "route", "area", "spots"]


def build_mysql(url: str, _schema=None) -> Built:
    """`url`: an empty database of the server (tests/support/backends.py makes one and drops
    it).  The session quotes names with double quotes and joins text with ||, as the other
    backends do, so that the shared tables are written once."""
    from urllib.parse import unquote, urlsplit

    import MySQLdb

    parts = urlsplit(url)
    con = MySQLdb.connect(host=parts.hostname, port=parts.port or 3306, user=unquote(parts.username or ""),
                          password=unquote(parts.password or ""), database=parts.path.strip("/"),
                          charset="utf8mb4", autocommit=True)
    try:
        with con.cursor() as cur:
            cur.execute("SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES,PIPES_AS_CONCAT')")
            # 500 TEXT columns may not fit InnoDB's 8 KB row at their longest, and CREATE TABLE
            # refuses them in strict mode; the short values of wide_table fit
            cur.execute("SET SESSION innodb_strict_mode = OFF")
            cur.execute("SELECT plugin_name FROM information_schema.plugins "
                        "WHERE plugin_type = 'DATA TYPE' AND plugin_status = 'ACTIVE'")
            present = {name.lower() for (name,) in cur.fetchall()}
            types = {**_MYSQL_TYPES, **{column: (kind, value) for plugin, (column, kind, value)
                                        in _MARIADB_TYPES.items() if plugin in present}}
            series = (f"(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {ROWS}) "
                      "SELECT i FROM s)")
            _typed_tables(cur.execute, types, series)
            _common_tables(cur.execute, "INTEGER", "TEXT", "DOUBLE", "DATE", series)
    finally:
        con.close()
    unusual = MYSQL_UNUSUAL + [column for plugin, (column, _, _) in _MARIADB_TYPES.items() if plugin in present]
    return Built("mysql", url, _tables(), {"every_type": unusual})


# --------------------------------------------------------------------------- shared

def _tables() -> list[str]:
    return ["every_type", "empty_table", "one_row", "all_null", "wide_table", *ODD_TABLES]


def _typed_tables(execute, types: dict[str, tuple[str, str]], series: str) -> None:
    execute(f"CREATE TABLE every_type ({', '.join(f'{q(c)} {t}' for c, (t, _) in types.items())})")
    execute(f"INSERT INTO every_type SELECT {', '.join(v for _, v in types.values())} FROM {series} AS s")
    execute(f"INSERT INTO every_type ({q('id')}) VALUES ({ROWS + 1})")   # NULL in every other column
    execute("CREATE TABLE empty_table AS SELECT * FROM every_type WHERE 1 = 0")
    execute("CREATE TABLE one_row AS SELECT * FROM every_type WHERE id = 1")


def _common_tables(execute, integer: str, text: str, double: str, date: str, series: str) -> None:
    execute(f"CREATE TABLE all_null (id {integer}, {q('nothing')} {text}, no_number {double}, no_day {date})")
    execute(f"INSERT INTO all_null (id) SELECT i FROM {series} AS s")
    wide = ", ".join(f"c{j:04d} {integer if j % 2 else text}" for j in range(WIDE))
    execute(f"CREATE TABLE wide_table ({wide})")
    values = ", ".join(f"i * {j}" if j % 2 else f"'v' || (i % {j % 7 + 2})" for j in range(WIDE))
    execute(f"INSERT INTO wide_table SELECT {values} FROM {series} AS s")
    _odd_tables(execute, f"i, 'kind ' || (i % 3), CASE WHEN i % 10 = 0 THEN NULL ELSE 'ü' || i END, "
                         f"i / 4.0, 'X' FROM {series} AS s", text)


BACKENDS: dict[str, Callable[..., Built]] = {
    "duckdb": build_duckdb,
    "postgres": build_postgres,
    "sqlite": build_sqlite,
    "mysql": build_mysql,
}
