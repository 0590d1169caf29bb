"""The SQL policy on its own: what it refuses (and says why), what it lets through, the limit."""

import pytest
import sqlglot
from sql_policy_cases import COMMON_REJECTED, DUCKDB_REJECTED, LEGITIMATE, POSTGRES_REJECTED, SMUGGLED

from cataloger_dagster.mcp.sql_policy import (_QUOTED_TOKENS, PolicyError, check_sql, dialect_of, quoted_spans,
                                              require_allowed)

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


# ---------------------------------------------------------------- text read two ways

ATTACK = SMUGGLED[0].format(t="t")


@pytest.mark.parametrize("dialect", ["postgres", "duckdb"])
def test_the_string_escape_smuggle_is_refused(dialect):
    """sqlglot reads E'\\\\' as one backslash and writes it back as e'\\': that text ends the
    string later than the parsed tree did, so it must never be sent."""
    decision = check_sql(ATTACK, dialect)
    assert not decision.allowed and decision.sql is None
    assert "exactly as written" in decision.reason, decision.reason


@pytest.mark.parametrize("dialect", ["postgres", "duckdb"])
@pytest.mark.parametrize("sql", SMUGGLED)
def test_text_read_two_ways_is_refused_or_sent_as_one_plain_query(dialect, sql):
    decision = check_sql(sql.format(t="smuggled"), dialect, row_limit=10)
    if not decision.allowed:
        assert "exactly as written" in decision.reason or "cannot be parsed" in decision.reason \
            or "exactly one statement" in decision.reason, decision.reason
        return
    text = decision.sql
    spans, problem = quoted_spans(text)
    assert problem is None, (text, problem)
    tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(text)
    assert spans == [(t.start, t.end) for t in tokens if t.token_type in _QUOTED_TOKENS], text
    # outside its quotes the text that runs holds one SELECT and nothing else
    outside = "".join(c for i, c in enumerate(text) if not any(a <= i <= b for a, b in spans))
    assert "CREATE" not in outside.upper() and ";" not in outside, text
    assert len(sqlglot.parse(text, read=dialect)) == 1


def test_the_database_rules_reader_sees_what_the_old_writing_would_have_run():
    """The second reader, on its own, catches the text sqlglot wrote back for the attack."""
    written_back = r"SELECT e'\', 'x; COMMIT; BEGIN READ WRITE; CREATE TABLE t (a int); COMMIT; SELECT 1 --'"
    assert quoted_spans(written_back)[1] == "a semicolon"
    assert quoted_spans("SELECT 1 /* x */")[1] == "a comment"
    assert quoted_spans("SELECT $x$a$x$")[1] == "a dollar quote or parameter"
    assert quoted_spans("SELECT 'a''b', \"c\"\"d\", e'\\'', 'x\\'")[1] is None


# ---------------------------------------------------------------- the row limit's forms

@pytest.mark.parametrize("dialect,sql", [
    ("duckdb", "SELECT i FROM t LIMIT 100 PERCENT"),
    ("duckdb", "SELECT i FROM t LIMIT 50 PERCENT"),
    ("duckdb", "SELECT i FROM t FETCH FIRST 500 ROWS ONLY"),
    ("postgres", "SELECT i FROM t FETCH FIRST 500 ROWS ONLY"),
    ("postgres", "SELECT i FROM t ORDER BY i OFFSET 5"),
    ("postgres", "SELECT i FROM t ORDER BY i LIMIT ALL"),
    ("postgres", "SELECT i FROM t ORDER BY i FETCH FIRST 5 ROWS WITH TIES"),
    ("duckdb", "SELECT i FROM t ORDER BY i LIMIT 500 OFFSET 5"),
    ("postgres", "SELECT g, count(*) FROM t GROUP BY ROLLUP (g)"),
])
def test_the_row_limit_holds_whatever_the_querys_own_limit(dialect, sql):
    text = check_sql(sql, dialect, row_limit=10).sql
    outer = sqlglot.parse_one(text, read=dialect)
    limit = outer.args.get("limit")
    assert isinstance(limit, sqlglot.exp.Limit) and int(limit.expression.this) <= 11, text
    assert "PERCENT" not in text or text.startswith("SELECT * FROM ("), text
    if "100 PERCENT" in sql:   # a limit that keeps every row, which DuckDB applies only after counting them
        assert "PERCENT" not in text
