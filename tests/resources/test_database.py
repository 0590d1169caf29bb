import hashlib
import os
import sqlite3
import sys
from urllib.parse import urlsplit

import duckdb
import ibis
import pytest

from cataloger_dagster.resources.database import DatabaseError, DatabaseResource, redact_url, scrub_secrets


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def duck(tmp_path):
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE orders AS SELECT range AS id, range % 7 AS qty, "
                    "TIMESTAMP '2024-01-01' + INTERVAL (range) MINUTE AS updated_at FROM range(5000)")
        con.execute("CREATE TABLE customers AS SELECT range AS id, 'c' || range AS name FROM range(30)")
    return path


def test_duckdb_lists_tables_and_never_writes(duck):
    before = _sha(duck)
    db = DatabaseResource(url=f"duckdb://{duck}")
    assert db.list_tables() == ["customers", "orders"]
    assert db.database_name == "shop.duckdb"
    assert db.table("orders").count().execute() == 5000
    with pytest.raises(Exception):
        db.connect().raw_sql("CREATE TABLE hack (x INT)")
    db.close()
    assert _sha(duck) == before


def test_missing_table_error_names_table_and_lists_others(duck):
    db = DatabaseResource(url=f"duckdb://{duck}")
    with pytest.raises(DatabaseError, match=r"'nope' not found.*customers, orders"):
        db.table("nope")


def test_missing_file_says_what_to_do(tmp_path):
    db = DatabaseResource(url=f"duckdb://{tmp_path}/absent.duckdb")
    with pytest.raises(DatabaseError, match="cataloger demo-db"):
        db.list_tables()


def test_the_catalog_opens_a_table_when_looked_up_and_leaves_a_broken_one_out(duck, caplog):
    with duckdb.connect(str(duck)) as con:
        con.execute("CREATE TABLE gone AS SELECT 1 AS x")
        con.execute("CREATE VIEW broken AS SELECT x FROM gone")
        con.execute("DROP TABLE gone")
    db = DatabaseResource(url=f"duckdb://{duck}")
    catalog = db.catalog()
    assert list(catalog) == ["broken", "customers", "orders"] and "orders" in catalog
    assert catalog["customers"].count().execute() == 30
    assert catalog.get("broken") is None and "cross-table checks skip broken" in caplog.text
    with pytest.raises(KeyError):
        catalog["absent"]
    db.close()


def test_fingerprint_changes_with_rows_schema_and_updates(duck):
    db = DatabaseResource(url=f"duckdb://{duck}")
    first = db.fingerprint("orders")
    assert first.row_count == 5000 and first.update_column == "updated_at"
    assert db.fingerprint("orders") == first  # stable
    db.close()
    with duckdb.connect(str(duck)) as con:
        con.execute("UPDATE orders SET updated_at = TIMESTAMP '2030-01-01' WHERE id = 1")
    db2 = DatabaseResource(url=f"duckdb://{duck}")
    updated = db2.fingerprint("orders")
    assert updated.row_count == first.row_count and updated.schema_hash == first.schema_hash
    assert updated.value != first.value  # an in-place update is noticed
    db2.close()
    with duckdb.connect(str(duck)) as con:
        con.execute("ALTER TABLE orders ADD COLUMN note VARCHAR")
    db3 = DatabaseResource(url=f"duckdb://{duck}")
    assert db3.fingerprint("orders").schema_hash != first.schema_hash
    db3.close()


def test_snapshot_full_and_sampled(duck, tmp_path):
    db = DatabaseResource(url=f"duckdb://{duck}", snapshot_row_limit=1000)
    small = db.write_snapshot("customers", tmp_path / "s1")
    assert not small.sampled and small.rows == 30 == small.source_rows
    con = ibis.connect(small.url)
    assert sorted(con.table("customers").to_pandas()["id"]) == list(range(30))
    con.disconnect()
    big = db.write_snapshot("orders", tmp_path / "s2")
    assert big.sampled and 0 < big.rows <= 1000 and big.source_rows == 5000
    again = db.write_snapshot("orders", tmp_path / "s3")
    ids = lambda s: sorted(ibis.connect(s.url).table("orders").to_pandas()["id"])  # noqa: E731
    assert ids(big) == ids(again)  # seeded: the same sample every time
    # the snapshot file is read-only (the sandbox also mounts it read-only), and a
    # second snapshot into the same folder is refused
    assert os.stat(big.path).st_mode & 0o222 == 0
    with pytest.raises(DatabaseError, match="already exists"):
        db.write_snapshot("orders", tmp_path / "s2")


