"""run_sql's queries on real databases: the legitimate queries give what the database gives,
a refused statement never reaches it, and the connection itself stays read-only and bounded."""

from __future__ import annotations

import pytest
from sql_policy_cases import COMMON_REJECTED, DUCKDB_REJECTED, LEGITIMATE, POSTGRES_REJECTED

from cataloger_dagster.mcp.sql_policy import Decision
from cataloger_dagster.mcp.sql_run import QueryError, QueryRunner, _cell, run_query
from cataloger_dagster.resources.database.resource import DatabaseResource


def rows(raw) -> list[list]:
    return [[_cell(v) for v in row] for row in raw]


def _direct_duckdb(db: DatabaseResource, sql: str) -> list[list]:
    return rows(db.connect().con.execute(sql).fetchall())


def _direct_postgres(admin, sql: str) -> list[list]:
    return rows(admin.execute(sql).fetchall())


def _check_legitimate(runner: QueryRunner, direct) -> None:
    wrong = []
    for sql in LEGITIMATE:
        decision, result = run_query(runner, sql)
        if not decision.allowed:
            wrong.append(f"refused: {sql}: {decision.reason}")
        elif result["rows"] != direct(sql):
            wrong.append(f"differs: {sql}: {result['rows']} != {direct(sql)}")
        elif result["truncated"]:
            wrong.append(f"cut: {sql}")
    assert wrong == []


def test_legitimate_queries_give_the_databases_own_answer_on_duckdb(duck):
    _check_legitimate(QueryRunner(duck), lambda sql: _direct_duckdb(duck, sql))


@pytest.mark.postgres
def test_legitimate_queries_give_the_databases_own_answer_on_postgres(pg):
    db, admin = pg
    _check_legitimate(QueryRunner(db), lambda sql: _direct_postgres(admin, sql))


def test_every_adversarial_statement_is_refused_on_duckdb(duck):
    runner = QueryRunner(duck)
    for sql, why in COMMON_REJECTED + DUCKDB_REJECTED:
        decision, result = run_query(runner, sql)
        assert not decision.allowed and result is None, sql
        assert why.lower() in decision.reason.lower(), (sql, decision.reason)
    # and nothing changed: the tables and the sequence are as they were
    assert _direct_duckdb(duck, "SELECT count(*) FROM orders") == [[6]]
    assert _direct_duckdb(duck, "SELECT count(*) FROM duckdb_tables()") == [[2]]


@pytest.mark.postgres
def test_a_refused_statement_never_reaches_postgres(pg):
    db, admin = pg
    before = admin.execute("SELECT last_value, is_called FROM orders_id_seq").fetchone()
    runner = QueryRunner(db)
    for sql, why in COMMON_REJECTED + POSTGRES_REJECTED + [
        ("SELECT 1; SELECT setval('orders_id_seq', 100)", "exactly one statement"),
        ("SELECT 1 AS x WHERE nextval('orders_id_seq') > 0", "nextval"),
    ]:
        decision, result = run_query(runner, sql)
        assert not decision.allowed and result is None, sql
        assert why.lower() in decision.reason.lower(), (sql, decision.reason)
    # nextval would have moved the sequence even in a transaction rolled back: it did not run
    assert admin.execute("SELECT last_value, is_called FROM orders_id_seq").fetchone() == before
    assert admin.execute("SELECT count(*) FROM orders").fetchone() == (6,)


@pytest.mark.postgres
def test_postgres_refuses_a_write_that_got_past_the_policy(pg):
    """Defence in depth: a forged 'allowed' decision still meets a cursor (it holds only a
    query) in a read-only transaction, on a read-only role."""
    db, admin = pg
    for sql, why in [("DELETE FROM orders", "syntax error"),
                     ("WITH d AS (DELETE FROM orders RETURNING id) SELECT * FROM d", "read-only|data-modifying")]:
        with pytest.raises(QueryError, match=why):
            QueryRunner(db).run(Decision(True, "forged", "postgres", sql=sql, row_limit=10))
    assert admin.execute("SELECT count(*) FROM orders").fetchone() == (6,)


