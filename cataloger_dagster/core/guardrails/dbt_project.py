"""The files of a dbt project the guardrails run in: the `cataloger_guardrail` test, the schema
file each table's tests and descriptions merge into, and, for a fresh project, `dbt_project.yml`
and a `profiles.yml` for the user to fill (never a password: dbt reads it from the environment).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence
from urllib.parse import unquote, urlsplit

from cataloger_dagster.core.guardrails import dbt_schema
from cataloger_dagster.core.guardrails.export_dbt import GUARDRAIL_MACRO, MACRO_SQL, jinja_text, source_name

PROFILE = "cataloger"
PASSWORD_VARIABLE = "CATALOGER_DBT_PASSWORD"

PROJECT_YML = f"""\
# A dbt project for the guardrails `cataloger export --to dbt` writes: run `dbt test` here.
name: cataloger_guardrails
version: "1.0.0"
config-version: 2
profile: {PROFILE}
model-paths: ["models"]
test-paths: ["tests"]
"""


def profiles_yml(scheme: str, url: str, schema: str) -> str:
    """A profile for the database: a DuckDB file's path, or a PostgreSQL server's address with
    the password read from the environment; another backend's type left for the user to fill."""
    head = f"{PROFILE}:\n  target: catalog\n  outputs:\n    catalog:\n"
    if scheme == "duckdb":
        path = url.split("://", 1)[-1] or ":memory:"
        return head + f"      type: duckdb\n      path: {_quoted(path)}\n      schema: {_quoted(schema)}\n"
    if scheme in ("postgres", "postgresql"):
        parts = urlsplit(url)
        return head + (
            "      type: postgres\n"
            f"      host: {_quoted(parts.hostname or 'localhost')}\n"
            f"      port: {parts.port or 5432}\n"
            f"      user: {_quoted(unquote(parts.username or ''))}\n"
            f"      password: \"{{{{ env_var('{PASSWORD_VARIABLE}') }}}}\"\n"
            f"      dbname: {_quoted(unquote(parts.path.lstrip('/')))}\n"
            f"      schema: {_quoted(schema)}\n"
            f"      search_path: {_quoted(schema)}  # the guardrails' statements name their tables unqualified\n"
            "      threads: 1\n"
        )
    return head + f"      type: {scheme}  # fill in this adapter's settings\n"


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar holding `text` as it is (dbt reads the profile with Jinja:
    braces stay braces)."""
    escaped = jinja_text(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c >= " " else f"\\x{ord(c):02x}" for c in escaped) + '"'


def schema_file(project: Path, database: str) -> Path:
    """The schema file of the project that declares the database's source, else a new one."""
    models = project / "models"
    for path in sorted([*models.rglob("*.yml"), *models.rglob("*.yaml")]) if models.is_dir() else []:
        try:
            data, _ = dbt_schema.load(path.read_text(encoding="utf-8"))
        except Exception:  # noqa: BLE001 - a file it cannot read is not the one it writes
            continue
        if dbt_schema.declares(data, database):
            return path
    return models / f"{source_name(database)}_sources.yml"


def write_project(
    project: Path,
    database: str,
    tables: Sequence[dbt_schema.TableExport],
    *,
    schema: str,
    overwrite_descriptions: bool = False,
    fresh: Optional[tuple[str, str]] = None,
) -> Path:
    """Merge each table's tests and descriptions into the project's schema file and write the
    guardrail test; `fresh` = (scheme, url) also writes a project and a profile where none is."""
    project.mkdir(parents=True, exist_ok=True)
    if fresh is not None and not (project / "dbt_project.yml").exists():
        (project / "dbt_project.yml").write_text(PROJECT_YML, encoding="utf-8")
        (project / "profiles.yml").write_text(profiles_yml(fresh[0], fresh[1], schema), encoding="utf-8")
    macro = project / GUARDRAIL_MACRO
    macro.parent.mkdir(parents=True, exist_ok=True)
    macro.write_text(MACRO_SQL, encoding="utf-8")
    path = schema_file(project, database)
    try:
        data, yaml = dbt_schema.load(path.read_text(encoding="utf-8") if path.exists() else "")
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    for table in tables:
        dbt_schema.merge(data, database, schema, table, overwrite_descriptions=overwrite_descriptions)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dbt_schema.dump(data, yaml), encoding="utf-8")
    return path
