"""`cataloger sensitive [--json]` and the index's "where personal data lives", over real catalog
runs (the heuristic agent, the local sandbox) of a DuckDB file: the list before any review, then
after people corrected it and the table was cataloged again."""

from __future__ import annotations

import json
import shlex

import pytest
from click.testing import CliRunner

from cataloger_dagster.cli import main
from cataloger_dagster.core.layout import CATALOG_PAGE
from cataloger_dagster.resources.store import LocalStore, table_prefix
from personal_accounts import make_accounts
from tests.conftest import sandbox_problem, service_unavailable
from tests.core.render.test_pages import parse

DB = "accounts.duckdb"


def catalog(db, store, resume=None) -> None:
    from cataloger_dagster.cli.runner import catalog_database

    report = catalog_database(database=f"duckdb://{db}", store=str(store), agent="heuristic", sandbox="local",
                              tables=["accounts"], resume=resume)
    assert not report.failed, report.failed


def invoke(env, *args):
    out = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return out


def page_command(store, column: str) -> list[str]:
    """The page's command saying ``column`` is not personal data, as a reader copies it."""
    local = LocalStore(root=str(store))
    prefix = table_prefix(DB, "accounts")
    html = local.read_artifact(prefix, local.list_runs(prefix)[-1], CATALOG_PAGE).decode()
    [row] = [r for r in parse(html).root.find_all("tr") if r.attrs.get("data-column") == column]
    [code] = row.find_all("code", cls="personal-review-command")
    return shlex.split(code.text())


def personal_section(store) -> list[tuple[str, str, list[str]]]:
    html = LocalStore(root=str(store)).read_index(DB)
    [section] = parse(html).root.find_all("section", id="personal-data")
    rows = [r for r in section.find_all("tr") if "data-personal-table" in r.attrs]
    return [(r.attrs["data-personal-table"], r.attrs["data-personal-column"],
             [c.text().strip() for c in r.find_all("td")][2:]) for r in rows]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    problem = sandbox_problem("local")
    if problem:
        service_unavailable(problem)
    tmp = tmp_path_factory.mktemp("sensitive_cli")
    db, store = make_accounts(tmp / DB), tmp / "store"
    env = {"CATALOGER_DATABASE": f"duckdb://{db}", "CATALOGER_STORE": str(store), "CATALOGER_REVIEWER": "ana"}
    catalog(db, store)
    before = json.loads(invoke(env, "sensitive", "--json").stdout)
    before_text = invoke(env, "sensitive").stdout
    before_index = personal_section(store)
    command = page_command(store, "customer_name")
    assert command[:3] == ["cataloger", "review", "--not-personal"]
    invoke(env, *command[1:])  # pasted from the page
    invoke(env, "review", "accounts", "contact", "--personal", "person_name")
    invoke(env, "review", "accounts", "email", "--personal", "email")
    catalog(db, store, resume=False)
    after = json.loads(invoke(env, "sensitive", "--json").stdout)
    return {"before": before, "before_text": before_text, "before_index": before_index, "after": after,
            "after_index": personal_section(store)}


def test_the_list_says_where_personal_data_lives_with_its_share_and_no_value(runs):
    data = runs["before"]
    assert (data["database"], data["tables_read"], data["left_out"]) == (DB, 1, [])
    assert data["columns"] == [
        {"table": "accounts", "column": "customer_name", "classes": ["person_name"], "share": 0.7, "reviewed": False,
         "verdict": "confirmed", "refuted": []},
        {"table": "accounts", "column": "email", "classes": ["email"], "share": 1.0, "reviewed": False,
         "verdict": "confirmed", "refuted": []},
    ]
    assert data["refuted"] == []
    text = runs["before_text"]
    assert "2 column(s) of 1 cataloged table(s) hold personal data" in text
    assert "accounts.customer_name: person name (70% of its sample, confirmed by its investigation)" in text
    assert "accounts.email: e-mail (100% of its sample, confirmed by its investigation)" in text
    assert "@example.org" not in text and "Acme" not in text


def test_reviews_correct_the_list_on_the_next_run(runs):
    assert runs["after"]["columns"] == [
        {"table": "accounts", "column": "contact", "classes": ["person_name"], "share": None, "reviewed": True,
         "verdict": None, "refuted": []},
        {"table": "accounts", "column": "email", "classes": ["email"], "share": 1.0, "reviewed": True,
         "verdict": "confirmed", "refuted": []},
    ]


def test_the_index_lists_the_same_columns(runs):
    assert runs["before_index"] == [("accounts", "customer_name", ["person name", "70%", "no"]),
                                    ("accounts", "email", ["e-mail", "100%", "no"])]
    assert runs["after_index"] == [("accounts", "contact", ["person name", "—", "yes"]),
                                   ("accounts", "email", ["e-mail", "100%", "yes"])]
