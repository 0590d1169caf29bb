"""`cataloger export --to sql|soda|dbt|gx TABLE...`: the tables' guardrail suites, as their latest
catalog runs wrote them, into files a person or another tool runs.  Reads the store only.

`--to gx` writes each table's Great Expectations suite (`<table>.gx_suite.json`) and, once, the
checkpoint script that runs them (`gx_checkpoint.py`, core/guardrails/gx_checkpoint.py as it is)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cataloger_dagster.cli.options import catalog_options, examples
from cataloger_dagster.core.shown import visible

FORMATS = ("sql", "soda", "dbt", "gx")
# each table's file: `<table>.<suffix>`
SUFFIXES = {"sql": "guardrails.sql", "soda": "checks.yml", "gx": "gx_suite.json"}


@click.command(
    "export",
    epilog=examples(
        "cataloger export --to sql orders customers --database duckdb://shop.duckdb",
        "cataloger export --to sql orders --out guardrails/ --name shop",
        "cataloger export --to soda orders --out soda/ --database duckdb://shop.duckdb  # then: soda scan -d shop_duckdb -c soda/configuration.yml soda/orders.checks.yml",
        "cataloger export --to dbt orders customers --project my_dbt_project --name shop",
        "cataloger export --to gx orders --out gx/ --name shop  # then: GX_CONNECTION_STRING=... python gx/gx_checkpoint.py gx/*.gx_suite.json",
    ),
)
@click.option("--to", "to", type=click.Choice(FORMATS), required=True, help="the format to write")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="the folder the files go to",
)
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="dbt: the dbt project whose schema file the tests and descriptions merge into (else a fresh one in --out)",
)
@click.option(
    "--overwrite-descriptions",
    is_flag=True,
    help="dbt: replace the descriptions a person wrote too (they are kept otherwise)",
)
@click.argument("tables", nargs=-1, required=True)
@catalog_options
def export(to: str, out: Path, tables: tuple[str, ...], **options) -> None:
    """Write each TABLE's guardrail suite: `<table>.guardrails.sql` (sql), `<table>.checks.yml`
    and Soda's `configuration.yml` (soda), data tests and descriptions in a dbt project's
    schema file (dbt), or `<table>.gx_suite.json` and `gx_checkpoint.py` (gx)."""
    if to == "dbt":
        from cataloger_dagster.cli.export_dbt import export_dbt

        if export_dbt(tables, out, options, table_suite):
            sys.exit(1)
        return
    database, name, store = options["database"], options["name"], options["store"]
    from cataloger_dagster.cli.soda_files import write_configuration
    from cataloger_dagster.core.guardrails.export_soda import suite_soda
    from cataloger_dagster.core.guardrails.export_sql import suite_sql
    from cataloger_dagster.core.guardrails.export_gx import suite_json
    from cataloger_dagster.core.layout import store_name

    failed = 0
    catalog = None  # the catalog's database name, once a suite is written
    for table in tables:
        found = table_suite(table, database, name, store)
        if found is None:
            failed += 1
            continue
        ctx, suite = found
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{store_name(table)}.{SUFFIXES[to]}"
        render = {"sql": suite_sql, "soda": suite_soda, "gx": suite_json}[to]
        try:
            text = render(suite)
        except ValueError as exc:  # a table the tool cannot read; the message names it
            click.echo(visible(f"Error: {exc}"), err=True)
            failed += 1
            continue
        path.write_text(text, encoding="utf-8")
        click.echo(visible(f"{table}: {len(suite.guardrails)} guardrails -> {path}"))
        catalog = ctx.database
    if to == "soda" and catalog is not None:
        try:
            click.echo(visible(write_configuration(out, database, name, store, catalog)))
        except ValueError as exc:
            click.echo(visible(f"Error: {exc}"), err=True)
            failed += 1
    if to == "gx" and catalog is not None:
        click.echo(visible(f"the checkpoint script -> {write_gx_checkpoint(out)}"))
    if failed:
        sys.exit(1)


def write_gx_checkpoint(out: Path) -> Path:
    """The script that runs the suites, the same file for every table."""
    from cataloger_dagster.core.guardrails import export_gx

    path = out / "gx_checkpoint.py"
    path.write_text(
        Path(export_gx.__file__).with_name("gx_checkpoint.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    return path


def table_suite(table: str, database, name, store):
    """(the table's store context, its latest guardrail suite), or None once its error is said
    in one line."""
    from cataloger_dagster.assets.guardrails import latest_suite
    from cataloger_dagster.cli.scripts import ScriptsError, _context
    from cataloger_dagster.resources.store import StoreError

    try:
        ctx = _context(database, name, store, table)
        suite = latest_suite(ctx.store, ctx.database, table)
    except (ScriptsError, StoreError, ValueError) as exc:
        click.echo(visible(f"Error: {table!r}: {getattr(exc, 'message', exc)}"), err=True)
        return None
    if suite is None:
        click.echo(
            visible(f"Error: {table!r}: no catalog run has written guardrails yet; run `cataloger run` first"),
            err=True,
        )
        return None
    return ctx, suite
