"""What the backend cannot compute, computed in process: SQLite's quantiles, and the regex
pattern counts of a backend without regular expressions."""

from __future__ import annotations

import sqlite3

import duckdb
import ibis

from cataloger_dagster.core.models import Fingerprint
from cataloger_dagster.core.profile import local
from cataloger_dagster.core.profile.profiling import compute_profile


def fp(rows: int) -> Fingerprint:
    return Fingerprint(schema_hash="x", row_count=rows, value="x")


def test_sqlite_quantiles_of_a_big_table_come_from_a_sample_that_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "LOCAL_VALUES", 500)      # 2,000 rows x 2 columns: every 8th row
    path = tmp_path / "s.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x INTEGER, y REAL)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(i, i / 2) for i in range(2000)])
    con.commit()
    prof = compute_profile(ibis.sqlite.connect(path).table("t"), database="s", table_name="t", fingerprint=fp(2000))
    x = prof.column("x")
    assert abs(x.quantiles["p50"] - 1000) <= 20 and abs(x.quantiles["p95"] - 1900) <= 20
    assert any("systematic sample of every 8th row (250 of 2,000)" in n for n in x.notes), x.notes


def test_sqlite_quantiles_of_every_row_match_duckdb(tmp_path):
    rows = [(i * 7 % 101,) for i in range(300)]
    lite = sqlite3.connect(tmp_path / "q.sqlite")
    lite.execute("CREATE TABLE t (x INTEGER)")
    lite.executemany("INSERT INTO t VALUES (?)", rows)
    lite.commit()
    got = compute_profile(ibis.sqlite.connect(tmp_path / "q.sqlite").table("t"), database="s", table_name="t",
                          fingerprint=fp(300)).column("x")
    want = duckdb.sql("SELECT quantile_cont(x, [0.05, 0.25, 0.5, 0.75, 0.95]) FROM (SELECT unnest($1) AS x)",
                      params=[[r[0] for r in rows]]).fetchone()[0]
    assert list(got.quantiles.values()) == want
    assert "quantiles: computed in process (DuckDB) on all 300 rows; sqlite has no quantile function" in got.notes
