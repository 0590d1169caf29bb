"""A suite as SodaCL: native Soda checks only where they measure what the catalog measures, the
catalog's own statement everywhere else, and names and values that stay data through YAML and
through the Jinja rendering Soda applies to its texts."""

import yaml
from jinja2.sandbox import SandboxedEnvironment

from cataloger_dagster.core.guardrails.export_soda import QUERY_RENDERS, number, suite_soda
from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite

HOSTILE = "we\"ird' {{ x }} %s $HOME ${HOME}\n; DROP TABLE t; --"


def _suite(table="orders", column="status"):
    sql = f'SELECT COUNT(*) AS "measured" FROM "{table}" WHERE "{column}" = \'${{HOME}} it\'\'s\''
    return GuardrailSuite(database="d", table=table, dialect="duckdb", built_at="r", guardrails=[
        Guardrail(name="row_count", kind="row_count", sql="SELECT 1", measure="count", low=200, high=600.5, why="rows"),
        Guardrail(name=f"unique:{column}", kind="unique", columns=[column], sql="SELECT 2", high=0, why="key"),
        Guardrail(name=f"null_rate:{column}", kind="null_rate", columns=[column], sql="SELECT 3", measure="share",
                  high=0, why=f"{column} never NULL"),
        Guardrail(name="null_rate:note", kind="null_rate", columns=["note"], sql="SELECT 4", measure="share",
                  low=0.00001, high=0.25, why="note sometimes NULL"),
        Guardrail(name="freshness:updated_at", kind="freshness", columns=["updated_at"], sql="SELECT 5",
                  measure="seconds", high=2 * 86400 + 3 * 3600 + 7 * 60 + 59, why="fresh"),
        Guardrail(name=f"accepted_values:{column}", kind="accepted_values", columns=[column], sql=sql, high=0,
                  why=f"{column} holds its values ${{HOME}} {{{{ x }}}}"),
    ])


def _checks(text):
    (header, checks), = yaml.safe_load(text).items()
    return header, [next(iter(c.items())) for c in checks]


def _rendered(text, times):
    """`text` after Soda's rendering: Jinja with `${ }` variables, only while it holds a `$`."""
    env = SandboxedEnvironment(variable_start_string="${", variable_end_string="}")
    for _ in range(times):
        if "$" in text:
            text = env.from_string(text).render(HOME="/root")
    return text


def test_native_checks_only_where_they_measure_what_the_guardrail_measures():
    header, checks = _checks(suite_soda(_suite()))
    assert header == "checks for orders"
    keys = [k for k, _ in checks]
    assert keys == [
        "row_count between 200 and 600.5",
        "duplicate_count(status) <= 0",
        "missing_count(status) = 0",
        "guardrail_4 between 0.00001 and 0.25",  # a share: Soda's missing_percent rounds it
        "freshness(updated_at) < 2d3h7m",  # whole minutes, rounded down
        "guardrail_6 <= 0",  # the values live in the statement only
    ]
    assert checks[3][1]["guardrail_4 query"] == "SELECT 4"
    assert [c["name"] for _, c in checks][:3] == ["rows", "key", "status never NULL"]


def test_a_guardrail_that_guards_a_finding_runs_the_catalog_s_statement():
    suite = _suite()
    suite.guardrails[2] = suite.guardrails[2].model_copy(update={"guards": "f1", "high": 0.1})
    suite.guardrails[0] = suite.guardrails[0].model_copy(update={"guards": "f2"})
    _, checks = _checks(suite_soda(suite))
    assert [k for k, _ in checks][:3] == ["guardrail_1 between 200 and 600.5", "duplicate_count(status) <= 0",
                                          "guardrail_3 <= 0.1"]


def test_hostile_names_run_only_through_the_catalog_s_quoted_statement_and_read_back_as_written():
    suite = _suite(table=HOSTILE, column=HOSTILE)
    header, checks = _checks(suite_soda(suite))
    assert header.startswith("checks for guardrails_of_we_ird_x_s_home_home_drop_table_t_")
    assert _checks(suite_soda(_suite(table=HOSTILE + " ")))[0] != header  # another name, another section
    assert all(k.startswith("guardrail_") for k, _ in checks[1:])  # only the row count needs no name
    key, body = checks[5]
    assert _rendered(body[key.split()[0] + " query"], QUERY_RENDERS) == suite.guardrails[5].sql
    assert _rendered(body["name"], 1) == "we\"ird' {{ x }} %s $HOME ${HOME}\\x0a; DROP TABLE t; -- holds its values ${HOME} {{ x }}"
    assert "\n" not in "".join(c["name"] for _, c in checks)


def test_text_without_a_dollar_is_written_as_it_is():
    suite = _suite(column="a {% raw %} b")
    _, checks = _checks(suite_soda(suite))
    assert checks[1][1]["name"] == "key" and checks[2][1]["name"] == "a {% raw %} b never NULL"


def test_bounds_are_plain_decimals():
    assert [number(v) for v in (0, 3.0, 1e-05, 0.1, 12345678901.5, -2.5)] == [
        "0", "3", "0.00001", "0.1", "12345678901.5", "-2.5"]
