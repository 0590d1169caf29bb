"""A category's values and a number's bounds read back from the statements the pins build, in each
dialect and whatever the names hold; a statement the pins would not build reads as nothing."""

import ibis
import pytest

from cataloger_dagster.core.guardrails import queries as q
from cataloger_dagster.core.guardrails.gx_native import accepted_values, bounds
from cataloger_dagster.core.guardrails.model import Guardrail

COLUMN = 'sta"tus {0} :s %d\n$1'
TABLE = 'or"ders {x} 50%'


def _g(kind: str, sql: str, **kw) -> Guardrail:
    return Guardrail(**{"name": "n", "kind": kind, "columns": [COLUMN], "sql": sql, "high": 0, "why": "w", **kw})


@pytest.mark.parametrize("dialect, where", [("duckdb", {}), ("duckdb", {"catalog": "sh op", "database": "main"}),
                                           ("postgres", {"database": 'sch"ema'}), ("mysql", {})])
def test_the_values_and_bounds_of_a_pin_read_back_exactly(dialect, where):
    t = ibis.table({COLUMN: "string"}, name=TABLE, **where)
    values = ["it's", "pending", "{x}"]
    g = _g("accepted_values", q.sql(q.breaking_rows(t, q.outside(t, COLUMN, values)), dialect))
    assert accepted_values(g, dialect) == values
    n = ibis.table({COLUMN: "int64"}, name=TABLE, **where)
    g = _g("range", q.sql(q.breaking_rows(n, q.beyond(n, COLUMN, -38.900000000000006, 439.9)), dialect))
    assert bounds(g, dialect) == (-38.900000000000006, 439.9)


def test_a_statement_the_pins_would_not_build_reads_as_nothing():
    t = ibis.table({COLUMN: "string"}, name=TABLE)
    extra = q.outside(t, COLUMN, ["a"]) & (t[COLUMN] != "b")
    assert accepted_values(_g("accepted_values", q.sql(q.breaking_rows(t, extra), "duckdb")), "duckdb") is None
    assert accepted_values(_g("accepted_values", "SELECT 1 AS measured WHERE x IN ('a')"), "duckdb") is None
    assert bounds(_g("range", "SELECT COUNT(*) AS measured FROM t WHERE (x < 1) OR (x > 2) OR y"), "duckdb") is None


def test_a_band_other_than_none_breaking_stays_the_catalog_s_statement():
    n = ibis.table({COLUMN: "float64"}, name=TABLE)
    sql = q.sql(q.breaking_rows(n, q.beyond(n, COLUMN, 1.0, 2.0)), "duckdb")
    assert bounds(_g("range", sql), "duckdb") == (1.0, 2.0)
    assert bounds(_g("range", sql, high=3, guards="finding-1"), "duckdb") is None  # a finding's level
    t = ibis.table({COLUMN: "string"}, name=TABLE)
    sql = q.sql(q.breaking_rows(t, q.outside(t, COLUMN, ["a"])), "duckdb")
    assert accepted_values(_g("accepted_values", sql, high=2), "duckdb") is None
