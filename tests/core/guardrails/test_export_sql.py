import sqlglot

from cataloger_dagster.core.guardrails.export_sql import suite_sql
from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite

HOSTILE = "x\n; DROP TABLE t; --"


def test_each_guardrail_is_one_statement_and_names_stay_inside_their_comments():
    suite = GuardrailSuite(database="d", table=HOSTILE, dialect="duckdb", built_at="r", guardrails=[
        Guardrail(name=f"null_rate:{HOSTILE}", kind="null_rate", sql="SELECT 0.5 AS measured", measure="share",
                  low=0.1, high=0.9, why=f"{HOSTILE} is NULL on half the rows."),
        Guardrail(name="row_count", kind="row_count", sql="SELECT 3;", measure="count", why="w"),
    ])
    text = suite_sql(suite)
    statements = [s for s in sqlglot.parse(text, read="duckdb") if s is not None]
    assert [s.sql(comments=False) for s in statements] == ["SELECT 0.5 AS measured", "SELECT 3"]
    assert "DROP" not in "".join(line for line in text.splitlines() if not line.startswith("--"))
    assert "-- null_rate:x\\x0a; DROP TABLE t; --: share >= 0.1 and <= 0.9" in text
    assert "-- row_count: count anything" in text
