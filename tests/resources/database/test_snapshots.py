"""database/snapshots.py: a read-only copy of a table (or a seeded sample) for the sandbox."""

import os

import duckdb
import ibis
import pytest

from cataloger_dagster.resources.database.errors import DatabaseError
from cataloger_dagster.resources.database.resource import DatabaseResource


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
