"""`cataloger open`: the catalog's index in the browser, for a local store and an S3 store alike.

A local store's index is opened where it is.  An S3 store's pages are copied into a local folder
first (resources/store/pages_copy.py): a browser opens them from ``file://`` with no server, no
credentials of its own and no network, and every link between them works.  Reads the store only:
the database is never opened, its URL (or --name) only says which of the store's catalogs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from cataloger_dagster.cli.options import EXAMPLE_DATABASE, catalog_options, examples, json_option, require_database
from cataloger_dagster.core.shown import visible


@click.command(
    "open",
    epilog=examples(
        f"cataloger open --database {EXAMPLE_DATABASE}",
        "cataloger open --name shop.duckdb --store s3://bucket/catalog --to ./catalog-pages",
        "cataloger open --name shop.duckdb --print",
    ),
)
@catalog_options
@click.option(
    "--to",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where an S3 store's pages are copied (default: a new temporary folder).",
)
@click.option("--print", "print_only", is_flag=True, help="Print the index's file:// URL; start no browser.")
@json_option
def open_pages(database, name, store, folder, print_only, as_json) -> None:
    """Open the catalog's index (index.html) in the browser; an S3 store's pages are copied to
    this machine first, so that they open offline with every link between them working."""
    import json
    import webbrowser

    from cataloger_dagster.resources.store import StoreError
    from cataloger_dagster.resources.store.identity import check_database_catalog
    from cataloger_dagster.resources.store.local import LocalStore
    from cataloger_dagster.resources.store.pages_copy import local_pages
    from cataloger_dagster.settings.factories import plain_database, store_resource
    from cataloger_dagster.settings.model import SettingsError, load_settings

    try:
        settings = load_settings(database=database, name=name, store=store)
        if not settings.name:
            require_database(settings)
        db, catalog_store = plain_database(settings), store_resource(settings=settings)
        check_database_catalog(catalog_store, db)
        if folder is None and not isinstance(catalog_store, LocalStore):
            folder = Path(tempfile.mkdtemp(prefix="cataloger-pages-"))
        pages = local_pages(catalog_store, db.database_name, folder)
    except (SettingsError, StoreError, OSError) as exc:
        raise click.ClickException(visible(str(exc))) from None
    url = pages.index.resolve().as_uri()
    if as_json:
        click.echo(json.dumps({"url": url, "index": str(pages.index), "copied": pages.copied}, indent=2))
    else:
        if pages.copied:
            click.echo(visible(f"copied {pages.copied} files of {catalog_store.describe()} to {folder}"), err=True)
        click.echo(url)
    if not print_only and not as_json:
        webbrowser.open(url)
