"""A suite as dbt data tests on a `sources:` table: dbt's own generic tests where a guardrail is
exactly one of them, and for every other guardrail the `cataloger_guardrail` generic test (the
macro file `GUARDRAIL_MACRO`), which runs the guardrail's stored statement as it is and fails when
its number leaves the band.

dbt renders the strings of a schema file with Jinja (but `meta`, which it reads as it is), so
names, values, descriptions and statements reach it through `jinja_text` (braces written as Jinja expressions that give the brace back): a column
named ``{{ x }}`` stays a name.  dbt's generic tests put a column name or a value into SQL without
escaping its quotes, so a guardrail on a name or value holding a quote or a brace goes through
`cataloger_guardrail`, whose statement ibis quoted.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Optional

import sqlglot
from sqlglot import exp

from cataloger_dagster.core.guardrails.model import Guardrail, GuardrailSuite

TEST_NAME = "cataloger_guardrail"
GUARDRAIL_MACRO = f"tests/generic/{TEST_NAME}.sql"  # inside the dbt project
MARK = "cataloger"  # the key of `meta` that marks what the catalog wrote

# characters dbt's generic tests would pass into SQL or Jinja as they are
_UNSAFE = re.compile(r"[\"'`{}\\%\x00-\x1f\x7f]")

MACRO_SQL = """\
{#- The catalog's guardrail: its stored statement, run as it is, returns one row whose first
    value `measured` must stay within [low, high]; a statement with no row measures NULL, which
    holds only for a count of breaking rows (measure `rows`).  `seconds` measures the time since
    the newest update the statement returns.  The test fails on the one row of a broken band. -#}
{% test cataloger_guardrail(model, sql, measure, low=none, high=none) %}
{%- set value -%}
{%- if measure == 'seconds' -%}
{{ dbt.datediff('guardrail.measured', dbt.current_timestamp(), 'second') }}
{%- else -%}
guardrail.measured
{%- endif -%}
{%- endset %}
select measured
from (
    select (select {{ value }} from ({{ sql }}) as guardrail limit 1) as measured
) as result
where
{%- if measure == 'rows' %} measured is not null and ({% else %} measured is null or ({% endif -%}
{%- if low is not none %} measured < {{ low }}{% endif -%}
{%- if low is not none and high is not none %} or{% endif -%}
{%- if high is not none %} measured > {{ high }}{% endif -%}
{%- if low is none and high is none %} 1 = 0{% endif %})
{% endtest %}
"""


def jinja_text(text: str) -> str:
    """`text` as a string dbt renders with Jinja back to `text` itself."""
    return re.sub(r"[{}]", lambda m: "{{ '" + m.group() + "' }}", text)


def source_name(database: str) -> str:
    """The dbt source of a database: its name as a dbt identifier (letters, digits, `_`)."""
    return re.sub(r"\W+", "_", database, flags=re.ASCII).strip("_") or "catalog"


def plain(name: str) -> bool:
    """A name or value dbt's own generic tests can carry into SQL as they are."""
    return not _UNSAFE.search(name)


def dbt_test_name(table: str, guardrail: str) -> str:
    """A name unique in the project and stable across runs, readable in dbt's output."""
    slug = re.sub(r"\W+", "_", f"{table}_{guardrail}", flags=re.ASCII).strip("_").lower()[:60]
    digest = hashlib.sha1(f"{table}\x00{guardrail}".encode()).hexdigest()[:8]
    return f"{MARK}_{slug}_{digest}"


def native(g: Guardrail, suite: GuardrailSuite) -> Optional[tuple[str, dict[str, Any]]]:
    """(dbt's generic test, its arguments) when `g` is exactly that test on one column; else None.

    A band of NULLs is no `not_null`, nor a tolerated count of repeats `unique`: only a guardrail
    that allows no breaking row at all maps to dbt's test of the same meaning."""
    if len(g.columns) != 1 or not plain(suite.table) or not plain(g.columns[0]) or g.low not in (None, 0):
        return None
    if g.kind == "null_rate" and g.high == 0:
        return "not_null", {}
    if g.kind == "unique" and g.high == 0 and g.measure == "rows":
        return "unique", {}
    if g.kind == "accepted_values" and g.high == 0:
        values = _accepted(g.sql)
        return ("accepted_values", {"values": values}) if values and all(map(plain, values)) else None
    if g.kind == "reference" and g.high == 0:
        target = _referenced(g.sql)
        if target and plain(target[0]) and plain(target[1]):
            to = f"source('{source_name(suite.database)}', '{target[0]}')"
            return "relationships", {"to": to, "field": target[1]}
    return None


def _accepted(sql: str) -> Optional[list[str]]:
    """The values of `col NOT IN (...)` in an accepted-values statement, all text literals."""
    try:
        tree = sqlglot.parse_one(sql)
    except sqlglot.errors.ParseError:
        return None
    lists = list(tree.find_all(exp.In))
    if len(lists) != 1 or not all(isinstance(v, exp.Literal) and v.is_string for v in lists[0].expressions):
        return None
    return [v.this for v in lists[0].expressions]


def _referenced(sql: str) -> Optional[tuple[str, str]]:
    """(table, column) an orphan statement looks its keys up in: the `_key` of `queries.orphans`."""
    try:
        tree = sqlglot.parse_one(sql)
    except sqlglot.errors.ParseError:
        return None
    keys = [a for a in tree.find_all(exp.Alias) if a.alias == "_key" and isinstance(a.this, exp.Column)]
    select = keys[0].find_ancestor(exp.Select) if len(keys) == 1 else None
    table = select.find(exp.Table) if select is not None else None
    return (table.name, keys[0].this.name) if table is not None else None


def dbt_test(suite: GuardrailSuite, g: Guardrail) -> tuple[Optional[str], dict[str, Any]]:
    """(the column it goes under, or None for the table; its YAML mapping) of one guardrail."""
    meta = {MARK: {"guardrail": g.name, "kind": g.kind}}  # dbt reads `meta` as it is, unrendered
    common = {"name": dbt_test_name(suite.table, g.name), "description": jinja_text(g.why)}
    found = native(g, suite)
    if found is not None:
        test, arguments = found
        body: dict[str, Any] = {**common, **({"arguments": arguments} if arguments else {})}
        return g.columns[0], {test: {**body, "config": {"meta": meta}}}
    arguments = {"sql": jinja_text(g.sql.rstrip().rstrip(";")), "measure": g.measure, "low": g.low, "high": g.high}
    return None, {TEST_NAME: {**common, "arguments": arguments, "config": {"meta": meta}}}


def suite_tests(suite: GuardrailSuite) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """(the table's tests, {column: its tests}) of a suite, in the suite's order."""
    table_tests: list[dict[str, Any]] = []
    by_column: dict[str, list[dict[str, Any]]] = {}
    for g in suite.guardrails:
        column, entry = dbt_test(suite, g)
        (table_tests if column is None else by_column.setdefault(column, [])).append(entry)
    return table_tests, by_column


def default_schema(dialect: str) -> str:
    return {"duckdb": "main", "postgres": "public"}.get(dialect, "public")
