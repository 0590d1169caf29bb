"""`cataloger export --to sql TABLE...`: the tables' guardrail suites, as their latest catalog
runs wrote them, into files a person or another tool runs.  Reads the store only.

`--to gx` writes each table's Great Expectations suite (`<table>.gx_suite.json`) and, once, the
checkpoint script that runs them (`gx_checkpoint.py`, core/guardrails/gx_checkpoint.py as it is)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cataloger_dagster.cli.options import catalog_options, examples
from cataloger_dagster.core.shown import visible

FORMATS = ("sql", "gx")


@click.command(
    "export",
    epilog=examples(
        "cataloger export --to sql orders customers --database duckdb://shop.duckdb",
        "cataloger export --to sql orders --out guardrails/ --name shop",
        "cataloger export --to gx orders --out gx/ --name shop",
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
@click.argument("tables", nargs=-1, required=True)
@catalog_options
def export(to: str, out: Path, tables: tuple[str, ...], database, name, store) -> None:
    """Write each TABLE's guardrail suite (`<table>.guardrails.sql`, or for gx `<table>.gx_suite.json`
    and `gx_checkpoint.py`)."""
    from cataloger_dagster.assets.guardrails import latest_suite
    from cataloger_dagster.cli.scripts import ScriptsError, _context
    from cataloger_dagster.core.guardrails.export_sql import suite_sql
    from cataloger_dagster.core.layout import store_name
    from cataloger_dagster.resources.store import StoreError

    failed = 0
    for table in tables:
        try:
            ctx = _context(database, name, store, table)
            suite = latest_suite(ctx.store, ctx.database, table)
        except (ScriptsError, StoreError, ValueError) as exc:
            click.echo(visible(f"Error: {table!r}: {getattr(exc, 'message', exc)}"), err=True)
            failed += 1
            continue
        if suite is None:
            click.echo(
                visible(f"Error: {table!r}: no catalog run has written guardrails yet; run `cataloger run` first"),
                err=True,
            )
            failed += 1
            continue
        out.mkdir(parents=True, exist_ok=True)
        if to == "gx":
            try:
                path = write_gx(suite, out, store_name(table))
            except ValueError as exc:  # a table GX cannot read; it names the table
                click.echo(visible(f"Error: {exc}"), err=True)
                failed += 1
                continue
        else:
            path = out / f"{store_name(table)}.guardrails.sql"
            path.write_text(suite_sql(suite), encoding="utf-8")
        click.echo(visible(f"{table}: {len(suite.guardrails)} guardrails -> {path}"))
    if failed:
        sys.exit(1)


def write_gx(suite, out: Path, stem: str) -> Path:
    """`<stem>.gx_suite.json`, and the checkpoint script beside it (the same file for every table)."""
    import json

    from cataloger_dagster.core.guardrails import export_gx

    path = out / f"{stem}.gx_suite.json"
    path.write_text(json.dumps(export_gx.suite_document(suite), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    script = Path(export_gx.__file__).with_name("gx_checkpoint.py")
    (out / "gx_checkpoint.py").write_text(script.read_text(encoding="utf-8"), encoding="utf-8")
    return path
