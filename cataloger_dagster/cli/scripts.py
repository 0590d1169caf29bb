"""`cataloger scripts list|show|diff TABLE`: a table's stored session scripts.

Registered in the main CLI with `main.add_command(scripts)`.  Reads only:
nothing here writes to the store or connects to the database (the database
URL is needed only for the name that the store's layout uses).
"""

from __future__ import annotations

import difflib
import json
import sys
from typing import TYPE_CHECKING, Any, Callable

import click

from cataloger_dagster.cli.options import EXAMPLE_DATABASE, catalog_options, examples, json_option, require_database
from cataloger_dagster.core.shown import visible

if TYPE_CHECKING:
    from cataloger_dagster.resources.store import ScriptRecord, CatalogStore


class ScriptsError(click.ClickException):
    """A user-facing error; with --json it is printed as {"error": ...} on stdout too."""

    def __init__(self, message: str, **details: Any):
        super().__init__(message)
        self.details = details


class _Ctx:
    """Where one command looks: the store, the database name, the table's prefix and the
    script's file name in each run."""

    def __init__(self, store: CatalogStore, database: str, table: str):
        from cataloger_dagster.core.investigate.learning import SCRIPT
        from cataloger_dagster.resources.store import table_prefix

        self.store, self.database, self.table = store, database, table
        self.prefix = table_prefix(database, table)
        self.script_file = SCRIPT

    def header(self) -> dict:
        return {"database": self.database, "table": self.table, "store": self.store.describe()}

    def records(self) -> list[ScriptRecord]:
        """Every run of the table that holds a script, newest first."""
        runs = self.store.list_runs(self.prefix)
        records = self.store.list_scripts(self.prefix, self.script_file, limit=len(runs)) if runs else []
        if not records:
            raise self._no_scripts(runs)
        return records

    def best_timestamp(self, records: list[ScriptRecord]) -> str | None:
        """The script the next run starts from unless it explores: the same ranking over the
        same window (the last WINDOW scripts), against the latest run's issues and schema.
        None when that window holds no script of the catalog's own."""
        from cataloger_dagster.core.investigate.learning import WINDOW, rank_scripts, ranking_context

        current_ids, schema_hash = ranking_context(self.store, self.prefix)
        ranked = rank_scripts(records[:WINDOW], current_ids=current_ids, schema_hash=schema_hash)
        return ranked[0].timestamp if ranked else None

    def _no_scripts(self, runs: list[str]) -> ScriptsError:
        where = self.store.describe()
        tables = self.store.list_tables(self.database)
        if runs:
            message = (
                f"table {self.table!r} of database {self.database!r} has {len(runs)} run(s) "
                f"in {where} but none holds a {self.script_file}"
            )
        else:
            message = f"no scripts for table {self.table!r} of database {self.database!r} in {where}"
        others = [t for t in tables if t != self.table]
        if others:
            message += "; tables with runs in this store: " + ", ".join(others)
        elif not runs:
            message += (
                f"; the store has no runs for database {self.database!r}: run "
                "`cataloger run` first, or check --store / --database / --name"
            )
        return ScriptsError(message, **self.header(), tables=tables)

    def pick(self, records: list[ScriptRecord], which: str) -> ScriptRecord:
        """A record by timestamp (any ISO-8601 form, or a unique prefix), 'best' or 'latest'."""
        from cataloger_dagster.resources.store import normalize_timestamp

        which = which.strip()
        if which.lower() == "latest":
            return records[0]
        if which.lower() == "best":
            best = self.best_timestamp(records)
            if best is None:
                raise ScriptsError(
                    f"table {self.table!r} has no script of the catalog's own among its last "
                    "scripts (those saved from outside are never fed to a run); give a "
                    "timestamp or 'latest'",
                    **self.header(),
                )
            return next(r for r in records if r.timestamp == best)
        by_ts = {r.timestamp: r for r in records}
        try:
            exact = normalize_timestamp(which)
        except ValueError:
            exact = None
        if exact in by_ts:
            return by_ts[exact]
        matches = [r for r in records if r.timestamp.startswith(which)]
        if len(matches) == 1:
            return matches[0]
        available = [r.timestamp for r in records]
        if len(matches) > 1:
            reason = f"timestamp {which!r} matches {len(matches)} runs of table {self.table!r}"
        elif exact is not None and exact in self.store.list_runs(self.prefix):
            reason = f"run {exact} of table {self.table!r} holds no {self.script_file}"
        else:
            reason = f"no run of table {self.table!r} with a script at {which!r}"
        raise ScriptsError(
            f"{reason}; give one of: {', '.join(available)} (or 'best' / 'latest')",
            **self.header(),
            available=available,
        )


