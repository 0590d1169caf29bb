"""The SQL policy on its own: what it refuses (and says why), what it lets through, the limit."""

import pytest
import sqlglot
from sql_policy_cases import COMMON_REJECTED, DUCKDB_REJECTED, LEGITIMATE, POSTGRES_REJECTED

from cataloger_dagster.mcp.sql_policy import PolicyError, check_sql, dialect_of, require_allowed

REJECTED = ([("duckdb", sql, why) for sql, why in COMMON_REJECTED + DUCKDB_REJECTED]
            + [("postgres", sql, why) for sql, why in COMMON_REJECTED + POSTGRES_REJECTED])


def test_the_suite_is_as_large_as_promised():
    assert len(COMMON_REJECTED + DUCKDB_REJECTED) >= 40
    assert len(COMMON_REJECTED + POSTGRES_REJECTED) >= 40
    assert len(LEGITIMATE) >= 20


@pytest.mark.parametrize("dialect,sql,why", REJECTED)
def test_a_dangerous_statement_is_refused_with_its_reason(dialect, sql, why):
    decision = check_sql(sql, dialect)
    assert not decision.allowed
    assert decision.sql is None  # nothing to run
    assert why.lower() in decision.reason.lower(), decision.reason
    with pytest.raises(PolicyError, match="(?i)" + why.split()[0]):
        require_allowed(sql, dialect)


@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
@pytest.mark.parametrize("sql", LEGITIMATE)
def test_an_analytical_query_passes_with_a_limit(dialect, sql):
    decision = check_sql(sql, dialect, row_limit=50)
    assert decision.allowed, decision.reason
    # what runs is a re-reading of the checked tree: one query, with a limit of 51 at most
    again = sqlglot.parse(decision.sql, read=dialect)
    assert len(again) == 1
    limit = again[0].args.get("limit")
    assert limit is not None and int(limit.expression.this) <= 51
    assert "--" not in decision.sql and "/*" not in decision.sql  # comments do not travel


def test_the_row_limit_lowers_a_larger_limit_and_keeps_a_smaller_one():
    assert check_sql("SELECT * FROM t LIMIT 5", "duckdb", row_limit=10).sql.endswith("LIMIT 5")
    assert check_sql("SELECT * FROM t LIMIT 500", "duckdb", row_limit=10).sql.endswith("LIMIT 11")
    union = check_sql("SELECT 1 AS a UNION ALL SELECT 2", "postgres", row_limit=10).sql
    assert union.startswith("SELECT * FROM (") and union.endswith("LIMIT 11")


def test_a_dml_word_inside_a_string_or_a_comment_is_data():
    decision = check_sql("SELECT 'DELETE FROM t; DROP TABLE t' AS s -- DROP TABLE t", "postgres")
    assert decision.allowed
    assert "DELETE FROM t; DROP TABLE t" in decision.sql and "-- DROP" not in decision.sql


def test_the_dialect_follows_the_url_scheme():
    assert [dialect_of(s) for s in ("duckdb", "postgresql", "postgres", "sqlite", "mariadb")] == [
        "duckdb", "postgres", "postgres", "sqlite", "mysql"]


@pytest.mark.parametrize("sql,why", [
    ("SELECT load_extension('/tmp/evil.so')", "load_extension"),
    ("ATTACH DATABASE '/tmp/other.db' AS other", "ATTACH"),
    ("PRAGMA writable_schema = 1", "PRAGMA"),
])
def test_sqlite_dangers(sql, why):
    decision = check_sql(sql, "sqlite")
    assert not decision.allowed and why.lower() in decision.reason.lower()


@pytest.mark.parametrize("sql,why", [
    ("SELECT LOAD_FILE('/etc/passwd')", "load_file"),
    ("SELECT * FROM orders INTO OUTFILE '/tmp/x'", "parsed"),
    ("SELECT SLEEP(100)", "sleep"),
    ("SELECT BENCHMARK(100000000, MD5('a'))", "benchmark"),
    ("LOAD DATA INFILE '/etc/passwd' INTO TABLE orders", "parsed"),
])
def test_mysql_dangers(sql, why):
    decision = check_sql(sql, "mysql")
    assert not decision.allowed and why.lower() in decision.reason.lower(), decision.reason


def test_a_query_sqlglot_cannot_write_back_faithfully_is_refused():
    """SQLite's generator drops a CTE's column list: running that would change the query."""
    decision = check_sql("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) "
                         "SELECT sum(i) FROM n", "sqlite")
    assert not decision.allowed and "exactly as written" in decision.reason