def test_sqlite_read_only(tmp_path):
    path = tmp_path / "small.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (id INTEGER, name TEXT)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"n{i}") for i in range(10)])
    con.commit()
    con.close()
    before = _sha(path)
    db = DatabaseResource(url=f"sqlite://{path}")
    assert db.list_tables() == ["t"]
    assert db.fingerprint("t").row_count == 10
    with pytest.raises(Exception):
        db.connect().raw_sql("INSERT INTO t VALUES (99, 'x')")
    db.close()
    assert _sha(path) == before


def test_redact_url():
    assert redact_url("postgres://u:p%40ss@h:5432/db") == "postgres://u:***@h:5432/db"
    assert redact_url("duckdb://x.db") == "duckdb://x.db"


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


@pytest.mark.parametrize("url, expected", [
    ("postgres://u:p%40ss@h:5432/db", "postgres://u:***@h:5432/db"),
    ("postgres://u:p@ss@h/db", "postgres://u:***@h/db"),  # an unquoted @ in the password
    ("postgres://:pw@h/db", "postgres://:***@h/db"),
    ("postgres://u@h/db?password=pw&sslmode=require", "postgres://u@h/db?password=***&sslmode=require"),
    ("postgres://u@h/db?sslmode=require&pass=pw", "postgres://u@h/db?sslmode=require&pass=***"),
    ("mysql://u@h/db?pwd=pw", "mysql://u@h/db?pwd=***"),
    ("mysql://u:p%40ss@h:3306/db?charset=utf8mb4", "mysql://u:***@h:3306/db?charset=utf8mb4"),
    ("mariadb://u@h/db?password=pw&ssl_mode=REQUIRED", "mariadb://u@h/db?password=***&ssl_mode=REQUIRED"),
    ("postgres://u@h/db?sslpassword=pw&PASSWORD=pw2", "postgres://u@h/db?sslpassword=***&PASSWORD=***"),
    ("duckdb:///x.db?motherduck_token=tok&read_only=true", "duckdb:///x.db?motherduck_token=***&read_only=true"),
    ("snowflake://u:pw@acct/db?private_key=k&warehouse=w", "snowflake://u:***@acct/db?private_key=***&warehouse=w"),
    ("postgres://u:pw@h/db?password=pw", "postgres://u:***@h/db?password=***"),
    ("postgres://u:p\tw@h/db", "postgres://u:***@h/db"),  # urlsplit drops the tab
    # nothing secret: left exactly as written
    ("duckdb://x.db", "duckdb://x.db"),
    ("postgres://u@h/db?schema=s&password=", "postgres://u@h/db?schema=s&password="),
    ("data/demo.duckdb", "data/demo.duckdb"),
])
def test_redact_url_hides_passwords_in_the_userinfo_and_the_query(url, expected):
    assert redact_url(url) == expected


def test_redact_url_hides_a_url_it_cannot_parse():
    assert redact_url("postgres://u:pw@[::1/db") == "postgres://(URL hidden: it cannot be parsed)"


def test_scrub_secrets_removes_every_form_of_the_password():
    url = "postgres://u:p%2Fw%21@h/db?sslpassword=s+p&x=1"
    echoed = f"bad {url}; dsn password=p/w! sslpassword='s p' or p%2Fw%21"
    scrubbed = scrub_secrets(echoed, url)
    assert "p/w!" not in scrubbed and "p%2Fw%21" not in scrubbed and "s p" not in scrubbed
    assert redact_url(url) in scrubbed  # the URL itself is still named, without its secrets


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


@pytest.mark.mysql
def test_mysql_flags_read_as_booleans_and_other_tinyints_as_numbers(scratch):
    import pyarrow as pa
    from backends import load_tables

    url = load_tables("mysql", {"t": pa.table({
        "active": pa.array([True, False, None]), "level": pa.array([1, 0, 7], pa.int8())})}, scratch)
    db = DatabaseResource(url=url)
    table = db.table("t")
    assert table.schema()["active"].is_boolean() and table.schema()["level"].is_int8()
    assert table.filter(table.active).count().execute() == 1
    assert table.order_by("level").to_pyarrow().to_pylist() == [
        {"active": False, "level": 0}, {"active": True, "level": 1}, {"active": None, "level": 7}]
    db.close()

