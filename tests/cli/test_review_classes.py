"""`cataloger review TABLE COLUMN --not-personal|--personal CLASS` over a real store: the verdict
lands in the table's review log, and the next profile run (Dagster, on a real DuckDB file)
classifies, tags and masks the column as the person said."""

from __future__ import annotations

import json

import dagster as dg
import pytest
from click.testing import CliRunner

from cataloger_dagster.cli import main
from cataloger_dagster.core.layout import PROFILE
from cataloger_dagster.jobs import TABLE_ASSETS
from cataloger_dagster.resources.store import LocalStore, table_prefix
from cataloger_dagster.settings.factories import resources
from personal_accounts import make_accounts

DB = "accounts.duckdb"


def profile_run(db, store) -> None:
    res = resources(database=f"duckdb://{db}", store=str(store), sandbox="local")
    with dg.instance_for_test() as inst:
        inst.add_dynamic_partitions("tables", ["accounts"])
        assert dg.materialize(TABLE_ASSETS[:1], partition_key="accounts", instance=inst, resources=res).success


def stored_profile(store) -> dict:
    local = LocalStore(root=str(store))
    prefix = table_prefix(DB, "accounts")
    return local.read_json(prefix, local.list_runs(prefix)[-1], PROFILE)


def classes(profile: dict) -> dict[str, list[str]]:
    return {c["name"]: [s["name"] for s in c["sensitive"]] for c in profile["columns"]}


@pytest.fixture(scope="module")
def accounts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("review_classes")
    db, store = make_accounts(tmp / DB), tmp / "store"
    profile_run(db, store)
    return {"db": db, "store": store}


def invoke(accounts, *args):
    env = {"CATALOGER_DATABASE": f"duckdb://{accounts['db']}", "CATALOGER_STORE": str(accounts["store"]),
           "CATALOGER_REVIEWER": None}
    return CliRunner().invoke(main, ["review", *args], env=env, catch_exceptions=False)


def test_verdicts_on_classes_change_the_next_classification(accounts):
    first = stored_profile(accounts["store"])
    assert classes(first)["customer_name"] == ["person_name"] and classes(first)["contact"] == []
    assert first["sample_rows"][0]["customer_name"] != "Acme Holdings"  # masked while it is a person's name

    out = invoke(accounts, "accounts", "customer_name", "--not-personal", "--reviewer", "ana",
                 "--note", "firms, not people", "--json")
    assert out.exit_code == 0, out.output
    (entry,) = json.loads(out.stdout)["reviews"]
    assert entry["verdict"] == "not_personal" and entry["data_class"]["data_class"] == "person_name"
    out = invoke(accounts, "accounts", "contact", "--personal", "person_name", "--reviewer", "ana")
    assert out.exit_code == 0 and "recorded:" in out.stdout and "personal" in out.stdout

    profile_run(accounts["db"], accounts["store"])
    second = stored_profile(accounts["store"])
    assert classes(second)["customer_name"] == [] and classes(second)["contact"] == ["person_name"]
    assert classes(second)["email"] == ["email"]
    row = second["sample_rows"][0]
    assert row["customer_name"] == "Acme Holdings"  # not masked any more: the reviewer's trade-off
    assert row["contact"] == "Xxx Xxxxxxxx"  # masked from now on
    added = next(c for c in second["columns"] if c["name"] == "contact")["sensitive"][0]
    assert (added["source"], added["reviewed"]) == ("review", True)


def test_listing_shows_class_verdicts_beside_finding_verdicts(accounts):
    data = json.loads(invoke(accounts, "accounts", "--list", "--json").stdout)
    assert "data-class:person_name:customer_name" in data["current"]


@pytest.mark.parametrize("args, message", [
    (["accounts", "nope", "--not-personal"], "table 'accounts' has no column 'nope'"),
    (["accounts", "id", "--not-personal"], "column 'id' of table 'accounts' holds no class"),
    (["accounts", "id", "--personal", "shoe_size"], "class 'shoe_size' is not one of email"),
])
def test_errors_name_the_column_or_class_and_exit_1(accounts, args, message):
    out = invoke(accounts, *args)
    assert out.exit_code == 1 and message in out.stderr


@pytest.mark.parametrize("args, message", [
    (["accounts", "id", "--not-personal", "--personal", "email"], "give one verdict, not --not-personal and --personal"),
    (["accounts", "id", "--accept", "--class", "email"], "--class goes with --not-personal"),
])
def test_usage_errors(accounts, args, message):
    out = invoke(accounts, *args)
    assert out.exit_code == 2 and message in out.output
