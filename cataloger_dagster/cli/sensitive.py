"""`cataloger sensitive`: where personal data lives in the database, column by column, as the
catalog's latest complete runs classified it (and people's reviews corrected it).

Registered in the main CLI with `main.add_command(sensitive)`.  Reads the store only: the
database is never opened, its URL (or --name) only says which of the store's catalogs.  The
values themselves are never printed: the list says which columns, which classes, and how much of
each column's sample held one.
"""

from __future__ import annotations

import click

from cataloger_dagster.cli.options import EXAMPLE_DATABASE, examples
from cataloger_dagster.cli.scripts import _common, _run


@click.command(
    "sensitive",
    epilog=examples(
        f"cataloger sensitive --database {EXAMPLE_DATABASE}",
        "cataloger sensitive --name shop.duckdb --store s3://bucket/catalog --json",
    ),
)
@_common
def sensitive(database, name, store, database_name, as_json) -> None:
    """List every column holding personal data (an e-mail, a name, a phone number...): its
    table, its classes, the share of its sample that held one, whether a person reviewed it, and
    what the class's investigation said (`verdict`; a column whose classes were all refuted is
    listed apart, under `refuted`).
    Correct a column with `cataloger review TABLE COLUMN --not-personal` or `--personal CLASS`."""
    from cataloger_dagster.core.sensitive.classes import label
    from cataloger_dagster.core.sensitive.where import refuted_by_investigation, where_personal_data
    from cataloger_dagster.resources.store import store_from_url
    from cataloger_dagster.resources.store.cataloged import read_cataloged_tables
    from cataloger_dagster.resources.store.identity import check_database_catalog
    from cataloger_dagster.settings.factories import plain_database
    from cataloger_dagster.settings.model import load_settings
    from cataloger_dagster.cli.options import require_database

    def body():
        settings = load_settings(database=database, name=name or database_name, store=store)
        if not settings.name:
            require_database(settings)
        db, catalog_store = plain_database(settings), store_from_url(settings.store)
        check_database_catalog(catalog_store, db)
        tables, problems = read_cataloged_tables(catalog_store, db.database_name)
        rows = [c.personal for t in tables for c in t.columns]
        found, refuted = where_personal_data(rows), refuted_by_investigation(rows)
        data = {
            "database": db.database_name,
            "store": catalog_store.describe(),
            "tables_read": len(tables),
            "columns": [c.as_json() for c in found],
            "refuted": [c.as_json() for c in refuted],
            "left_out": problems,
        }
        lines = [
            f"{db.database_name} in {catalog_store.describe()}: {len(found)} column(s) of {len(tables)} "
            "cataloged table(s) hold personal data"
        ]
        for c in found:
            share = f"{c.share:.0%} of its sample" if c.share is not None else "said by a review"
            said = f", {c.verdict} by its investigation" if c.verdict else ""
            lines.append(f"  {c.table}.{c.column}: {c.labels} ({share}{', reviewed' if c.reviewed else ''}{said})")
        for c in refuted:
            lines.append(
                f"  {c.table}.{c.column}: not personal data ({', '.join(map(label, c.refuted))} refuted by its investigation)"
            )
        lines += [f"  left out: {p}" for p in problems]
        return data, "\n".join(lines)

    _run(as_json, body)