def test_snapshot_carries_what_arrow_cannot_as_text(tmp_path):
    """An INTERVAL column used to fail the whole snapshot ("Unsupported cast from
    month_day_nano_interval to duration"); now it and the other awkward types are text."""
    path = tmp_path / "odd.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE odd AS SELECT range AS id, INTERVAL (range) DAY + INTERVAL 1 MONTH AS span, "
                    "'0101'::BIT AS bits, range::UHUGEINT AS huge, DATE '2024-01-01' + range::INT AS day "
                    "FROM range(30)")
    snap = DatabaseResource(url=f"duckdb://{path}").write_snapshot("odd", tmp_path / "snap")
    assert snap.rows == 30 and set(snap.as_text) == {"span", "bits", "huge"}
    with duckdb.connect(snap.path, read_only=True) as con:
        types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns").fetchall())
        assert types == {"id": "BIGINT", "span": "VARCHAR", "bits": "VARCHAR", "huge": "VARCHAR", "day": "DATE"}
        assert con.execute("SELECT span FROM odd WHERE id = 2").fetchone() == ("1 month 2 days",)


def test_snapshot_of_postgres_types_without_an_arrow_form(postgres_schema, postgres_admin_url, tmp_path):
    schema, conn = postgres_schema
    conn.execute(f"CREATE TABLE {schema}.odd AS SELECT g AS id, int4range(g, g + 2) AS span, "
                 f"point(g, g) AS spot, (g * 1.5)::numeric::money AS cash, ('10.0.0.' || g)::inet AS host "
                 "FROM generate_series(1, 20) g")
    db = DatabaseResource(url=f"{postgres_admin_url}?schema={schema}")
    snap = db.write_snapshot("odd", tmp_path / "snap")
    assert snap.rows == 20 and set(snap.as_text) == {"span", "spot", "cash", "host"}
    with duckdb.connect(snap.path, read_only=True) as con:
        assert con.execute("SELECT span, spot, cash, host FROM odd WHERE id = 2").fetchone() == (
            "[2,4)", "(2,2)", "$3.00", "10.0.0.2/32")


def test_an_empty_sqlite_table_with_untyped_columns_opens(tmp_path):
    path = tmp_path / "e.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE e (a, b INTEGER)")
    con.commit()
    with pytest.raises(Exception, match="infer types"):      # what ibis says by itself
        ibis.sqlite.connect(path).table("e")
    table = DatabaseResource(url=f"sqlite://{path}").table("e")
    assert dict(table.schema().items()) == {"a": ibis.dtype("string"), "b": ibis.dtype("int64")}
    assert table.count().execute() == 0


def test_fix_scripts_point_at_the_table_in_the_databases_dialect_and_schema(tmp_path):
    assert DatabaseResource(url=f"duckdb://{tmp_path}/x.duckdb").fix_target("t").dialect == "duckdb"
    assert DatabaseResource(url=f"sqlite://{tmp_path}/x.sqlite").fix_target("t").dialect == "sqlite"
    pg = DatabaseResource(url="postgres://u:p@h:5432/db?schema=sales").fix_target("orders")
    assert (pg.table, pg.dialect, pg.schema) == ("orders", "postgres", "sales")
    assert DatabaseResource(url="mariadb://u:p@h/db").fix_target("t").dialect == "mysql"
    assert DatabaseResource(url="bigquery://project/dataset").fix_target("t") is None


def test_duckdb_lists_its_tables_and_views_as_ibis_does_asking_its_schema_once(duck):
    import duckdb as _duckdb

    with _duckdb.connect(str(duck)) as con:
        con.execute("CREATE VIEW big_orders AS SELECT * FROM orders")
    db = DatabaseResource(url=f"duckdb://{duck}")
    conn = db.connect()
    assert db.list_tables() == sorted(conn.list_tables()) == ["big_orders", "customers", "orders"]
    assert db.list_tables() == ["big_orders", "customers", "orders"]   # the schema asked once, kept
    db.close()   # a new connection asks again
    assert db.list_tables() == ["big_orders", "customers", "orders"] and db._location[0] is db.connect()
