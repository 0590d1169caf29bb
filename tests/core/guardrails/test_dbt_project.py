"""The dbt project the export writes: its profile never holds a password, a path or name is data
in its YAML, and an existing project keeps its own files and schema file."""

from __future__ import annotations

import jinja2
import pytest
from ruamel.yaml import YAML

from cataloger_dagster.core.guardrails.dbt_project import PASSWORD_VARIABLE, profiles_yml, schema_file, write_project
from cataloger_dagster.core.guardrails.dbt_schema import Descriptions, TableExport
from cataloger_dagster.core.guardrails.export_dbt import GUARDRAIL_MACRO, MACRO_SQL


def _rendered(text: str) -> dict:
    """The profile as dbt reads it: YAML, then each string through Jinja (env_var left as it is)."""
    output = YAML(typ="safe").load(text)["cataloger"]["outputs"]["catalog"]
    env = jinja2.Environment()
    env.globals["env_var"] = lambda name: f"<{name}>"
    return {k: env.from_string(v).render() if isinstance(v, str) else v for k, v in output.items()}


def test_a_postgres_profile_reads_its_password_from_the_environment_and_never_holds_it():
    text = profiles_yml("postgres", "postgres://ana:s3cret%21@db.example:6543/sales?schema=x", "x")
    assert "s3cret" not in text
    assert _rendered(text) == {"type": "postgres", "host": "db.example", "port": 6543, "user": "ana",
                               "password": f"<{PASSWORD_VARIABLE}>", "dbname": "sales", "schema": "x",
                               "search_path": "x", "threads": 1}


def test_a_duckdb_path_is_data_in_the_profile():
    odd = '/data/a "b" {{ c }}\\d.duckdb'
    assert _rendered(profiles_yml("duckdb", odd, "main")) == {"type": "duckdb", "path": odd, "schema": "main"}


def test_an_existing_project_keeps_its_files_and_the_file_declaring_the_source_takes_the_tests(tmp_path):
    (tmp_path / "dbt_project.yml").write_text("name: theirs\n")
    theirs = tmp_path / "models" / "a" / "sources.yaml"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("version: 2\nsources:\n  - name: shop\n    tables: []\n")
    (tmp_path / "models" / "other.yml").write_text("version: 2\nmodels: []\n")
    assert schema_file(tmp_path, "shop") == theirs and schema_file(tmp_path, "elsewhere").name == "elsewhere_sources.yml"
    path = write_project(tmp_path, "shop", [TableExport("t", None, Descriptions("T."))], schema="main",
                         fresh=("duckdb", "/x.duckdb"))
    assert path == theirs and (tmp_path / "dbt_project.yml").read_text() == "name: theirs\n"
    assert not (tmp_path / "profiles.yml").exists() and (tmp_path / GUARDRAIL_MACRO).read_text() == MACRO_SQL
    assert YAML(typ="safe").load(theirs.read_text())["sources"][0]["tables"][0]["description"] == "T."


def test_a_schema_file_that_is_no_mapping_is_an_error_that_says_so(tmp_path):
    bad = tmp_path / "models" / "shop_sources.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text("- just\n- a list\n")
    with pytest.raises(ValueError, match="does not hold a mapping of dbt properties"):
        write_project(tmp_path, "shop", [TableExport("t")], schema="main")