def test_duckdb_refuses_a_write_or_a_file_that_got_past_the_policy(duck, tmp_path):
    (tmp_path / "secret.csv").write_text("a\n1\n")
    runner = QueryRunner(duck)
    run_query(runner, "SELECT 1")  # the first query turns external access off
    for sql in ("DELETE FROM orders", f"SELECT * FROM read_csv('{tmp_path / 'secret.csv'}')"):
        with pytest.raises(QueryError, match="(?i)read-only|permission|disabled|not one SELECT"):
            runner.run(Decision(True, "forged", "duckdb", sql=sql, row_limit=10))
    assert _direct_duckdb(duck, "SELECT count(*) FROM orders") == [[6]]


def test_a_slow_query_is_stopped_on_duckdb(duck):
    runner = QueryRunner(duck, timeout_s=0.5)
    with pytest.raises(QueryError, match="longer than 0.5 s"):
        run_query(runner, "SELECT count(*) FROM range(100000000) a, range(100000) b")
    assert run_query(runner, "SELECT count(*) AS n FROM orders")[1]["rows"] == [[6]]  # still usable


@pytest.mark.postgres
def test_a_slow_query_is_stopped_on_postgres(pg):
    db, _ = pg
    runner = QueryRunner(db, timeout_s=0.5)
    with pytest.raises(QueryError, match="longer than 0.5 s"):
        run_query(runner, "SELECT count(*) FROM generate_series(1, 1000000000)")
    assert run_query(runner, "SELECT count(*) AS n FROM orders")[1]["rows"] == [[6]]


def test_the_row_limit_cuts_and_says_so(duck):
    result = run_query(QueryRunner(duck, row_limit=4), "SELECT id FROM orders ORDER BY id")[1]
    assert result["rows"] == [[1], [2], [3], [4]] and result["truncated"] and result["row_limit"] == 4


@pytest.mark.postgres
def test_an_error_names_no_password(pg, postgres_admin_url):
    db, _ = pg
    from cataloger_dagster.core.redaction import url_secrets

    with pytest.raises(QueryError) as caught:
        run_query(QueryRunner(db), "SELECT no_such_column FROM orders")
    assert "no_such_column" in str(caught.value)
    assert not any(secret in str(caught.value) for secret in url_secrets(postgres_admin_url))


def test_sqlite_runs_reads_and_stops_a_slow_query(tmp_path):
    import sqlite3

    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE orders (id INTEGER, amount REAL)")
        con.executemany("INSERT INTO orders VALUES (?, ?)", [(i, i * 1.5) for i in range(10)])
    db = DatabaseResource(url=f"sqlite://{path}")
    try:
        runner = QueryRunner(db, timeout_s=0.5)
        assert run_query(runner, "SELECT count(*) AS n, sum(amount) AS s FROM orders")[1]["rows"] == [[10, 67.5]]
        assert not run_query(runner, "SELECT load_extension('/tmp/x.so')")[0].allowed
        with pytest.raises(QueryError, match="longer than 0.5 s"):
            run_query(runner, "WITH RECURSIVE n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n) "
                              "SELECT count(*) FROM n")
        with pytest.raises(QueryError, match="readonly"):  # the file is opened read-only
            runner.run(Decision(True, "forged", "sqlite", sql="DELETE FROM orders", row_limit=10))
    finally:
        db.close()


@pytest.mark.postgres
def test_the_timeout_bounds_the_whole_call_not_each_fetch_on_postgres(pg):
    """Each row takes 0.2 s and the fetches take 1, 2 and 4 rows: each FETCH is within the
    1 s statement_timeout, the call as a whole (1.4 s) is not."""
    db, _ = pg
    runner = QueryRunner(db, timeout_s=1)
    with pytest.raises(QueryError, match="longer than 1 s"):
        runner.run(Decision(True, "forged", "postgres", sql="SELECT i, pg_sleep(0.2) FROM generate_series(1, 50) i",
                            row_limit=6))
    assert run_query(runner, "SELECT count(*) AS n FROM orders")[1]["rows"] == [[6]]
