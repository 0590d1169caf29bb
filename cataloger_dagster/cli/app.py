"""The `cataloger` command: the catalog without the UI."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import quote

import click

from cataloger_dagster.cli.options import (
    EXAMPLE_DATABASE,
    catalog_options,
    database_option,
    examples,
    json_option,
    require_database,
    store_option,
)
from cataloger_dagster.cli.export import export
from cataloger_dagster.cli.open_pages import open_pages
from cataloger_dagster.cli.review import review
from cataloger_dagster.cli.sensitive import sensitive
from cataloger_dagster.cli.sandbox import sandbox
from cataloger_dagster.cli.scripts import scripts
from cataloger_dagster.cli.writeback import writeback
from cataloger_dagster.core.shown import visible
from cataloger_dagster.resources.defaults import DEMO_DATABASE

# Every module above imports only click and the standard library at its top, so that `--help`
# answers at once; the commands import Dagster, ibis and the rest in their bodies
# (tests/cli/test_cli.py holds it).


def _emit(data, as_json: bool, text: str) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        click.echo(visible(text, keep="\n\t"))


@click.group(
    epilog=examples("cataloger demo", f"cataloger run --database {EXAMPLE_DATABASE}", "cataloger COMMAND --help")
)
@click.version_option(package_name="cataloger-dagster")
def main() -> None:
    """A self-improving data catalog orchestrated by Dagster."""
    from dotenv import load_dotenv

    # The settings read .env themselves; loading it into the environment is for the variables
    # that others read there: dg.EnvVar (CATALOGER_DATABASE, ANTHROPIC_API_KEY), DAGSTER_HOME,
    # the SDKs.  The environment wins over the file, as it does for the settings.
    load_dotenv(Path.cwd() / ".env", override=False)


def _settings(**overrides):
    """The settings, with the command line's values above the environment's, or a clear error;
    a command that reads a database refuses to go on without one given (`require_database`)."""
    from cataloger_dagster.settings.model import SettingsError, load_settings

    try:
        settings = load_settings(**overrides)
    except SettingsError as exc:
        raise click.ClickException(visible(str(exc))) from None
    require_database(settings)
    return settings


@main.command(
    "demo-db", epilog=examples(f"cataloger demo-db {DEMO_DATABASE}", "cataloger demo-db /tmp/small.duckdb --scale 0.05")
)
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--scale", default=1.0, show_default=True, help="Fraction of the full size (every defect is kept).")
@click.option("--seed", default=7, show_default=True)
@json_option
def demo_db(path: Path, scale: float, seed: int, as_json: bool) -> None:
    """Write the demo DuckDB database (realistic tables with planted defects) to PATH."""
    from cataloger_dagster.demo import create_demo_database

    try:
        info = create_demo_database(path, seed=seed, scale=scale)
    except FileExistsError as exc:
        raise click.ClickException(visible(str(exc))) from None
    _emit({"path": str(path), **info}, as_json, f"demo database written to {path}")


@main.command(
    "run",
    epilog=examples(
        f"cataloger run --database {EXAMPLE_DATABASE}",
        f"cataloger run --database {EXAMPLE_DATABASE} --table orders --table customers --json",
        "CATALOGER_DATABASE='postgres://user:pw@host:5432/shop?schema=sales' cataloger run --store s3://bucket/catalog",
        urls=True,
    ),
)
@catalog_options
@click.option("--agent", help="heuristic (default) or anthropic (default: CATALOGER_AGENT).")
@click.option("--sandbox", help="local (default) or docker (default: CATALOGER_SANDBOX).")
@click.option("--table", "tables", multiple=True, help="Catalog only this table (repeatable).")
@click.option("--explore", is_flag=True, help="Ignore earlier scripts and explore afresh (relearn).")
@click.option("--exploration-rate", type=float, help="Share of runs that explore anyway (default 0.1).")
@click.option(
    "--resume/--no-resume",
    default=None,
    help="Skip the tables already cataloged for their current data (default: only when the "
    "previous run of this database was interrupted); --no-resume catalogs every table.",
)
@click.option(
    "--batch", type=click.IntRange(min=1), help="Tables per Dagster run (default: CATALOGER_RUN_BATCH, else 20)."
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    help="Dagster runs at once, a worker process each, with DAGSTER_HOME set (default: CATALOGER_RUN_JOBS, else 1).",
)
@json_option
def run(database, name, store, agent, sandbox, tables, explore, exploration_rate, resume, batch, jobs, as_json) -> None:
    """Catalog a database (all tables, or those given) through Dagster."""
    from cataloger_dagster.cli.progress import RunProgress, summary_lines
    from cataloger_dagster.cli.runner import catalog_database
    from cataloger_dagster.resources.database.errors import DatabaseError
    from cataloger_dagster.resources.store import StoreError
    from cataloger_dagster.cli.stopping import Interrupted, stop_on_signals
    from cataloger_dagster.settings.model import SettingsError

    settings = _settings(database=database, name=name, store=store, agent=agent, sandbox=sandbox)
    progress = RunProgress(expected=len(tables) or None, bar=sys.stderr.isatty())
    with stop_on_signals():
        try:
            report = catalog_database(
                settings=settings,
                tables=list(tables) or None,
                explore=explore,
                exploration_rate=exploration_rate,
                on_table_done=progress.table_done,
                on_tables=progress.start,
                on_progress=progress.step_done,
                resume=resume,
                batch=batch,
                jobs=jobs,
            )
        # no table can be cataloged (a resource the settings cannot make, among them): say why, once
        except (DatabaseError, StoreError, SettingsError) as exc:
            progress.close()
            raise click.ClickException(visible(str(exc))) from None
        except Interrupted as stop:
            progress.close()
            click.echo(progress.interrupted_line(stop), err=True)
            sys.exit(stop.exit_code)
    progress.close()
    for note in report.notes:
        click.echo(visible(f"note: {note}"), err=True)
    if as_json:
        click.echo(report.to_json())
    else:
        for line in summary_lines(report, seconds=progress.elapsed()):
            click.echo(line)
    if report.failed or report.index is None:
        sys.exit(1)


@main.command(
    "profile",
    epilog=examples(
        f"cataloger profile --database {EXAMPLE_DATABASE} --table orders",
        "cataloger profile --database sqlite:///srv/app.sqlite --table users --json",
        urls=True,
    ),
)
@database_option
@click.option("--table", "table", required=True, help="The table to profile.")
@json_option
def profile(database, table, as_json) -> None:
    """Profile one table and print its statistics (nothing is written to the catalog)."""
    from cataloger_dagster.core.profile.profiling import compute_profile
    from cataloger_dagster.resources.database.errors import DatabaseError
    from cataloger_dagster.resources.database.resource import DatabaseResource

    settings = _settings(database=database)
    db = DatabaseResource(url=settings.database)
    try:
        result = compute_profile(
            db.table(table), database=db.database_name, table_name=table, fingerprint=db.fingerprint(table)
        )
    except DatabaseError as exc:
        raise click.ClickException(visible(str(exc))) from None
    if as_json:
        click.echo(result.model_dump_json(indent=2))
        return
    click.echo(visible(f"{table}: {result.row_count:,} rows, {result.column_count} columns"))
    for c in result.columns:
        click.echo(
            visible(
                f"  {c.name:<24} {c.dtype:<16} nulls={c.nulls:<8} distinct={c.distinct!s:<8} "
                f"min={c.min!s:.20} max={c.max!s:.20} semantic={c.semantic_type}"
            )
        )


@main.command(
    "mcp",
    epilog=examples(
        f"cataloger mcp --database {EXAMPLE_DATABASE}",
        f"cataloger mcp --database {EXAMPLE_DATABASE} --store catalog --http 127.0.0.1:8765",
        urls=True,
    ),
)
@catalog_options
@click.option("--sandbox", help="local (default) or docker: where execute_python runs.")
@click.option("--http", "http", metavar="HOST:PORT", help="Serve streamable HTTP there instead of stdio.")
@click.option("--row-limit", default=1000, show_default=True, help="Rows run_sql returns at most.")
@click.option("--sql-timeout", default=30.0, show_default=True, help="Seconds a run_sql query may take.")
@click.option(
    "--byte-limit", default=8_000_000, show_default=True, help="Bytes of values run_sql fetches for one reply at most."
)
@click.option(
    "--allow-superuser-sql",
    is_flag=True,
    help="Let run_sql run over a PostgreSQL superuser (or file-reading) role; refused otherwise.",
)
def mcp(database, name, store, sandbox, http, row_limit, sql_timeout, byte_limit, allow_superuser_sql) -> None:
    """Serve the catalog to an MCP client (Claude Desktop, Claude Code...): stdio, or --http."""
    from cataloger_dagster.resources.extras import MissingExtra

    try:
        from cataloger_dagster.mcp.server import Service, serve
    except MissingExtra as exc:
        raise click.ClickException(str(exc)) from None
    from cataloger_dagster.resources.store import StoreError
    from cataloger_dagster.resources.store.identity import check_database_catalog
    from cataloger_dagster.settings.factories import plain_database, sandbox_resource, store_resource
    from cataloger_dagster.settings.environment import secret_values

    settings = _settings(database=database, name=name, store=store, sandbox=sandbox)
    # a plain resource outside Dagster (the settings' one reads the URL through dg.EnvVar)
    db, catalog_store = plain_database(settings), store_resource(settings=settings)
    try:  # serve this database's own catalog, never another's of the same name
        check_database_catalog(catalog_store, db)
    except StoreError as exc:
        raise click.ClickException(visible(str(exc))) from None
    service = Service(
        database=db,
        store=catalog_store,
        sandbox=sandbox_resource(settings=settings),
        row_limit=row_limit,
        sql_timeout_s=sql_timeout,
        sql_byte_limit=byte_limit,
        allow_superuser_sql=allow_superuser_sql,
        secrets=secret_values(),
    )
    try:
        serve(service, http=http)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


@main.command("demo", epilog=examples("cataloger demo", "cataloger demo --store /tmp/demo-catalog --json"))
@click.option(
    "--path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEMO_DATABASE,
    show_default=True,
    help="The demo database's file, written first when it is missing.",
)
@store_option
@json_option
@click.pass_context
def demo(ctx: click.Context, path: Path, store, as_json: bool) -> None:
    """Catalog the demo database (realistic tables with planted defects), writing it first when
    it is missing: `cataloger run --database duckdb://PATH` with the demo's own file."""
    if not path.exists():
        from cataloger_dagster.demo import create_demo_database

        path.parent.mkdir(parents=True, exist_ok=True)
        create_demo_database(path)
        click.echo(f"demo database written to {path}", err=True)
    # a relative PATH gives duckdb://data/demo.duckdb, an absolute one duckdb:///...: both are read as paths
    ctx.invoke(run, database=f"duckdb://{quote(str(path))}", store=store, as_json=as_json)


main.add_command(sandbox)
main.add_command(scripts)
main.add_command(review)
main.add_command(sensitive)
main.add_command(open_pages)
main.add_command(export)
main.add_command(writeback)
