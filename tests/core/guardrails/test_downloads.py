"""The files a table's page offers: the run's suite as SQL, Soda checks, a dbt schema file and a GX suite,
each the same as `cataloger export` writes, the dbt one carrying the understanding's descriptions,
and a hostile name as data in each."""

from __future__ import annotations

import json

import jinja2
import yaml
from guarded_shop import results_of

from cataloger_dagster.core.guardrails.build import build_suite
from cataloger_dagster.core.guardrails.dbt_schema import Descriptions
from cataloger_dagster.core.guardrails.downloads import DOWNLOADS, suite_files
from cataloger_dagster.core.guardrails.export_gx import suite_json
from cataloger_dagster.core.guardrails.export_soda import suite_soda
from cataloger_dagster.core.guardrails.export_sql import suite_sql
from cataloger_dagster.core.render.pages import LINK_LABELS

HOSTILE = "o'rders\n{{ 7 * 7 }} $x"


def _suite(path, table="orders"):
    con, results = results_of(path)
    suite = build_suite(con.table("orders"), results, tables={"customers": con.table("customers")})
    return suite.model_copy(update={"table": table})


def test_each_download_is_the_export_of_the_same_suite(shop):
    suite = _suite(shop)
    files = {d.key: (d.filename, text) for d, text in suite_files(suite)}
    assert files["guardrails_sql"] == ("guardrails.sql", suite_sql(suite))
    assert files["guardrails_soda"] == ("guardrails.soda.yml", suite_soda(suite))
    assert files["guardrails_gx"] == ("guardrails.gx_suite.json", suite_json(suite))
    assert len(json.loads(suite_json(suite))["expectations"]) == len(suite.guardrails)
    assert len({name for name, _ in files.values()}) == len(DOWNLOADS)
    assert all(d.key in LINK_LABELS for d in DOWNLOADS)  # each link has its words on the page


def test_the_dbt_file_declares_the_table_with_its_tests_and_descriptions(shop):
    suite = _suite(shop)
    described = Descriptions("Orders placed in the shop", [("status", "where the order is")])
    ((_, text),) = [(d, t) for d, t in suite_files(suite, described) if d.key == "guardrails_dbt"]
    (source,) = yaml.safe_load(text)["sources"]
    (table,) = source["tables"]
    assert table["name"] == "orders" and table["description"] == "Orders placed in the shop"
    columns = {c["name"]: c for c in table["columns"]}
    assert columns["status"]["description"] == "where the order is"
    tests = [t for c in table["columns"] for t in c.get("data_tests", c.get("tests", []))]
    tests += table.get("data_tests", table.get("tests", []))
    assert len(tests) == len(suite.guardrails) - len(suite.covered)


def test_a_hostile_table_name_stays_data_in_every_file(shop):
    suite = _suite(shop, HOSTILE)
    files = {d.key: text for d, text in suite_files(suite)}
    for key in ("guardrails_soda", "guardrails_dbt"):
        assert isinstance(yaml.safe_load(files[key]), dict), key  # one YAML document, the name a string in it
    (source,) = yaml.safe_load(files["guardrails_dbt"])["sources"]
    (table,) = source["tables"]
    assert jinja2.Template(table["name"]).render() == HOSTILE  # what dbt reads is the name, no template ran
    assert not [line for line in files["guardrails_sql"].splitlines() if line.startswith("{{ 7")]  # the newline cut no line
