"""database/resource.py: DatabaseResource lists and opens tables, never writes, names its catalog."""

import sqlite3

import duckdb
import ibis
import pytest

from cataloger_dagster.resources.database.errors import DatabaseError
from cataloger_dagster.resources.database.resource import DatabaseResource


def test_duckdb_lists_tables_and_never_writes(duck, sha):
    before = sha(duck)
    db = DatabaseResource(url=f"duckdb://{duck}")
    assert db.list_tables() == ["customers", "orders"]
    assert db.database_name == "shop.duckdb"
    assert db.table("orders").count().execute() == 5000
    with pytest.raises(Exception):
        db.connect().raw_sql("CREATE TABLE hack (x INT)")
    db.close()
    assert sha(duck) == before


def test_missing_table_error_names_table_and_lists_others(duck):
    db = DatabaseResource(url=f"duckdb://{duck}")
    with pytest.raises(DatabaseError, match=r"'nope' not found.*customers, orders"):
        db.table("nope")


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


def test_a_tables_documentation_is_its_comments_and_the_dbt_manifest(duck, tmp_path):
    from dbt_manifest import write_manifest

    with duckdb.connect(str(duck)) as con:
        con.execute("COMMENT ON TABLE orders IS 'The comment of the table.'")
        con.execute("COMMENT ON COLUMN orders.qty IS 'Pieces ordered.'")
    plain = DatabaseResource(url=f"duckdb://{duck}").documented("orders")
    assert plain.description == "The comment of the table." and plain.columns == {"qty": "Pieces ordered."}
    documented = DatabaseResource(url=f"duckdb://{duck}", dbt_manifest=str(write_manifest(tmp_path))).documented("orders")
    assert documented.description == "Orders as the shop records them, one row per order."  # dbt's first
    assert documented.columns == {"qty": "Pieces ordered.", "order_id": "The order's key."}
    assert [t.test for t in documented.dbt_tests] == ["unique", "accepted_values"]
    assert not DatabaseResource(url=f"duckdb://{duck}").documented("customers")
