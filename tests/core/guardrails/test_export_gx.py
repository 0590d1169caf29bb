"""The GX suite of a guardrail suite: GX's own expectation where it means exactly the guardrail,
the catalog's statement through `UnexpectedRowsExpectation` otherwise, and a query text that,
read as GX reads it (`str.format` for `{batch}`, then SQLAlchemy's text), is the stored statement
exactly, whatever the names hold.  The checkpoint run itself is tests/e2e/test_export_gx.py."""

from datetime import datetime, timedelta

import duckdb
import pytest
import sqlalchemy as sa

from cataloger_dagster.core.guardrails.export_gx import batch_query, expectation, suite_document, unexpected_rows_query
from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite

HOSTILE = 'we"ird {0} {batch} %s $1 :id\n}'


def _g(**kw) -> Guardrail:
    base = dict(name="n", kind="rule", sql="SELECT 1 AS measured", why="because")
    return Guardrail(**{**base, **kw})


def as_gx_reads(query: str) -> str:
    """What reaches the database: `{batch}` filled as GX fills it, then SQLAlchemy's text clause."""
    return str(sa.text(query.format(batch="(SELECT * FROM t) AS subselect")))


@pytest.mark.parametrize("g, kind, kwargs", [
    (_g(kind="row_count", measure="count", low=10, high=30), "expect_table_row_count_to_be_between",
     {"min_value": 10, "max_value": 30}),
    (_g(kind="null_rate", columns=["c"], measure="share", high=0), "expect_column_values_to_not_be_null",
     {"column": "c"}),
    (_g(kind="null_rate", columns=["c"], measure="share", high=0.25), "expect_column_values_to_not_be_null",
     {"column": "c", "mostly": 0.75}),
    (_g(kind="unique", columns=["id"], high=0), "expect_column_values_to_be_unique", {"column": "id"}),
])
def test_a_guardrail_gx_says_exactly_is_gx_s_own_expectation(g, kind, kwargs):
    made = expectation(g)
    assert (made["type"], made["kwargs"]) == (kind, kwargs)
    assert made["description"] == "because" and made["meta"]["cataloger"]["name"] == "n"


@pytest.mark.parametrize("g", [
    _g(kind="null_rate", columns=["c"], measure="share", low=0.1, high=0.3),  # a floor GX's `mostly` has not
    _g(kind="unique", columns=["id"], high=3, guards="f1"),  # a confirmed finding's level, not "never"
    _g(kind="accepted_values", columns=["s"], high=0),  # a statement the pins would not build (test_gx_native.py)
    _g(kind="pattern", columns=["e"], high=4),  # the catalog's regular expression, in the source's dialect
    _g(kind="freshness", columns=["t"], measure="seconds", high=60),
])
def test_any_other_guardrail_runs_its_own_statement(g):
    made = expectation(g)
    assert made["type"] == "unexpected_rows_expectation"
    assert f"FROM ({g.sql}) AS m(cataloger_measured) WHERE" in as_gx_reads(made["kwargs"]["unexpected_rows_query"])


@pytest.mark.parametrize("measure, low, high, measured", [
    ("rows", None, 0, 0), ("rows", None, 0, 3), ("rows", None, 2, 2), ("rows", None, 0, None),
    ("share", None, 0.2, 0.2), ("share", 0.1, 0.2, 0.05), ("share", None, 0.2, None),
    ("count", 10, 20, 9), ("count", 10, 20, 21), ("count", 10, None, 10**6),
])
def test_the_query_returns_a_row_exactly_when_the_guardrail_fails(measure, low, high, measured):
    value = "NULL" if measured is None else repr(float(measured))
    g = _g(sql=f"SELECT CAST({value} AS DOUBLE) AS n, 'other' AS measured FROM t LIMIT 1", measure=measure, low=low,
           high=high)  # the first value is the number, whatever its name
    with duckdb.connect() as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
        rows = con.execute(as_gx_reads(unexpected_rows_query(g))).fetchall()
    assert (rows == []) == g.holds(None if measured is None else float(measured))


@pytest.mark.parametrize("age, fails", [(timedelta(minutes=5), False), (timedelta(hours=2), True)])
def test_freshness_fails_when_the_newest_update_is_older_than_its_band(age, fails):
    newest = (datetime.now() - age).isoformat(sep=" ")
    g = _g(kind="freshness", sql=f"SELECT TIMESTAMP '{newest}' AS measured", measure="seconds", high=3600)
    with duckdb.connect() as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
        rows = con.execute(as_gx_reads(unexpected_rows_query(g))).fetchall()
    assert bool(rows) is fails


def test_names_reach_the_database_as_written_never_as_code():
    column = '"' + HOSTILE.replace('"', '""') + '"'
    g = _g(sql=f"SELECT COUNT(*) AS measured FROM t WHERE {column} = ':x {{1}}'", columns=[HOSTILE], high=0)
    read = as_gx_reads(unexpected_rows_query(g))
    assert f"FROM ({g.sql}) AS m(cataloger_measured) WHERE" in read
    with duckdb.connect() as con:
        con.execute(f"CREATE TABLE t ({column} VARCHAR)")
        con.execute("INSERT INTO t VALUES (':x {1}'), ('y')")
        assert con.execute(read).fetchall() == [(1,)]  # one row breaks it: the guardrail fails


def test_the_suite_reads_the_whole_table_by_its_quoted_name():
    suite = GuardrailSuite(database="d", table='sh"op {x} 50%', dialect="duckdb", built_at="r",
                           guardrails=[_g(kind="unique", columns=["id"], high=0)])
    document = suite_document(suite)
    assert document["meta"]["cataloger"]["batch_query"] == 'SELECT * FROM "sh""op {x} 50%"'
    assert document["meta"]["cataloger"]["table"] == suite.table and len(document["expectations"]) == 1


def test_on_postgresql_the_characters_sqlalchemy_reads_are_unicode_escapes_in_the_name():
    suite = GuardrailSuite(database="d", table='sh"op 50% \\ :archive', dialect="postgres", built_at="r")
    assert batch_query(suite) == 'SELECT * FROM U&"sh""op 50\\0025 \\005C \\003Aarchive"'


def test_a_table_name_gx_would_read_as_a_parameter_is_refused_in_one_line():
    suite = GuardrailSuite(database="d", table="orders :archive", dialect="duckdb", built_at="r")
    with pytest.raises(ValueError, match=r"^table 'orders :archive': Great Expectations reads ':'"):
        batch_query(suite)
