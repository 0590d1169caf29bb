"""A column's class of personal data investigated like any finding, through Dagster on a real
DuckDB file: the verdict is stored with the run's investigations, shown on the page's badge, and
a refuted class leaves the list of personal data while the column's values stay masked; the next
run learns it: the column's Dagster tags no longer carry the class."""

import json

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.core.layout import CATALOG_PAGE, INVESTIGATIONS, PROFILE
from cataloger_dagster.core.sensitive.hypotheses import hypothesis_id
from cataloger_dagster.definitions import TABLE_ASSETS
from cataloger_dagster.resources.store import LocalStore, table_prefix
from cataloger_dagster.settings.factories import resources
from tests.core.render.test_pages import parse

DB = "people.duckdb"
CLEAR = ("mail.example.org", "shop.example.net", "ORD-")  # what a value in clear would hold

# `email` holds an address in every row; `contact` in its first 200 rows only (what the classifier
# reads), an order reference after them
PEOPLE_SQL = """
CREATE TABLE people AS
  SELECT i AS id,
         'person' || i || '@mail.example.org' AS email,
         CASE WHEN i <= 200 THEN 'buyer' || i || '@shop.example.net' ELSE 'ORD-' || i END AS contact
  FROM range(1, 6001) t(i);
"""


@pytest.fixture(scope="module")
def cataloged(tmp_path_factory, local_sandbox_for_module):
    tmp = tmp_path_factory.mktemp("sensitive_investigations")
    db, store = tmp / DB, tmp / "store"
    with duckdb.connect(str(db)) as con:
        con.execute(PEOPLE_SQL)
    tags = []  # each run's column tags of the profile, {column: tags}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["people"])
        for _ in range(2):  # the first run refutes, the second learns it
            result = dg.materialize(
                TABLE_ASSETS, partition_key="people", instance=instance,
                resources=resources(database=f"duckdb://{db}", store=str(store), sandbox="local"),
                run_config={"ops": {"investigations": {"config": {"exploration_rate": 0.0}}}},
            )
            assert result.success
            [profiled] = result.asset_materializations_for_node("table_profile")
            schema = profiled.metadata["dagster/column_schema"].schema
            tags.append({c.name: dict(c.tags or {}) for c in schema.columns})
    local = LocalStore(root=str(store))
    prefix = table_prefix(DB, "people")
    run = local.list_runs(prefix)[-1]
    assert len(local.list_runs(prefix)) == 2
    return {
        "tags": tags,
        "db": db,
        "store": store,
        "investigations": json.loads(local.read_artifact(prefix, run, INVESTIGATIONS)),
        "profile": json.loads(local.read_artifact(prefix, run, PROFILE)),
        "page": local.read_artifact(prefix, run, CATALOG_PAGE).decode(),
    }


def test_the_verdict_is_stored_with_the_runs_investigations(cataloged):
    by_id = {i["issue_id"]: i for i in cataloged["investigations"]["investigations"]}
    real, changed = by_id[hypothesis_id("people", "email", "email")], by_id[hypothesis_id("people", "contact", "email")]
    assert real["verdict"] == "confirmed" and changed["verdict"] == "refuted"
    assert changed["evidence"]["sampled"] > 2000 and changed["evidence"]["valid"] < 0.1 * changed["evidence"]["sampled"]
    stored = json.dumps(cataloged["investigations"])
    assert not any(clear in stored for clear in CLEAR)


def test_the_page_badge_shows_the_verdict(cataloged):
    def column_of(node):
        while node is not None and "data-column" not in node.attrs:
            node = node.parent
        return node.attrs["data-column"] if node is not None else None

    badges = {(column_of(b), b.attrs["data-verdict"], b.text().strip())
              for b in parse(cataloged["page"]).root.find_all("span", cls="sensitive") if "data-verdict" in b.attrs}
    assert ("email", "confirmed", "e-mail · confirmed") in badges
    assert ("contact", "refuted", "e-mail refuted by its investigation") in badges


def test_a_refuted_class_leaves_the_list_and_its_values_stay_masked(cataloged, tmp_path):
    from click.testing import CliRunner

    from cataloger_dagster.cli import main

    env = {"CATALOGER_DATABASE": f"duckdb://{cataloged['db']}", "CATALOGER_STORE": str(cataloged["store"])}
    out = CliRunner().invoke(main, ["sensitive", "--json"], env=env, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert [(c["column"], c["classes"], c["verdict"]) for c in data["columns"]] == [("email", ["email"], "confirmed")]
    assert [(c["column"], c["classes"], c["refuted"], c["verdict"]) for c in data["refuted"]] == [
        ("contact", [], ["email"], "refuted")]
    # masked at profile time, and still masked in what this run stored: the verdict un-masks nothing
    contact = next(c for c in cataloged["profile"]["columns"] if c["name"] == "contact")
    assert [c["name"] for c in contact["sensitive"]] == ["email"] and contact["top_values"]
    for stored in (json.dumps(cataloged["profile"]), cataloged["page"]):
        assert not any(clear in stored for clear in CLEAR)


def test_the_next_run_learns_a_refuted_class_and_keeps_investigating_it(cataloged):
    first, second = cataloged["tags"]
    # before any investigation both columns carry the class the classifier found
    assert first["contact"] == first["email"] == {"pii": "", "sensitive/email": ""}
    # the next run's profile carries the refutation: the class leaves the column's tags
    assert second["email"] == {"pii": "", "sensitive/email": ""} and second["contact"] == {}
    contact = next(c for c in cataloged["profile"]["columns"] if c["name"] == "contact")
    assert [(c["name"], c["verdict"]) for c in contact["sensitive"]] == [("email", "refuted")]
    # still investigated (so a later confirming verdict can bring it back), still refuted
    by_id = {i["issue_id"]: i for i in cataloged["investigations"]["investigations"]}
    assert by_id[hypothesis_id("people", "contact", "email")]["verdict"] == "refuted"