def _common(func: Callable) -> Callable:
    """The options every `scripts` command (and `review`) takes: the catalog's, and the
    database's name in the store instead of its URL (only the name is used; no connection)."""
    func = json_option(func)
    # the older spelling of --name, which review commands written on earlier pages still use
    func = click.option("--database-name", hidden=True)(func)
    return catalog_options(func)


def _run(as_json: bool, body: Callable[[], tuple[dict, str]]) -> None:
    """Run `body` -> (json data, text); turn store errors into clear messages and exit 1."""
    from cataloger_dagster.resources.store import StoreError

    try:
        data, text = body()
    except ScriptsError as exc:
        _fail(as_json, exc.message, exc.details)
    except (StoreError, ValueError) as exc:
        _fail(as_json, str(exc), {})
    click.echo(json.dumps(data, indent=2, default=str) if as_json else visible(text, keep="\n\t"))


def _fail(as_json: bool, message: str, details: dict) -> None:
    if as_json:
        click.echo(json.dumps({"error": message, **details}, indent=2, default=str))
    click.echo(visible(f"Error: {message}", keep="\n"), err=True)
    sys.exit(1)


def _context(database: str | None, name: str | None, store: str | None, table: str) -> _Ctx:
    """Where a command looks: the catalog `name` (then no --database is needed), else the
    database's own, which must be this database's (identity.py)."""
    from cataloger_dagster.resources.store.identity import check_database_catalog
    from cataloger_dagster.settings.model import load_settings
    from cataloger_dagster.settings.factories import plain_database, store_resource

    if not table.strip():
        raise ScriptsError("TABLE is empty; give a table name")
    settings = load_settings(database=database, name=name, store=store)
    if not settings.name:
        require_database(settings)
    db, catalog_store = plain_database(settings), store_resource(settings=settings)
    check_database_catalog(catalog_store, db)
    return _Ctx(catalog_store, db.database_name, table)


# ---------------------------------------------------------------- formatting


def _fmt_rate(value: Any) -> str:
    return f"{value:.0%}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def _fmt_num(value: Any, spec: str = "") -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "-" if value is None else str(value)
    return format(value, spec)


def _fmt_origin(metrics: dict | None) -> str:
    """Who wrote a script: "catalog", or the outside origin and its session, never ranked."""
    from cataloger_dagster.core.investigate.ranking import CATALOG, script_origin

    origin = script_origin(metrics)
    if origin == CATALOG:
        return CATALOG
    session = metrics.get("session") if isinstance(metrics, dict) else None
    return origin + (f" session {session}" if session else "") + " (outside the catalog: never ranked)"


def _fmt_source(metrics: dict) -> str:
    from cataloger_dagster.core.investigate.ranking import CATALOG, script_origin
    from cataloger_dagster.core.results import script_metrics

    if script_origin(metrics or None) != CATALOG:
        return _fmt_origin(metrics or None)
    m = script_metrics(metrics)
    if m.based_on:
        return f"{m.based_on_table}@{m.based_on}" if m.based_on_table else m.based_on
    return "explored" if m.explored else "-"


def _row(record: ScriptRecord, best: str | None) -> dict:
    from cataloger_dagster.core.investigate.ranking import script_origin
    from cataloger_dagster.core.results import script_metrics

    m = script_metrics(record.metrics)
    return {
        "timestamp": record.timestamp,
        "best": record.timestamp == best,
        "origin": script_origin(record.metrics),
        "pass_rate": m.pass_rate,
        "cells": m.cells,
        "seconds": m.seconds,
        "explored": m.explored,
        "based_on": m.based_on,
        "based_on_table": m.based_on_table,
        "uri": record.uri,
        "metrics": record.metrics,
    }


def _metrics_text(metrics: dict | None) -> list[str]:
    if not metrics:
        return ["  (no metrics stored)"]
    width = max(len(k) for k in metrics)
    return [
        f"  {k:<{width}}  {json.dumps(v, default=str) if isinstance(v, (dict, list)) else v}"
        for k, v in metrics.items()
    ]


# ------------------------------------------------------------------ commands


@click.group("scripts", epilog=examples(f"cataloger scripts list orders --database {EXAMPLE_DATABASE}"))
def scripts() -> None:
    """A table's stored session scripts (catalog_script.py) and their metrics.

    Reads the store only: the database is never opened, its URL (or --name) only
    says which of the store's catalogs to read."""


