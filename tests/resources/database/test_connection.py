"""database/connection.py: each URL opens read-only, and no error shows its password."""

import sqlite3
import sys
from urllib.parse import urlsplit

import ibis
import pytest

from cataloger_dagster.resources.database.errors import DatabaseError
from cataloger_dagster.resources.database.resource import DatabaseResource


def test_missing_file_says_what_to_do(tmp_path):
    db = DatabaseResource(url=f"duckdb://{tmp_path}/absent.duckdb")
    with pytest.raises(DatabaseError, match="cataloger demo-db"):
        db.list_tables()


def test_sqlite_read_only(tmp_path, sha):
    path = tmp_path / "small.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (id INTEGER, name TEXT)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"n{i}") for i in range(10)])
    con.commit()
    con.close()
    before = sha(path)
    db = DatabaseResource(url=f"sqlite://{path}")
    assert db.list_tables() == ["t"]
    assert db.fingerprint("t").row_count == 10
    with pytest.raises(Exception):
        db.connect().raw_sql("INSERT INTO t VALUES (99, 'x')")
    db.close()
    assert sha(path) == before


def test_postgres(postgres_admin_url, postgres_schema):
    schema, conn = postgres_schema
    conn.execute(f"CREATE TABLE {schema}.items (id int primary key, price numeric(10,2), seen timestamptz)")
    conn.execute(f"INSERT INTO {schema}.items SELECT g, g * 1.5, now() FROM generate_series(1, 250) g")
    # trust auth accepts any password: it must never appear in what we print
    url = postgres_admin_url.replace("postgres://postgres@", "postgres://postgres:s3cr3t-pw@") + f"?schema={schema}"
    db = DatabaseResource(url=url)
    assert "s3cr3t-pw" not in db.safe_url
    assert db.list_tables() == ["items"]
    fp = db.fingerprint("items")
    assert fp.row_count == 250
    with pytest.raises(Exception, match="read-only"):
        db.connect().raw_sql(f"INSERT INTO {schema}.items VALUES (999, 1, now())")
    assert conn.execute(f"SELECT count(*) FROM {schema}.items").fetchone()[0] == 250
    snap = db.write_snapshot("items", "/tmp/" + schema)
    assert snap.rows == 250
    db.close()


def test_unreachable_postgres_error_hides_password():
    db = DatabaseResource(url="postgres://u:topsecret@127.0.0.1:1/db?connect_timeout=2")
    with pytest.raises(DatabaseError) as info:
        db.list_tables()
    assert "topsecret" not in str(info.value) and "127.0.0.1" in str(info.value)


@pytest.mark.parametrize("url", [
    "nosuchdb://u:userinfo-pw@h/db?password=query-pw",  # ibis echoes a URL it cannot use
    "nosuchdb://u@h/db?sslpassword=query-pw&token=userinfo-pw",
])
def test_connection_errors_never_echo_the_password(url):
    db = DatabaseResource(url=url)
    with pytest.raises(DatabaseError) as info:
        db.list_tables()
    message = str(info.value)
    assert "nosuchdb://u" in message  # the error still says which database
    assert "userinfo-pw" not in message and "query-pw" not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__  # nor does the chained error
    assert "userinfo-pw" not in repr(db) and "query-pw" not in repr(db)


def test_postgres_password_in_the_query(postgres_admin_url, postgres_schema):
    schema, conn = postgres_schema
    conn.execute(f"CREATE TABLE {schema}.t AS SELECT 1 AS id")
    db = DatabaseResource(url=f"{postgres_admin_url}?password=q-s3cr3t&schema={schema}")
    assert db.list_tables() == ["t"]  # accepted (the CI server trusts local connections)
    assert "q-s3cr3t" not in db.safe_url and "password=***" in db.safe_url
    with pytest.raises(Exception, match="read-only"):
        db.connect().raw_sql(f"INSERT INTO {schema}.t VALUES (2)")
    db.close()


# ---------------------------------------------------------------- MySQL / MariaDB


def _with_password(url: str, password: str) -> str:
    """The admin URL with its password replaced (the test server's is known, any other is refused)."""
    parts = urlsplit(url)
    return parts._replace(netloc=f"{parts.username}:{password}@{parts.hostname}:{parts.port}").geturl()


@pytest.mark.mysql
def test_mysql_reads_read_only_and_never_shows_the_password(scratch):
    import pyarrow as pa
    from backends import load_tables

    orders = pa.table({"id": pa.array(range(250), pa.int64()), "qty": pa.array([i % 7 for i in range(250)])})
    url = load_tables("mysql", {"orders": orders, "customers": pa.table({"id": [1, 2]})}, scratch)
    password = urlsplit(url).password
    db = DatabaseResource(url=url)
    assert password and password not in db.safe_url and password not in repr(db)
    assert db.list_tables() == ["customers", "orders"]
    parts = urlsplit(url)
    assert db.database_name == f"{parts.hostname}_{parts.port or 3306}/{parts.path.strip('/')}"
    assert password not in db.database_name and password not in db.source
    assert db.fingerprint("orders").row_count == 250
    conn = db.connect()
    # TIMESTAMP values read in UTC whatever the server's zone (MariaDB has no 'UTC' without its zone tables)
    assert conn.raw_sql("SELECT @@session.time_zone").fetchall() == (("+00:00",),)
    with pytest.raises(Exception, match="READ ONLY"):
        conn.raw_sql("INSERT INTO orders VALUES (999, 1)")
    assert db.table("orders").count().execute() == 250
    snap = db.write_snapshot("orders", scratch.directory / "snap", references={"customers": ["id"]})
    assert snap.rows == 250
    assert ibis.connect(snap.url).table("customers").count().execute() == 2
    db.close()
    # the same server as mariadb://, the password in the query instead of the userinfo
    no_password = url.replace(f":{password}@", "@", 1)
    db = DatabaseResource(url=no_password.replace("mysql://", "mariadb://", 1) + f"?password={password}")
    assert db.list_tables() == ["customers", "orders"] and password not in db.safe_url
    db.close()


def test_mysql_wrong_password_error_hides_it(mysql_admin_url):
    db = DatabaseResource(url=_with_password(mysql_admin_url, "wr0ng-s3cret"))
    with pytest.raises(DatabaseError, match="Access denied") as info:
        db.list_tables()
    assert "wr0ng-s3cret" not in str(info.value) and "127.0.0.1" in str(info.value)


def test_unreachable_mysql_error_hides_password():
    db = DatabaseResource(url="mysql://u:topsecret@127.0.0.1:1/db?connect_timeout=2")
    with pytest.raises(DatabaseError) as info:
        db.list_tables()
    assert "topsecret" not in str(info.value) and "mysql://u:***@127.0.0.1:1/db" in str(info.value)


def test_mysql_without_its_client_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "MySQLdb", None)  # as if the mysql extra were not installed
    db = DatabaseResource(url="mysql://u:s3cret@127.0.0.1/db")
    with pytest.raises(DatabaseError, match=r"mysql://u:\*\*\*@127.0.0.1/db: .*cataloger-dagster\[mysql\].*libmariadb-dev"):
        db.list_tables()
