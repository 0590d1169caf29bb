"""`cataloger writeback` on a DuckDB file: the diff first, the script written and runnable twice,
the database touched only with --apply, a person's comment kept, one bad table never stopping
the others.  The last test runs on PostgreSQL and MariaDB too."""

from __future__ import annotations

import hashlib

import duckdb
import pytest
from click.testing import CliRunner

from commented_tables import (  # noqa: F401 - `commented`: the fixture
    DATABASE, DDL, HOSTILE, ODD_COLUMN, TABLE, commented, store_understanding, understanding,
)
from cataloger_dagster.core.writeback.session import read_comments
from cataloger_dagster.resources.database.comments import CommentSession
from cataloger_dagster.cli.app import main
from cataloger_dagster.resources.store import LocalStore


@pytest.fixture
def described(tmp_path):
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as con:
        for statement in DDL["duckdb"]:
            con.execute(statement)
    store = tmp_path / "store"
    store_understanding(LocalStore(root=str(store)), understanding())
    return path, store


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _writeback(path, store, *args):
    return CliRunner().invoke(main, ["writeback", *args, "--database", f"duckdb://{path}", "--name", DATABASE,
                                     "--store", str(store)])


def _comments(path):
    with duckdb.connect(str(path), read_only=True) as con:
        table = con.execute("SELECT comment FROM duckdb_tables()").fetchone()[0]
        return table, dict(con.execute("SELECT column_name, comment FROM duckdb_columns()").fetchall())


def test_without_apply_the_diff_and_script_are_written_and_the_database_is_not(described, tmp_path):
    path, store = described
    before = sha(path)
    out = _writeback(path, store, "--all", "--out", str(tmp_path / "c.sql"))
    assert out.exit_code == 0, out.output
    assert f"+++ {TABLE}.{ODD_COLUMN} (catalog)" in out.output
    assert out.output.index("+++") < out.output.index("3 comments to write")  # the diff comes first
    assert sha(path) == before
    script = (tmp_path / "c.sql").read_text()
    for _ in range(2):  # the script as a person runs it, twice
        with duckdb.connect(str(path)) as con:
            con.execute(script)
    table, columns = _comments(path)
    assert (table, columns["id"], columns[ODD_COLUMN]) == ("One row per order.", "The order's number.", HOSTILE)
    again = _writeback(path, store, TABLE, "--out", str(tmp_path / "c2.sql"))
    assert "no comments to write" in again.output and "+++" not in again.output  # the script it wrote is its own


def test_apply_writes_keeps_a_persons_comment_and_a_bad_table_fails_alone(described, tmp_path):
    path, store = described
    with duckdb.connect(str(path)) as con:
        con.execute(f"""COMMENT ON COLUMN "it's ""odd""; -- x".id IS 'Set by a person.'""")
    out = _writeback(path, store, "nowhere", TABLE, "--apply", "--out", str(tmp_path / "c.sql"))
    assert out.exit_code == 1
    assert "Error: 'nowhere': no catalog run has written an understanding yet; run `cataloger run` first" in out.output
    assert f"{TABLE}: 2 comments written, 1 kept (a person's)" in out.output
    assert _comments(path)[1]["id"] == "Set by a person."
    out = _writeback(path, store, TABLE, "--apply", "--overwrite", "--out", str(tmp_path / "c.sql"))
    assert out.exit_code == 0 and f"{TABLE}: 1 comment written" in out.output
    assert _comments(path)[1]["id"] == "The order's number."


def test_tables_or_all_must_be_given_and_all_needs_a_cataloged_table(described, tmp_path):
    assert CliRunner().invoke(main, ["writeback", "--database", "duckdb://x.duckdb"]).exit_code == 2
    path, _ = described
    out = _writeback(path, tmp_path / "empty", "--all")
    assert out.exit_code == 1 and "the catalog 'wb' holds no tables yet: run `cataloger run` first" in out.output


def test_on_each_database_only_apply_writes_and_a_second_run_has_nothing_to_write(commented, tmp_path):
    url, store = commented

    def run(*args):
        out = CliRunner().invoke(main, ["writeback", TABLE, "--out", str(tmp_path / "c.sql"), *args, "--database", url,
                                        "--name", DATABASE, "--store", str(store.root)])
        assert out.exit_code == 0, out.output
        with CommentSession(url, writable=False) as session:
            return out.output, read_comments(session, TABLE)

    output, comments = run()
    assert "3 comments to write" in output and comments.columns[ODD_COLUMN] is None
    output, comments = run("--apply")
    assert "3 comments written" in output and comments.columns[ODD_COLUMN] == HOSTILE
    output, _ = run("--apply")
    assert "no comments written" in output and "+++" not in output
