"""`cataloger export --to dbt`: a real catalog run's guardrails and understanding as a dbt
project, fresh or merged into one a person keeps."""

from __future__ import annotations

from click.testing import CliRunner
from ruamel.yaml import YAML

from cataloged_shop import ODD
from cataloger_dagster.assets.guardrails import latest_suite
from cataloger_dagster.cli.app import main
from cataloger_dagster.core.guardrails.export_dbt import GUARDRAIL_MACRO, MACRO_SQL, jinja_text
from cataloger_dagster.core.layout import UNDERSTANDING, table_prefix
from cataloger_dagster.core.results import latest_results
from cataloger_dagster.resources.store import LocalStore


def _export(cataloged_shop, *args):
    database, store = cataloged_shop
    return CliRunner().invoke(main, ["export", "--to", "dbt", *args, "--database", f"duckdb://{database}",
                                     "--store", str(store)])


def test_without_a_project_it_writes_a_fresh_one_with_every_guardrail_and_description(cataloged_shop, tmp_path):
    database, store = cataloged_shop
    out = _export(cataloged_shop, "events", ODD, "--out", str(tmp_path))
    assert out.exit_code == 0, out.output
    assert "profile: cataloger" in (tmp_path / "dbt_project.yml").read_text()
    profile = (tmp_path / "profiles.yml").read_text()
    assert "type: duckdb" in profile and f'path: "{database}"' in profile
    assert (tmp_path / GUARDRAIL_MACRO).read_text() == MACRO_SQL
    source = YAML(typ="safe").load((tmp_path / "models" / "shop_duckdb_sources.yml").read_text())["sources"][0]
    assert source["name"] == "shop_duckdb" and source["schema"] == "main"
    catalog = LocalStore(root=str(store))
    for table in source["tables"]:
        raw = ODD if table["name"] == jinja_text(ODD) else table["name"]
        suite = latest_suite(catalog, "shop.duckdb", raw)
        tests = [*table.get("data_tests", []), *(t for c in table.get("columns", []) for t in c.get("data_tests", []))]
        marks = sorted(next(iter(t.values()))["config"]["meta"]["cataloger"]["guardrail"] for t in tests)
        assert marks == sorted(g.name for g in suite.guardrails) and len(marks) > 3
        ((_, understanding),) = latest_results(catalog, table_prefix("shop.duckdb", raw), UNDERSTANDING, limit=1)
        assert table["description"] == jinja_text(understanding.summary.description)
        described = {c["name"]: c.get("description") for c in table["columns"]}
        assert described == {jinja_text(c.name): jinja_text(c.description) for c in understanding.columns}
    assert {t["name"] for t in source["tables"]} == {"events", jinja_text(ODD)}


def test_with_a_project_it_merges_into_its_schema_file_and_keeps_the_rest(cataloged_shop, tmp_path):
    models = tmp_path / "models" / "staging"
    models.mkdir(parents=True)
    (tmp_path / "dbt_project.yml").write_text("name: theirs\n")
    mine = ("version: 2\nsources:\n  - name: shop_duckdb  # the shop\n    schema: main\n    tables:\n"
            "      - name: customers\n        description: Our customers.\n")
    (models / "shop.yml").write_text(mine)
    out = _export(cataloged_shop, "customers", "nowhere", "--project", str(tmp_path))
    assert out.exit_code == 1 and "'nowhere': no catalog run has written guardrails yet" in out.output
    assert (tmp_path / "dbt_project.yml").read_text() == "name: theirs\n" and not (tmp_path / "profiles.yml").exists()
    merged = (models / "shop.yml").read_text()
    assert merged.startswith(mine.replace("Our customers.\n", "Our customers.")) and "cataloger_guardrail" in merged
    assert not (tmp_path / "models" / "shop_duckdb_sources.yml").exists()
    again = _export(cataloged_shop, "customers", "--project", str(tmp_path))
    assert again.exit_code == 0 and (models / "shop.yml").read_text() == merged
