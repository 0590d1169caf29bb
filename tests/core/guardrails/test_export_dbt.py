"""A suite as dbt data tests: dbt's own generic test only where a guardrail means exactly that,
the catalog's statement everywhere else, and every name, value and statement as data to dbt's
Jinja and to YAML."""

from __future__ import annotations

import io

import jinja2
from guarded_shop import results_of
from ruamel.yaml import YAML

from cataloger_dagster.core.guardrails.build import build_suite
from cataloger_dagster.core.guardrails.export_dbt import (
    MACRO_SQL,
    TEST_NAME,
    jinja_text,
    source_name,
    suite_tests,
    dbt_test,
)
from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite

HOSTILE = "q\"u'o {{ 7 * 7 }} {% if x %} {# c #} %(x)s $1 \\ \n:"


def _suite(path) -> GuardrailSuite:
    con, results = results_of(path)
    return build_suite(con.table("orders"), results, tables={"customers": con.table("customers")})


def _test(entry):
    ((test, body),) = entry.items()
    return test, body


def test_only_a_guardrail_that_allows_no_breaking_row_is_dbt_s_own_test(shop):
    suite = _suite(shop)
    named = {g.name: g for g in suite.guardrails}
    table_tests, by_column = suite_tests(suite)
    native = {(c, _test(e)[0]) for c, entries in by_column.items() for e in entries}
    assert {("order_id", "unique"), ("order_id", "not_null"), ("status", "accepted_values")} <= native
    status = next(_test(e)[1] for e in by_column["status"] if "accepted_values" in e)
    assert status["arguments"] == {"values": ["pending", "returned", "shipped"]}
    # the confirmed findings allow their level (plus a tenth): no dbt test says that
    assert {_test(e)[1]["config"]["meta"]["cataloger"]["guardrail"] for e in table_tests} >= {
        "row_count", "rule:total = subtotal + shipping", "reference:customer_id"}
    banded = named["null_rate:total"].model_copy(update={"high": 0.05})
    repeats = named["unique:order_id"].model_copy(update={"high": 1})
    for g in (banded, repeats):
        column, entry = dbt_test(suite, g)
        assert column is None and _test(entry)[0] == TEST_NAME
        assert _test(entry)[1]["arguments"]["sql"] == g.sql and _test(entry)[1]["arguments"]["high"] == g.high
    exact = named["reference:customer_id"].model_copy(update={"high": 0})
    column, entry = dbt_test(suite, exact)
    assert column == "customer_id" and _test(entry) [0] == "relationships"
    assert _test(entry)[1]["arguments"] == {"to": "source('shop', 'customers')", "field": "customer_id"}


def test_each_test_carries_its_reason_and_the_catalog_s_mark(shop):
    suite = _suite(shop)
    g = suite.named("rule:total = subtotal + shipping")
    column, entry = dbt_test(suite, g)
    test, body = _test(entry)
    assert body["description"] == g.why and body["config"]["meta"] == {"cataloger": {"guardrail": g.name,
                                                                                     "kind": "rule"}}
    assert body["arguments"] == {"sql": g.sql, "measure": "rows", "low": None, "high": 2}
    names = [_test(e)[1]["name"] for e in suite_tests(suite)[0]]
    assert len(set(names)) == len(names) and all(n.startswith("cataloger_orders_") for n in names)


def test_a_hostile_name_or_value_goes_through_the_catalog_s_own_statement():
    quoted = Guardrail(name=f"null_rate:{HOSTILE}", kind="null_rate", columns=[HOSTILE], high=0, measure="share",
                       sql=f'SELECT 0 AS measured FROM t WHERE "{HOSTILE}" IS NULL', why=f"{HOSTILE} is never NULL.")
    values = Guardrail(name="accepted_values:c", kind="accepted_values", columns=["c"], high=0,
                       sql="SELECT COUNT(*) AS measured FROM t WHERE c IS NOT NULL AND NOT c IN ('it''s', 'b')",
                       why="w")
    plain_table = GuardrailSuite(database="d", table="t", dialect="duckdb", built_at="r", guardrails=[quoted, values])
    odd_table = plain_table.model_copy(update={"table": HOSTILE})
    for suite in (plain_table, odd_table):
        for g in suite.guardrails:
            column, entry = dbt_test(suite, g)
            test, body = _test(entry)
            assert column is None and test == TEST_NAME
            assert jinja2.Environment().from_string(body["arguments"]["sql"]).render() == g.sql.rstrip(";")
            assert jinja2.Environment().from_string(body["description"]).render() == g.why
            assert body["config"]["meta"]["cataloger"]["guardrail"] == g.name  # meta: read unrendered


def test_jinja_gives_every_text_back_as_written_and_yaml_keeps_it():
    for text in (HOSTILE, "{{", "}}", "{%- raw %}", "a {{ '}' }} b", "{#", "plain"):
        escaped = jinja_text(text)
        assert jinja2.Environment().from_string(escaped).render() == text
        yaml, out = YAML(typ="rt"), io.StringIO()
        yaml.dump({"description": escaped}, out)
        assert YAML(typ="safe").load(out.getvalue()) == {"description": escaped}


def test_the_source_is_the_database_as_a_dbt_name():
    assert source_name("shop.duckdb") == "shop_duckdb"
    assert source_name("127.0.0.1_5432/db/public") == "127_0_0_1_5432_db_public"
    assert source_name("ÉÉ") == "catalog"


def test_the_guardrail_test_fails_outside_the_band_and_on_a_null_that_is_not_a_count():
    """The macro's SQL rendered by Jinja (dbt's own macros stood in for the seconds' case) and run
    on DuckDB: a row returned is a failing test."""
    import duckdb

    start = MACRO_SQL.index("%}", MACRO_SQL.index("{% test ")) + 2
    template = jinja2.Environment().from_string(MACRO_SQL[start:MACRO_SQL.index("{% endtest %}")])

    def fails(sql, measure, low=None, high=None) -> bool:
        rendered = template.render(sql=sql, measure=measure, low=low, high=high, none=None)
        return bool(duckdb.sql(rendered).fetchall())

    assert not fails("SELECT 2 AS measured", "rows", high=2) and fails("SELECT 3 AS measured", "rows", high=2)
    assert fails("SELECT 10 AS measured", "count", low=20, high=30) and not fails("SELECT 25 AS measured", "count",
                                                                                  low=20, high=30)
    assert not fails("SELECT NULL AS measured", "rows", high=0)  # no row to break it
    assert fails("SELECT NULL AS measured", "share", high=0.1)  # a share of no rows is not within a band
    assert not fails("SELECT 0.5 AS measured", "share")  # no band: anything holds
