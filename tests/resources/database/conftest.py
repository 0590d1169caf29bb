"""The database resource's tests: a small DuckDB file of two tables."""

import hashlib

import duckdb
import pytest


@pytest.fixture
def duck(tmp_path):
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE orders AS SELECT range AS id, range % 7 AS qty, "
                    "TIMESTAMP '2024-01-01' + INTERVAL (range) MINUTE AS updated_at FROM range(5000)")
        con.execute("CREATE TABLE customers AS SELECT range AS id, 'c' || range AS name FROM range(30)")
    return path


@pytest.fixture
def sha():
    """The digest of a file: proof that reading a database left it as it was."""
    return lambda path: hashlib.sha256(path.read_bytes()).hexdigest()