@scripts.command(
    "list",
    epilog=examples(
        f"cataloger scripts list orders --database {EXAMPLE_DATABASE}",
        "cataloger scripts list orders --name shop.duckdb --store s3://bucket/catalog --json",
    ),
)
@click.argument("table")
@_common
def list_cmd(table, database, name, store, database_name, as_json) -> None:
    """One row per run of TABLE that holds a script, newest first; * marks the
    script the next run is fed (the best of the last 10, ranked against the issues and
    schema of the latest run: a table changed since may rank differently)."""

    def body():
        ctx = _context(database, name or database_name, store, table)
        records = ctx.records()
        best = ctx.best_timestamp(records)
        rows = [_row(r, best) for r in records]
        lines = [
            f"{ctx.table} ({ctx.database}) in {ctx.store.describe()}: {len(rows)} script(s); * = fed to the next run",
            f"  {'TIMESTAMP':<27} {'PASS':>5} {'CELLS':>5} {'SECONDS':>8}  SOURCE",
        ]
        for r, rec in zip(rows, records):
            lines.append(
                f"{'*' if r['best'] else ' '} {r['timestamp']:<27} {_fmt_rate(r['pass_rate']):>5} "
                f"{_fmt_num(r['cells']):>5} {_fmt_num(r['seconds'], '.2f'):>8}  "
                f"{_fmt_source(rec.metrics or {})}"
            )
        return {**ctx.header(), "best": best, "runs": rows}, "\n".join(lines)

    _run(as_json, body)


@scripts.command(
    "show",
    epilog=examples(
        f"cataloger scripts show orders --database {EXAMPLE_DATABASE}",
        f"cataloger scripts show orders latest --code-only --database {EXAMPLE_DATABASE} > orders.py",
    ),
)
@click.argument("table")
@click.argument("timestamp", default="best")
@click.option("--code-only", is_flag=True, help="Print only the script (to save or run it).")
@_common
def show_cmd(table, timestamp, code_only, database, name, store, database_name, as_json) -> None:
    """Print TABLE's script of one run (TIMESTAMP, 'best' (default) or 'latest') and its metrics."""
    from cataloger_dagster.core.investigate.ranking import script_origin

    def body():
        ctx = _context(database, name or database_name, store, table)
        records = ctx.records()
        record = ctx.pick(records, timestamp)
        best = ctx.best_timestamp(records)
        data = {
            **ctx.header(),
            "timestamp": record.timestamp,
            "best": record.timestamp == best,
            "origin": script_origin(record.metrics),
            "uri": record.uri,
            "metrics": record.metrics,
            "code": record.code,
        }
        if code_only:
            return data, record.code.rstrip("\n")
        mark = " (fed to the next run)" if data["best"] else ""
        lines = [
            f"# {ctx.table} ({ctx.database}) run {record.timestamp}{mark}",
            f"# written by: {_fmt_origin(record.metrics)}",
            f"# {record.uri}",
            "# metrics:",
        ]
        lines += ["#" + line[1:] for line in _metrics_text(record.metrics)]
        return data, "\n".join(lines) + "\n\n" + record.code.rstrip("\n")

    _run(as_json, body)


@scripts.command(
    "diff",
    epilog=examples(
        f"cataloger scripts diff orders --database {EXAMPLE_DATABASE}",
        f"cataloger scripts diff orders best latest --database {EXAMPLE_DATABASE}",
    ),
)
@click.argument("table")
@click.argument("ts_a", required=False)
@click.argument("ts_b", required=False)
@click.option("--context", "n_context", default=3, show_default=True, help="Lines of context.")
@_common
def diff_cmd(table, ts_a, ts_b, n_context, database, name, store, database_name, as_json) -> None:
    """Unified diff of TABLE's scripts from run TS_A to run TS_B (each a
    timestamp, 'best' or 'latest'). Defaults: the two latest runs with a
    script; with only TS_A, TS_A against the latest."""

    def body():
        ctx = _context(database, name or database_name, store, table)
        records = ctx.records()
        if ts_a is None and len(records) < 2:
            raise ScriptsError(
                f"table {ctx.table!r} has only one script ({records[0].timestamp}); nothing to diff it against",
                **ctx.header(),
                available=[r.timestamp for r in records],
            )
        a = ctx.pick(records, ts_a) if ts_a else records[1]
        b = ctx.pick(records, ts_b) if ts_b else records[0]
        # lineterm="" and our own joins: a script without a final newline
        # would otherwise glue two lines of the diff together
        lines = list(
            difflib.unified_diff(
                a.code.splitlines(),
                b.code.splitlines(),
                fromfile=f"{a.timestamp}/{ctx.script_file}",
                tofile=f"{b.timestamp}/{ctx.script_file}",
                n=n_context,
                lineterm="",
            )
        )
        diff = "".join(line + "\n" for line in lines)
        data = {
            **ctx.header(),
            "from": a.timestamp,
            "to": b.timestamp,
            "identical": a.code == b.code,
            "diff": diff,
            "metrics": {"from": a.metrics, "to": b.metrics},
        }
        text = diff.rstrip("\n") if diff else f"scripts of {a.timestamp} and {b.timestamp} are identical"
        return data, text

    _run(as_json, body)


if __name__ == "__main__":
    scripts()
