"""run_sql against what an attacker sent through the MCP client, on a real DuckDB file and the
real PostgreSQL server: only the one checked SELECT runs, nothing it does outlives the call,
and a reply is bounded in rows and bytes whatever the query says."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
from sql_databases import drop_role, with_search_path
from sql_policy_cases import SMUGGLED

from cataloger_dagster.mcp.sql_policy import Decision
from cataloger_dagster.mcp.sql_run import MAX_TEXT, READER_ROLE_SQL, QueryError, QueryRunner, run_query
from cataloger_dagster.resources.database.resource import DatabaseResource

ROOT = Path(__file__).resolve().parents[2]
MB = 1_000_000


def forged(sql: str, dialect: str) -> Decision:
    """A decision the policy never made: what the connection alone does with `sql`."""
    return Decision(True, "forged", dialect, sql=sql, row_limit=10)


def _run_every_smuggle(runner: QueryRunner, table: str) -> list[str]:
    """Every smuggling text through run_sql; the replies it gave (refusals included)."""
    replies = []
    for sql in SMUGGLED:
        try:
            decision, result = run_query(runner, sql.format(t=table))
            replies.append(decision.reason if result is None else f"rows {result['rows']}")
        except QueryError as exc:   # allowed, then refused by the database: it ran nothing else
            replies.append(str(exc))
    return replies


# ---------------------------------------------------------------- DuckDB

def test_a_smuggled_set_never_runs_on_duckdb(duck):
    """The attack's DuckDB form: a smuggled SET memory_limit would fail every later call of
    every client.  The settings stay as they were, and the next query runs."""
    shared = duck.connect().con
    before = shared.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()
    runner = QueryRunner(duck)
    replies = _run_every_smuggle(runner, "smuggled")
    assert any("exactly as written" in r for r in replies), replies
    assert shared.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchone() == before
    assert run_query(runner, "SELECT count(*) AS n FROM orders")[1]["rows"] == [[6]]
    # and the smuggled text, forged past the policy, is refused by DuckDB's own reading of it
    with pytest.raises(QueryError, match="not one SELECT"):
        runner.run(forged(r"SELECT e'\', 'x; SET memory_limit=$$1MB$$; SELECT 1 --'", "duckdb"))


def test_a_duckdb_call_cannot_change_anything_for_the_next(duck, tmp_path):
    runner = QueryRunner(duck, duckdb_memory="256MB")
    for sql in ("SET memory_limit = '1MB'", "SELECT 1; SET memory_limit = '1MB'", "RESET ALL",
                "SET enable_external_access = true", "ATTACH ':memory:' AS other", "CHECKPOINT"):
        with pytest.raises(QueryError, match="not one SELECT|Can only SET or RESET"):
            runner.run(forged(sql, "duckdb"))
    # the call's own connection: settings locked, files and attachments refused
    con = runner.duckdb_connection()
    try:
        for sql in ("SET memory_limit = '1MB'", "SET threads = 1", "SET enable_external_access = true",
                    "RESET memory_limit"):
            with pytest.raises(Exception, match="(?i)locked"):
                con.execute(sql)
        with pytest.raises(Exception, match="(?i)disabled|permission"):
            con.execute(f"ATTACH '{tmp_path / 'other.duckdb'}' AS other")
        assert con.execute("SELECT count(*) FROM orders").fetchone() == (6,)   # read through the attachment
        with pytest.raises(Exception, match="(?i)read-only|read only"):
            con.execute("DELETE FROM orders")
    finally:
        con.close()
    limits = [runner.run(forged("SELECT current_setting('memory_limit') AS m", "duckdb"))["rows"] for _ in range(2)]
    assert limits[0] == limits[1] and limits[0][0][0].endswith("MiB") and not limits[0][0][0].startswith("0.")


def test_duckdb_refused_functions_never_run(duck):
    runner = QueryRunner(duck)
    for sql in ("SELECT * FROM query('SELECT 42')", "SELECT json_execute_serialized_sql('{}')",
                "SELECT current_setting('memory_limit')", "SELECT * FROM query_table('orders')"):
        decision, result = run_query(runner, sql)
        assert not decision.allowed and result is None and "is not allowed" in decision.reason, sql


def test_a_reply_stops_at_the_byte_limit_on_duckdb(duck):
    runner = QueryRunner(duck, byte_limit=8 * MB)
    result = run_query(runner, f"SELECT i, repeat('x', {MB}) AS s FROM range(100) t(i) ORDER BY i")[1]
    assert result["truncated"] and result["truncated_by"] == "bytes"
    assert 7 <= len(result["rows"]) <= 8 and result["bytes"] <= 9 * MB + 16
    assert [r[0] for r in result["rows"]] == list(range(len(result["rows"])))
    assert len(result["rows"][0][1]) == MAX_TEXT + len("…(cut)")


@pytest.mark.parametrize("limit", ["LIMIT 100 PERCENT", "LIMIT 20000000", "FETCH FIRST 20000000 ROWS ONLY",
                                   "OFFSET 5", "LIMIT 1000000 OFFSET 0"])
def test_the_row_cap_holds_whatever_the_limit_form_on_duckdb(duck, limit):
    """30M rows of 8 bytes are 240 MB: the call's instance has 64 MB and no disk to spill to, so
    a query that kept all the rows (a percentage is applied only after counting them) would fail,
    not answer.  The default row limit (1000) is larger than the 100 of the percentage."""
    runner = QueryRunner(duck, duckdb_memory="64MB")
    result = run_query(runner, f"SELECT range AS i FROM range(30000000) {limit}")[1]
    assert result["truncated"] and result["truncated_by"] == "rows" and len(result["rows"]) == 1000
    with pytest.raises(QueryError, match="Out of Memory"):   # what keeping them all does there
        runner.run(forged("SELECT range AS i FROM range(30000000) LIMIT 100 PERCENT", "duckdb"))


# ---------------------------------------------------------------- PostgreSQL

def _smuggled_tables(admin, schema: str) -> list[str]:
    return [r[0] for r in admin.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename LIKE 'smuggled%%'", (schema,))]


@pytest.mark.postgres
def test_a_smuggled_statement_never_runs_on_postgres(pg_superuser):
    """The attack itself, over the superuser URL it used (run_sql told to allow it): the
    smuggled COMMIT; BEGIN READ WRITE; CREATE TABLE never runs, in any quoting form."""
    db, admin = pg_superuser
    schema = db.url.rsplit("search_path%3D", 1)[1]
    runner = QueryRunner(db, allow_superuser=True)
    replies = _run_every_smuggle(runner, f"{schema}.smuggled")
    assert any("exactly as written" in r for r in replies), replies
    # the text sqlglot used to write back, forged past the policy: the extended protocol takes one statement
    for sql in (rf"SELECT e'\', 'x; COMMIT; BEGIN READ WRITE; CREATE TABLE {schema}.smuggled_f (a int); COMMIT; "
                "SELECT 1 --'",
                f"SELECT 1; COMMIT; BEGIN READ WRITE; CREATE TABLE {schema}.smuggled_g (a int); COMMIT"):
        with pytest.raises(QueryError):
            runner.run(forged(sql, "postgres"))
    assert _smuggled_tables(admin, schema) == []
    assert run_query(runner, "SELECT count(*) AS n FROM orders")[1]["rows"] == [[6]]


@pytest.mark.postgres
def test_backslashes_read_as_the_policy_reads_them_whatever_the_server_default(pg_superuser):
    """With standard_conforming_strings off, 'a\\' would not end where the policy ended it;
    run_sql sets it on for its transaction."""
    db, admin = pg_superuser
    schema = db.url.rsplit("search_path%3D", 1)[1]
    url = db.url.split("?", 1)[0] + "?options=" + quote(f"-csearch_path={schema} -cstandard_conforming_strings=off")
    off = DatabaseResource(url=url)
    try:
        runner = QueryRunner(off, allow_superuser=True)
        result = run_query(runner, r"SELECT 'a\' AS a, '; CREATE TABLE smuggled_scs (a int); --' AS b")[1]
        assert result["rows"] == [["a\\", "; CREATE TABLE smuggled_scs (a int); --"]]
    finally:
        off.close()
    assert _smuggled_tables(admin, schema) == []


@pytest.mark.postgres
def test_run_sql_refuses_a_superuser_or_file_reading_role(pg_superuser, postgres_admin_url):
    db, admin = pg_superuser
    with pytest.raises(QueryError, match="superuser.*--allow-superuser-sql"):
        run_query(QueryRunner(db), "SELECT count(*) AS n FROM orders")
    assert run_query(QueryRunner(db, allow_superuser=True), "SELECT count(*) AS n FROM orders")[1]["rows"] == [[6]]
    # not a superuser, but it may read the server's files: refused too
    schema = db.url.rsplit("search_path%3D", 1)[1]
    role, password = f"filer_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    try:
        admin.execute(f"GRANT pg_read_server_files TO {role}")
        admin.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
        url = with_search_path(re.sub(r"//[^@/]*@", f"//{role}:{password}@", postgres_admin_url), schema)
        filer = DatabaseResource(url=url)
        try:
            with pytest.raises(QueryError, match="read\\s+server files"):
                run_query(QueryRunner(filer), "SELECT count(*) AS n FROM orders")
        finally:
            filer.close()
    finally:
        drop_role(admin, role)


def test_the_cli_has_the_explicit_switch():
    from click.testing import CliRunner

    from cataloger_dagster.cli import main

    shown = CliRunner().invoke(main, ["mcp", "--help"]).output
    assert "--allow-superuser-sql" in shown and "--byte-limit" in shown


def test_security_md_shows_the_role_sql_the_tests_create():
    text = (ROOT / "SECURITY.md").read_text()
    shown = READER_ROLE_SQL.format(role="cataloger_reader", password="choose-a-password", database="mydb",
                                   schema="public")
    assert shown in text


@pytest.mark.postgres
def test_the_documented_role_reads_its_tables_and_nothing_more(pg):
    """`pg` connects as the role READER_ROLE_SQL creates; run_sql runs over it without any switch."""
    db, _ = pg
    runner = QueryRunner(db)
    assert run_query(runner, "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY status")[1][
        "rows"] == [["open", 1], ["paid", 3], ["shipped", 2]]
    settings = runner.run(forged("SELECT current_setting('default_transaction_read_only') AS ro, "
                                 "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS su", "postgres"))
    assert settings["rows"] == [["on", False]]
    for sql in ("SELECT pg_read_file('/etc/hostname')", "SELECT pg_stat_reset()",
                "SELECT * FROM pg_create_physical_replication_slot('cataloger_slot')",
                "SELECT lo_import('/etc/hostname')"):
        with pytest.raises(QueryError, match="(?i)permission denied|must be superuser|replication"):
            runner.run(forged(sql, "postgres"))


@pytest.mark.postgres
def test_server_changing_functions_never_run_on_postgres(pg_superuser):
    db, admin = pg_superuser
    runner = QueryRunner(db, allow_superuser=True)
    state = ("SELECT (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'), "
             "(SELECT count(*) FROM pg_replication_slots)")
    before = admin.execute(state).fetchone()
    for sql in ("SELECT pg_try_advisory_lock_shared(42)", "SELECT pg_advisory_lock_shared(43)",
                "SELECT * FROM pg_create_physical_replication_slot('cataloger_smuggled')", "SELECT pg_stat_reset()",
                "SELECT ts_stat('SELECT to_tsvector(pg_read_file(''/etc/hostname''))')",
                "SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, ''b''::tsquery')",
                "SELECT pg_read_file('/etc/hostname')", "SELECT lo_import('/etc/hostname')"):
        decision, result = run_query(runner, sql)
        assert not decision.allowed and result is None and "is not allowed" in decision.reason, sql
    assert admin.execute(state).fetchone() == before


@pytest.mark.postgres
def test_a_reply_stops_at_the_byte_limit_on_postgres(pg):
    db, _ = pg
    runner = QueryRunner(db, byte_limit=8 * MB)
    result = run_query(runner, f"SELECT i, repeat('x', {MB}) AS s FROM generate_series(0, 999) AS g(i) ORDER BY i")[1]
    assert result["truncated"] and result["truncated_by"] == "bytes"
    assert 7 <= len(result["rows"]) <= 8 and result["bytes"] <= 9 * MB + 16
    assert [r[0] for r in result["rows"]] == list(range(len(result["rows"])))


@pytest.mark.postgres
@pytest.mark.parametrize("limit", ["", "LIMIT ALL", "OFFSET 0", "FETCH FIRST 20000000 ROWS ONLY",
                                   "LIMIT 20000000 OFFSET 3"])
def test_the_row_cap_holds_whatever_the_limit_form_on_postgres(pg, limit):
    db, _ = pg
    runner = QueryRunner(db, row_limit=10, timeout_s=20)
    result = run_query(runner, f"SELECT generate_series(1, 30000000) AS i {limit}")[1]
    assert result["truncated"] and result["truncated_by"] == "rows" and len(result["rows"]) == 10


MYSQL_STREAMED = """
import json, resource, sys
from cataloger_dagster.mcp.sql_run import QueryRunner, run_query
from cataloger_dagster.resources.database.resource import DatabaseResource

runner = QueryRunner(DatabaseResource(url=sys.argv[1]), byte_limit=8 * 10**6, timeout_s=120)
run_query(runner, "SELECT 1 AS warm")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = run_query(runner, "WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50) "
                           "SELECT a.i * 100 + b.i AS k, REPEAT('x', 100000) AS s FROM n AS a, n AS b")[1]
grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"rows": len(result["rows"]), "by": result["truncated_by"], "grown_mb": grown_kb / 1024}))
"""


def test_a_reply_stops_at_the_byte_limit_on_mysql_without_holding_the_result(scratch):
    # 2,500 rows of 100 KB (250 MB): the reply stops at 8 MB, and the process never held the
    # whole result (a buffered cursor would receive all of it before the first fetch)
    import json
    import subprocess
    import sys

    import pyarrow as pa
    from backends import load_tables

    url = load_tables("mysql", {"t": pa.table({"a": [1]})}, scratch)
    out = subprocess.run([sys.executable, "-c", MYSQL_STREAMED, url], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    said = json.loads(out.stdout.splitlines()[-1])
    assert said["by"] == "bytes" and 70 <= said["rows"] <= 90, said
    assert said["grown_mb"] < 100, said
