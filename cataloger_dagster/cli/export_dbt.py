"""`cataloger export --to dbt`: each table's guardrails as dbt data tests and its understanding as
descriptions, merged into a dbt project's schema file (`--project`), or into a fresh project."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

import click
from ruamel.yaml import YAMLError

from cataloger_dagster.core.shown import visible


def export_dbt(tables: tuple[str, ...], out: Path, options: Mapping[str, Any], table_suite: Callable) -> int:
    """Write the project (`options`: the command's --project, --overwrite-descriptions and catalog
    options; `table_suite` reads a table's latest suite as every export does); the number of tables
    that failed, each said in one line."""
    from cataloger_dagster.core.guardrails.dbt_project import write_project
    from cataloger_dagster.core.guardrails.dbt_schema import Descriptions, TableExport
    from cataloger_dagster.core.guardrails.export_dbt import default_schema
    from cataloger_dagster.core.layout import UNDERSTANDING, table_prefix
    from cataloger_dagster.core.results import latest_results
    from cataloger_dagster.resources.database.connection import file_path, server_location
    from cataloger_dagster.resources.store import StoreError
    from cataloger_dagster.settings.factories import plain_database
    from cataloger_dagster.settings.model import load_settings

    database, name, store, project = options["database"], options["name"], options["store"], options["project"]
    failed, written, catalog, dialect = 0, [], None, ""
    for table in tables:
        have = table_suite(table, database, name, store)
        if have is None:
            failed += 1
            continue
        ctx, suite = have
        try:
            found = latest_results(ctx.store, table_prefix(ctx.database, table), UNDERSTANDING, limit=1)
        except (StoreError, ValueError) as exc:
            click.echo(visible(f"Error: {table!r}: {getattr(exc, 'message', exc)}"), err=True)
            failed += 1
            continue
        understanding = found[0][1] if found else None
        described = (
            Descriptions(understanding.summary.description, [(c.name, c.description) for c in understanding.columns])
            if understanding is not None
            else None
        )
        catalog, dialect = ctx.database, suite.dialect
        written.append(TableExport(table, suite, described))
    if catalog is None:
        return failed
    db = plain_database(load_settings(database=database, name=name, store=store))
    schema = server_location(db.url)[2] if db.scheme in ("postgres", "postgresql") else default_schema(dialect)
    target = str(file_path(db.url)) if db.scheme == "duckdb" else db.url
    folder = project or out
    try:
        path = write_project(
            folder,
            catalog,
            written,
            schema=schema or default_schema(dialect),
            overwrite_descriptions=options["overwrite_descriptions"],
            fresh=None if project else (db.scheme, target),
        )
    except (OSError, ValueError, YAMLError) as exc:  # a schema file it cannot read or a folder it cannot write
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        click.echo(
            visible(f"Error: the dbt project in {folder}: {first}; fix the file or give another --project"), err=True
        )
        return failed + len(written)
    for each in written:
        click.echo(visible(f"{each.table}: {len(each.suite.guardrails) if each.suite else 0} guardrails -> {path}"))
    if not project:
        click.echo(visible(f"dbt project in {folder}: fill profiles.yml, then `dbt test --profiles-dir {folder}`"))
    return failed
