"""`cataloger writeback TABLE...|--all`: the tables' descriptions, from their latest catalog runs,
as comments of the database.  It shows the diff, writes the script, and runs it only with
--apply; a comment a person wrote is kept unless --overwrite (core/writeback/ledger.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cataloger_dagster.cli.options import EXAMPLE_DATABASE, catalog_options, examples, require_database
from cataloger_dagster.core.shown import visible


def _error(table: str, message: object) -> None:
    click.echo(visible(f"Error: {table!r}: {message}"), err=True)


@click.command(
    "writeback",
    epilog=examples(
        f"cataloger writeback orders customers --database {EXAMPLE_DATABASE}",
        f"cataloger writeback --all --out comments.sql --database {EXAMPLE_DATABASE}",
        f"cataloger writeback --all --apply --database {EXAMPLE_DATABASE}",
    ),
)
@click.argument("tables", nargs=-1)
@click.option("--all", "all_tables", is_flag=True, help="Every table the catalog has described.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("writeback.sql"),
    show_default=True,
    help="The script of COMMENT statements to write.",
)
@click.option("--apply", "apply", is_flag=True, help="Run the script on the database (else it is only written).")
@click.option("--overwrite", is_flag=True, help="Replace comments a person wrote too (else they are kept).")
@catalog_options
def writeback(tables, all_tables, out, apply, overwrite, **catalog) -> None:
    """Write the catalog's table and column descriptions as comments of the database: the diff
    first, then the script (OUT), run only with --apply."""
    database, name, store = catalog["database"], catalog["name"], catalog["store"]
    from cataloger_dagster.core.grammar import count_noun
    from cataloger_dagster.core.results import ResultError
    from cataloger_dagster.core.writeback.plan import comment_diff
    from cataloger_dagster.core.writeback.session import WritebackError, plan_table, remember, script
    from cataloger_dagster.resources.database.comments import CommentSession
    from cataloger_dagster.resources.database.errors import DatabaseError
    from cataloger_dagster.resources.store import StoreError, store_from_url
    from cataloger_dagster.resources.store.identity import check_database_catalog
    from cataloger_dagster.settings.factories import plain_database
    from cataloger_dagster.settings.model import SettingsError, load_settings

    if bool(tables) == all_tables:
        raise click.UsageError("give the tables to write back, or --all (not both)")
    try:
        settings = load_settings(database=database, name=name, store=store)
        require_database(settings)
        db, catalog_store = plain_database(settings), store_from_url(settings.store)
        check_database_catalog(catalog_store, db)
        names = list(tables) or catalog_store.list_tables(db.database_name)
        if not names:
            raise click.ClickException(
                visible(f"the catalog {db.database_name!r} holds no tables yet: run `cataloger run` first")
            )
        session = CommentSession(settings.database, writable=apply)
    except (SettingsError, StoreError, DatabaseError) as exc:
        raise click.ClickException(visible(str(exc))) from None
    failed, planned = 0, []
    with session:
        for table in names:
            try:
                planned.append(plan_table(catalog_store, db.database_name, session, table, overwrite=overwrite))
            except (WritebackError, ResultError, DatabaseError, StoreError, ValueError) as exc:
                _error(table, exc)
                failed += 1
        diff = comment_diff(change for wb in planned for change in wb.changes)
        if diff:
            click.echo(diff)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(script(planned, session.dialect), encoding="utf-8")
        for wb in planned:
            kept = sum(c.action == "kept" for c in wb.changes)
            note = f", {kept} kept (a person's)" if kept else ""
            if apply:
                try:
                    session.execute(wb.statements)
                except DatabaseError as exc:
                    _error(wb.table, exc)
                    failed += 1
                    continue
                click.echo(visible(f"{wb.table}: {count_noun(len(wb.statements), 'comment')} written{note}"))
            else:
                click.echo(visible(f"{wb.table}: {count_noun(len(wb.statements), 'comment')} to write{note}"))
            remember(catalog_store, db.database_name, wb, applied=apply)
    click.echo(visible(f"script: {out}" + ("" if apply else " (not run: --apply runs it)")))
    if failed:
        sys.exit(1)
