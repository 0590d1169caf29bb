import ibis
import sqlglot

from cataloger_dagster.core.guardrails import queries as q

T = ibis.table({"id": "int64", 'we"ird': "string", "n": "float64"}, name="my table")


def test_each_query_compiles_for_every_backend_with_names_quoted():
    exprs = [
        q.row_count(T),
        q.null_share(T, 'we"ird'),
        q.repeated_values(T, "id"),
        q.breaking_rows(T, q.outside(T, 'we"ird', ["a", "b"])),
        q.breaking_rows(T, q.beyond(T, "n", 0, 10)),
        q.breaking_rows(T, q.padded(T, 'we"ird')),
        q.newest(T, "n"),
    ]
    for dialect in ("duckdb", "postgres", "mysql", "sqlite"):
        for expr in exprs:
            text = q.sql(expr, dialect)
            (statement,) = sqlglot.parse(text, read=dialect)  # one statement, however the names read
            assert statement.key == "select"
    assert '"we""ird"' in q.sql(q.null_share(T, 'we"ird'), "duckdb")


def test_the_keys_of_breaking_rows_come_in_order_and_few():
    text = q.sql(q.keys_of(T, T.n > 1, ["id"]), "duckdb")
    assert "ORDER BY" in text and f"LIMIT {q.KEYS_SHOWN}" in text
