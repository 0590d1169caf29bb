"""cli/options.py: the options the `cataloger` commands share read alike everywhere, a command
that reads a database says how to give one when none is, and every help ends with examples
whose database URLs mean what they say.

The commands are walked from the click group itself, so that a new one is held to the same.
"""

from __future__ import annotations

import click
import duckdb
import pytest
from click.testing import CliRunner

from cataloger_dagster.cli.app import main
from cataloger_dagster.cli.options import (
    DATABASE_URLS, MISSING_DATABASE, database_option, json_option, store_option,
)
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.database.connection import mysql_arguments, postgres_arguments

# the commands that read neither a database nor a catalog of one (the demo's is its own)
NO_DATABASE = {"demo-db", "demo", "sandbox build-image", "sandbox build-run-image"}
# the least each command that reads a database takes besides it
ARGUMENTS = {
    "run": [], "profile": ["--table", "orders"], "mcp": [],
    "review": ["orders", "--list"],
    "scripts list": ["orders"], "scripts show": ["orders"], "scripts diff": ["orders"],
    "export": ["--to", "sql", "orders"], "open": ["--print"], "sensitive": [],
    "writeback": ["orders"],
}


def commands(command: click.Command = main, path: tuple[str, ...] = ()):
    """(path, command) of the group and of every command under it."""
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from commands(sub, (*path, name))


LEAVES = {" ".join(path): command for path, command in commands() if not isinstance(command, click.Group)}
ALL = {" ".join(path): command for path, command in commands()}


def shared_help(decorator) -> str:
    """The help that `decorator` gives its option."""
    return click.command()(decorator(lambda **_: None)).params[0].help


def options(command: click.Command) -> dict[str, click.Option]:
    return {opt: p for p in command.params if isinstance(p, click.Option) for opt in p.opts}


def test_the_walk_finds_every_command():
    assert {"run", "profile", "mcp", "demo", "demo-db", "review", "scripts list", "sandbox build-image"} <= set(LEAVES)


def test_every_command_that_reads_a_database_takes_it_alike():
    takes = {name for name, command in LEAVES.items() if "--database" in options(command)}
    assert takes == set(LEAVES) - NO_DATABASE
    assert takes == set(ARGUMENTS)   # and each is tried without one below
    for name in takes:
        assert options(LEAVES[name])["--database"].help == shared_help(database_option), name


@pytest.mark.parametrize("option, decorator", [("--store", store_option), ("--json", json_option),
                                               ("--database", database_option)])
def test_a_shared_option_has_one_help_everywhere(option, decorator):
    holders = {name: options(c)[option] for name, c in LEAVES.items() if option in options(c)}
    assert len(holders) >= 3, holders
    for name, holder in holders.items():
        assert holder.help == shared_help(decorator), name


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_no_database_is_one_clear_usage_error(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # an empty working folder: no .env gives one either
    store = ["--store", str(tmp_path / "store")] if "--store" in options(LEAVES[name]) else []
    out = CliRunner().invoke(main, [*name.split(), *ARGUMENTS[name], *store], env={"CATALOGER_DATABASE": None})
    assert out.exit_code == 2, out.output
    assert out.output.rstrip().splitlines()[-1] == f"Error: {MISSING_DATABASE}"
    assert "Traceback" not in out.output and not (tmp_path / "store").exists()


def test_a_blank_variable_is_no_database(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["scripts", "list", "orders"], env={"CATALOGER_DATABASE": " "})
    assert out.exit_code == 2 and MISSING_DATABASE in out.output


@pytest.mark.parametrize("option", ["--name", "--database-name"])   # and its older spelling
def test_a_database_name_needs_no_url(tmp_path, monkeypatch, option):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["review", "orders", "--list", option, "shop", "--store",
                                    str(tmp_path / "store"), "--json"], env={"CATALOGER_DATABASE": None})
    assert out.exit_code == 0, out.output
    assert '"database": "shop"' in out.output and '"reviews": []' in out.output


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_help_ends_with_examples_of_its_command(name):
    out = CliRunner().invoke(main, [*name.split(), "--help"], terminal_width=200)
    assert out.exit_code == 0, out.output
    epilog = out.output.split("Examples:\n", 1)[1]
    shown = [line.strip() + " " for line in epilog.splitlines() if line.strip().startswith("cataloger ")]
    assert shown and all(line.startswith(" ".join(["cataloger", *name.split()]) + " ") for line in shown), shown


def test_the_url_forms_are_shown_where_a_database_is_opened():
    for name in ("run", "profile", "mcp"):
        text = CliRunner().invoke(main, [*name.split(), "--help"], terminal_width=200).output
        assert all(url in text for url, _ in DATABASE_URLS), name


def test_the_shown_database_urls_read_as_they_say():
    shown = dict(DATABASE_URLS)
    absolute, relative, sqlite, postgres, mysql = shown   # in the order the help lists them
    assert "three slashes" in shown[absolute] and absolute.startswith("duckdb:///")
    assert DatabaseResource(url=absolute).database_name == "shop.duckdb"
    assert "two slashes" in shown[relative] and not relative.startswith("duckdb:///")
    assert DatabaseResource(url=sqlite).scheme == "sqlite"
    pg = postgres_arguments(postgres)
    assert (pg["host"], pg["port"], pg["database"], pg["schema"], pg["user"]) == ("host", 5432, "shop", "sales", "user")
    my = mysql_arguments(mysql)
    assert (my["host"], my["port"], my["database"]) == ("host", 3306, "shop")


def test_two_slashes_open_a_relative_file_and_three_an_absolute_one(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    with duckdb.connect(str(tmp_path / "data" / "shop.duckdb")) as con:
        con.execute("CREATE TABLE orders AS SELECT range AS id FROM range(3)")
    monkeypatch.chdir(tmp_path)
    # the relative example as it is shown, and the absolute form of the same file
    relative = next(url for url, _ in DATABASE_URLS if url.startswith("duckdb://") and url[9] != "/")
    absolute = f"duckdb://{tmp_path / 'data' / 'shop.duckdb'}"
    assert relative == "duckdb://data/shop.duckdb" and absolute.startswith("duckdb:///")
    for given in (relative, absolute):
        db = DatabaseResource(url=given)
        try:
            assert db.table("orders").count().execute() == 3, given
        finally:
            db.close()
