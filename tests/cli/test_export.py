"""`cataloger export --to sql`: the guardrail suites of a real catalog run, as SQL files that run as
they are on the database they were built from, each statement's number inside its band."""

from __future__ import annotations

from pathlib import Path

import duckdb
from click.testing import CliRunner

from cataloged_shop import ODD
from cataloger_dagster.assets.guardrails import latest_suite
from cataloger_dagster.cli.app import main
from cataloger_dagster.core.layout import store_name
from cataloger_dagster.resources.store import LocalStore


def test_the_exported_statements_run_on_the_database_and_hold(cataloged_shop, tmp_path):
    database, store = cataloged_shop
    out = CliRunner().invoke(main, ["export", "--to", "sql", "events", ODD, "--out", str(tmp_path),
                                    "--database", f"duckdb://{database}", "--store", str(store)])
    assert out.exit_code == 0, out.output
    catalog = LocalStore(root=str(store))
    for table in ("events", ODD):
        text = (tmp_path / f"{store_name(table)}.guardrails.sql").read_text()
        blocks = [b for b in text.split("\n\n") if b.strip()][1:]  # the first is the file's header
        statements = ["\n".join(line for line in b.splitlines() if not line.startswith("--")) for b in blocks]
        suite = latest_suite(catalog, "shop.duckdb", table)
        assert len(statements) == len(suite.guardrails) > 3
        with duckdb.connect(str(database), read_only=True) as con:
            for g, statement in zip(suite.guardrails, statements):
                assert statement == g.sql.rstrip(";") + ";"  # what runs is what was stored
                if g.measure != "seconds":
                    value = con.execute(statement).fetchone()[0]
                    assert g.holds(None if value is None else float(value)), (g.name, value)


def test_gx_writes_each_table_s_expectation_suite_and_the_checkpoint_script_once(cataloged_shop, tmp_path):
    import json

    from cataloger_dagster.core.guardrails import export_gx

    database, store = cataloged_shop
    out = CliRunner().invoke(main, ["export", "--to", "gx", "events", ODD, "--out", str(tmp_path),
                                    "--database", f"duckdb://{database}", "--store", str(store)])
    assert out.exit_code == 0, out.output
    catalog = LocalStore(root=str(store))
    for table in ("events", ODD):
        document = json.loads((tmp_path / f"{store_name(table)}.gx_suite.json").read_text())
        suite = latest_suite(catalog, "shop.duckdb", table)
        assert [e["meta"]["cataloger"]["name"] for e in document["expectations"]] == [g.name for g in suite.guardrails]
        assert [e["description"] for e in document["expectations"]] == [g.why for g in suite.guardrails]
        assert document["meta"]["cataloger"]["table"] == table
    script = Path(export_gx.__file__).with_name("gx_checkpoint.py")
    assert (tmp_path / "gx_checkpoint.py").read_text() == script.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["gx_checkpoint.py", "events.gx_suite.json", f"{store_name(ODD)}.gx_suite.json"])


def test_a_table_the_catalog_never_ran_fails_in_one_line_and_the_others_are_written(cataloged_shop, tmp_path):
    database, store = cataloged_shop
    out = CliRunner().invoke(main, ["export", "--to", "sql", "nowhere", "customers", "--out", str(tmp_path),
                                    "--database", f"duckdb://{database}", "--store", str(store)])
    assert out.exit_code == 1
    assert "'nowhere': no catalog run has written guardrails yet" in out.output
    assert (tmp_path / "customers.guardrails.sql").exists()


def test_only_the_formats_it_writes_are_offered():
    out = CliRunner().invoke(main, ["export", "--to", "xlsx", "t"])
    assert out.exit_code == 2
    assert all(f"'{to}'" in out.output for to in ("sql", "soda", "dbt", "gx"))


def test_the_soda_export_writes_each_table_s_checks_and_one_configuration_without_a_secret(cataloged_shop, tmp_path):
    import yaml

    database, store = cataloged_shop
    args = ["export", "--to", "soda", "events", ODD, "--out", str(tmp_path),
            "--database", f"duckdb://{database}", "--store", str(store)]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    catalog = LocalStore(root=str(store))
    for table in ("events", ODD):
        (checks,) = yaml.safe_load((tmp_path / f"{store_name(table)}.checks.yml").read_text()).values()
        assert len(checks) == len(latest_suite(catalog, "shop.duckdb", table).guardrails) > 3
    configuration = yaml.safe_load((tmp_path / "configuration.yml").read_text())
    assert configuration == {"data_source shop_duckdb": {"type": "duckdb", "path": str(database.resolve()),
                                                         "read_only": True}}
    assert "soda scan -d shop_duckdb -c" in out.output
    (tmp_path / "configuration.yml").write_text("# edited\n")
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and "kept as it is" in again.output
    assert (tmp_path / "configuration.yml").read_text() == "# edited\n"
