"""What a database URL connects to, and how: the drivers' arguments (each session read-only),
the file or the server the URL names, and the connection itself."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import ibis

from cataloger_dagster.core.redaction import redact_url, scrub_secrets
from cataloger_dagster.resources import target
from cataloger_dagster.resources.database.errors import DatabaseError


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


def postgres_arguments(url: str) -> dict[str, Any]:
    args = _server_arguments(url, 5432)
    args.setdefault("database", None)
    # the server itself refuses writes from this session; last, so a given `options` cannot undo it
    args["options"] = f"{args.get('options', '')} -c default_transaction_read_only=on".strip()
    return args


# MySQLdb.connect takes these as numbers; every other query parameter is passed on as text
MYSQL_INT_PARAMETERS = {"port", "connect_timeout", "read_timeout", "write_timeout", "client_flag"}


def mysql_arguments(url: str) -> dict[str, Any]:
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
    arguments = mysql_arguments(url)
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


FILE_SCHEMES = ("duckdb", "sqlite")
# spellings of one protocol: a source reached through either is the same source
SAME_SCHEME = {"postgresql": "postgres", "mariadb": "mysql"}
DEFAULT_PORTS = {"postgres": 5432, "postgresql": 5432, "mysql": 3306, "mariadb": 3306}


def in_memory(path: Path) -> bool:
    return str(path) in ("", ".", ":memory:") or str(path).startswith(":memory:")


def server_location(url: str) -> tuple[str, str, str]:
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


def file_path(url: str) -> Path:
    # duckdb://relative.db, duckdb:///abs/path.db and a bare path all work
    rest = url.split("://", 1)[1] if "://" in url else url
    rest = rest.split("?", 1)[0]
    return Path(unquote(rest)).expanduser()


def url_scheme(url: str) -> str:
    """The URL's scheme, lower case; a bare path is a DuckDB file."""
    return url.split("://", 1)[0].lower() if "://" in url else "duckdb"


def open_connection(url: str) -> ibis.BaseBackend:
    """A read-only connection to the database `url` names (wherever the backend allows it: the
    catalog never writes to the source); an error never echoes the URL's password."""
    scheme = url_scheme(url)
    safe_url = redact_url(url)
    try:
        if scheme == "duckdb":
            path = file_path(url)
            if not path.exists():
                raise DatabaseError(
                    f"DuckDB file {path} does not exist: create it (for the demo, "
                    f"`cataloger demo-db {path}`) or set CATALOGER_DATABASE to another URL"
                )
            return ibis.duckdb.connect(str(path), read_only=True)
        if scheme == "sqlite":
            path = file_path(url)
            if not path.exists():
                raise DatabaseError(f"SQLite file {path} does not exist: check CATALOGER_DATABASE")
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            return ibis.sqlite.from_connection(con)
        if scheme in ("postgres", "postgresql"):
            return ibis.postgres.connect(**postgres_arguments(url))
        if scheme in ("mysql", "mariadb"):
            return _mysql_connect(url)
        return ibis.connect(url)
    except DatabaseError:
        raise
    except target.WrongTarget as exc:
        raise DatabaseError(scrub_secrets(str(exc), url)) from None
    except Exception as exc:  # drivers may echo the URL, the DSN or the password itself
        raise DatabaseError(f"cannot connect to {safe_url}: {scrub_secrets(str(exc), url)}") from None


def quote_identifier(identifier: str) -> str:
    """`identifier` as it goes between double quotes in SQL: its own quotes doubled."""
    return identifier.replace('"', '""')
