"""The writeback's connection: read-only unless told to write, and its errors never hold a
password."""

from __future__ import annotations

import duckdb
import pytest

from cataloger_dagster.resources.database.comments import CommentSession
from cataloger_dagster.resources.database.errors import DatabaseError


def test_without_writable_the_session_cannot_change_the_file(tmp_path, sha):
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t (a INTEGER)")
    before = sha(path)
    with CommentSession(f"duckdb://{path}", writable=False) as session:
        assert session.rows("SELECT count(*) FROM duckdb_tables() WHERE table_name = 't'") == [(1,)]
        with pytest.raises(DatabaseError, match="read-only: writing comments needs --apply"):
            session.execute(["COMMENT ON TABLE t IS 'x'"])
    assert sha(path) == before
    with CommentSession(f"duckdb://{path}", writable=True) as session:
        with pytest.raises(DatabaseError, match="cannot write comments to duckdb://"):
            session.execute(["COMMENT ON TABLE t IS 'x'", "COMMENT ON TABLE absent IS 'y'"])
        assert session.rows("SELECT comment FROM duckdb_tables() WHERE table_name = 't'") == [(None,)]  # all or none


def test_other_databases_and_unreachable_servers_fail_in_one_line_without_the_password(tmp_path):
    with pytest.raises(DatabaseError, match="DuckDB, PostgreSQL and MySQL/MariaDB only"):
        CommentSession(f"sqlite://{tmp_path}/x.sqlite", writable=False)
    with pytest.raises(DatabaseError) as caught:
        CommentSession("postgres://me:s3cret-pw@127.0.0.1:1/db", writable=False)
    assert "s3cret-pw" not in str(caught.value) and "cannot connect to postgres://me:***@127.0.0.1:1/db" in str(caught.value)
