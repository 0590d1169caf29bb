"""What the `cataloger` commands share, defined once so that they read alike: the options that
say which database and which catalog, the one error for a missing database, and the examples
their help ends with.

Only click and the names of `resources.defaults` are imported here (and by every module the
command group loads), so that `--help` answers at once: the commands import what they run
(Dagster, ibis, the Docker SDK...) in their bodies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import click

from cataloger_dagster.resources.defaults import DEFAULT_STORE

if TYPE_CHECKING:
    from cataloger_dagster.settings.model import CatalogerSettings

# ---------------------------------------------------------------- database URLs

# (URL, what it reaches): the forms that resources/database/connection.py reads
DATABASE_URLS = (
    ("duckdb:///home/me/shop.duckdb", "a DuckDB file by its absolute path (three slashes)"),
    ("duckdb://data/shop.duckdb", "a DuckDB file relative to the working folder (two slashes)"),
    ("sqlite:///srv/app.sqlite", "an SQLite file, the same two ways"),
    ("postgres://user:pw@host:5432/shop?schema=sales", "PostgreSQL; ?schema= names the schema"),
    ("mysql://user:pw@host:3306/shop", "MySQL or MariaDB (pip install 'cataloger-dagster[mysql]')"),
)
EXAMPLE_DATABASE = DATABASE_URLS[1][0]

MISSING_DATABASE = (
    "Missing option '--database': pass --database URL or set CATALOGER_DATABASE "
    "(for the demo database, run `cataloger demo`)"
)


def examples(*commands: str, urls: bool = False) -> str:
    """A command's help epilog: `commands` one a line as they are (click's \\b keeps a
    paragraph unwrapped), then, with `urls`, the forms of a database URL."""
    text = "\b\nExamples:\n" + "\n".join(f"  {command}" for command in commands)
    if urls:
        width = max(len(url) for url, _ in DATABASE_URLS)
        text += "\n\n\b\nDatabase URLs:\n" + "\n".join(f"  {url:<{width}}  {meaning}" for url, meaning in DATABASE_URLS)
    return text


# ---------------------------------------------------------------- options


def database_option(func: Callable) -> Callable:
    return click.option(
        "--database",
        "database",
        metavar="URL",
        help=f"The database, as an ibis URL such as {EXAMPLE_DATABASE} [default: CATALOGER_DATABASE; "
        "one of the two is required].",
    )(func)


def name_option(func: Callable) -> Callable:
    return click.option(
        "--name",
        "name",
        metavar="NAME",
        help="The catalog's name, its folder in the store [default: CATALOGER_NAME, else the database file's "
        "name with its extension, or host_port/database/schema]; a name that another database's catalog "
        "has is refused unless given here.",
    )(func)


def store_option(func: Callable) -> Callable:
    return click.option(
        "--store",
        "store",
        metavar="PATH",
        help=f"Folder or s3://bucket/prefix of the catalog [default: CATALOGER_STORE, else {DEFAULT_STORE}].",
    )(func)


def json_option(func: Callable) -> Callable:
    return click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")(func)


# The options that say which catalog a command reads or writes, in the order the help lists
# them; an option that names the catalog otherwise belongs here too, so that every such command
# takes it alike.
CATALOG_OPTIONS = (database_option, name_option, store_option)


def catalog_options(func: Callable) -> Callable:
    """`CATALOG_OPTIONS`, for every command that reads a database or a catalog (run, mcp,
    scripts, review; profile takes only --database, as it writes nothing)."""
    for option in reversed(CATALOG_OPTIONS):
        func = option(func)
    return func


def require_database(settings: CatalogerSettings) -> None:
    """Refuse to go on with no database given (--database, CATALOGER_DATABASE or .env): the
    settings' default, the demo database, is what `cataloger demo` catalogs, never a fallback."""
    if "database" not in settings.model_fields_set:
        raise click.UsageError(MISSING_DATABASE)
