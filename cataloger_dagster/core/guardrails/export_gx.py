"""A suite as a Great Expectations 1.x expectation suite (JSON), which `gx_checkpoint.py` runs.

A guardrail becomes GX's own expectation where that expectation means exactly the guardrail: the
table's rows between bounds, a column never NULL or NULL on at most a share of its rows (`mostly`),
a key never repeated, a category's values, a number's bounds (gx_native.py).  Every other
guardrail runs the catalog's own statement through `UnexpectedRowsExpectation`: the statement's
row comes back, so the expectation fails, exactly when its number is outside the band.  Names and values are data: the statements quote them (ibis), and
the two characters GX and SQLAlchemy read in a query's text, braces (`str.format`) and a colon
before a word (a bind parameter), are escaped so that they reach the database as written.
"""

from __future__ import annotations

import json

import re
from typing import Any, Optional

import sqlglot

from cataloger_dagster.core.guardrails import gx_native
from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite

CONNECTION_ENV = "GX_CONNECTION_STRING"  # where the checkpoint script reads the database's URL
# SQLAlchemy's own pattern of a bind parameter in a text clause; `\:` keeps such a colon a colon
_BIND = re.compile(r"(?<![:\w\\]):(\w+)(?![:\w])")


def query_text(sql: str) -> str:
    """`sql` as GX's query text: braces doubled for `str.format`, bind-like colons escaped."""
    return _BIND.sub(r"\\:\1", sql.replace("{", "{{").replace("}", "}}"))


def batch_query(suite: GuardrailSuite) -> str:
    """The rows the checkpoint validates: the whole table, its name quoted in the suite's dialect.

    GX passes this text through SQLAlchemy more than once, which doubles each `%` each time (for
    psycopg2) and reads a `:name` as a parameter, with no escape that survives every pass.
    PostgreSQL spells those characters as Unicode escapes; another database cannot, so such a table
    is refused with a one-line reason."""
    if suite.dialect == "postgres":
        return "SELECT * FROM " + _postgres_escaped(suite.table)
    if _BIND.search(suite.table):
        raise ValueError(
            f"table {suite.table!r}: Great Expectations reads ':' before a word in a table's name as a "
            "query parameter; export it with --to sql, or rename the table"
        )
    return "SELECT * FROM " + sqlglot.exp.to_identifier(suite.table, quoted=True).sql(dialect=suite.dialect or None)


def _postgres_escaped(name: str) -> str:
    """`U&"..."`: the name with `%`, `:` and `\\` as their code points, `"` doubled."""
    spelled = "".join(f"\\{ord(c):04X}" if c in "%:\\" else '""' if c == '"' else c for c in name)
    return f'U&"{spelled}"'


def _number(value: float) -> str:
    return repr(float(value))


def _outside(g: Guardrail) -> str:
    """The condition on `m.cataloger_measured` under which the guardrail fails (`Guardrail.holds`)."""
    if g.measure == "seconds":  # the newest update, older than `high` seconds ago
        parts = (
            [f"m.cataloger_measured < CURRENT_TIMESTAMP - INTERVAL '{_number(g.high)} seconds'"]
            if g.high is not None
            else []
        )
    else:
        parts = [
            f"m.cataloger_measured {op} {_number(bound)}"
            for op, bound in (("<", g.low), (">", g.high))
            if bound is not None
        ]
    if g.measure == "rows":  # no row to break it: the guardrail holds
        return f"m.cataloger_measured IS NOT NULL AND ({' OR '.join(parts) or 'FALSE'})"
    return " OR ".join(["m.cataloger_measured IS NULL", *parts])


def unexpected_rows_query(g: Guardrail) -> str:
    """The guardrail's own statement, returning its one row when the number is outside the band.
    `{batch}` (which GX requires) names the validated rows in a clause that reads none of them; the
    statement's first value is `measured` whatever the statement calls it."""
    statement = query_text(g.sql.strip().rstrip(";"))
    return (
        "WITH cataloger_batch AS (SELECT 1 AS one FROM {batch}) "
        f"SELECT m.cataloger_measured FROM ({statement}) AS m(cataloger_measured) WHERE {_outside(g)}"
    )


def _native(g: Guardrail, dialect: Optional[str]) -> Optional[tuple[str, dict[str, Any]]]:
    """GX's own expectation that holds exactly when `g` does, or None."""
    values = gx_native.accepted_values(g, dialect)
    if values is not None:
        return "expect_column_values_to_be_in_set", {"column": g.columns[0], "value_set": values}
    between = gx_native.bounds(g, dialect)
    if between is not None:
        return "expect_column_values_to_be_between", {
            "column": g.columns[0],
            "min_value": between[0],
            "max_value": between[1],
        }
    if g.kind == "row_count" and g.measure == "count" and (g.low is not None or g.high is not None):
        bounds = {"min_value": g.low, "max_value": g.high}
        return "expect_table_row_count_to_be_between", {k: v for k, v in bounds.items() if v is not None}
    if g.kind == "null_rate" and g.measure == "share" and len(g.columns) == 1 and not g.low:
        if g.high is None or not 0 <= g.high < 1:
            return None
        kwargs: dict[str, Any] = {"column": g.columns[0]}
        if g.high > 0:  # NULL on at most `high` of the rows: present on at least the rest
            kwargs["mostly"] = 1 - g.high
        return "expect_column_values_to_not_be_null", kwargs
    if g.kind == "unique" and g.measure == "rows" and len(g.columns) == 1 and g.high == 0 and not g.low:
        return "expect_column_values_to_be_unique", {"column": g.columns[0]}
    return None


def expectation(g: Guardrail, dialect: Optional[str] = None) -> dict[str, Any]:
    native = _native(g, dialect)
    kind, kwargs = native or ("unexpected_rows_expectation", {"unexpected_rows_query": unexpected_rows_query(g)})
    facts = g.model_dump(include={"name", "kind", "columns", "measure", "low", "high", "guards", "pinned_by"})
    return {"type": kind, "kwargs": kwargs, "description": g.why, "meta": {"cataloger": facts}}


def suite_document(suite: GuardrailSuite) -> dict[str, Any]:
    """The GX expectation suite of `suite`, with what the checkpoint needs to find its rows."""
    return {
        "name": f"{suite.table}.guardrails",
        "expectations": [expectation(g, suite.dialect) for g in suite.guardrails],
        "meta": {
            "cataloger": {
                "database": suite.database,
                "table": suite.table,
                "dialect": suite.dialect,
                "version": suite.version,
                "built_at": suite.built_at,
                "batch_query": batch_query(suite),
            }
        },
    }


def suite_json(suite: GuardrailSuite) -> str:
    """The expectation suite as the file GX reads (`<table>.gx_suite.json`)."""
    return json.dumps(suite_document(suite), indent=2, ensure_ascii=False) + "\n"
