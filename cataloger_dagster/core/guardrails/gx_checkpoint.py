"""Run the catalog's guardrails of one or more tables with Great Expectations 1.x.

Written by `cataloger export --to gx` beside each table's `<table>.gx_suite.json`:

    GX_CONNECTION_STRING=duckdb:///path/to/shop.duckdb python gx_checkpoint.py orders.gx_suite.json
    GX_CONNECTION_STRING=postgresql+psycopg2://user@host/db python gx_checkpoint.py *.gx_suite.json

(DuckDB needs the `duckdb-engine` package, PostgreSQL `psycopg2`.)  Each suite's expectations run
in one GX checkpoint over a SQL data source; each line printed is one expectation's verdict, and
`--json` prints them as one JSON object instead.  The exit status is 1 when any expectation fails.
"""

import argparse
import json
import os
import sys
from pathlib import Path

CONNECTION_ENV = "GX_CONNECTION_STRING"


class _DuckDB(str):
    """DuckDB drops a statement's rows when its connection's transaction ends, which GX does
    before it reads them; GX keeps one open connection for the dialects it names here (SQLite's
    reason), so it reads DuckDB's rows on that connection."""

    value = "duckdb"


def keep_duckdb_connection() -> None:
    from great_expectations.execution_engine import sqlalchemy_execution_engine

    dialects = sqlalchemy_execution_engine._PERSISTED_CONNECTION_DIALECTS
    if "duckdb" not in dialects:
        # through the module's namespace: the tuple's declared type holds GX's own dialect names only
        vars(sqlalchemy_execution_engine)["_PERSISTED_CONNECTION_DIALECTS"] = (*dialects, _DuckDB("duckdb"))


def run(paths: list[Path], connection: str) -> list[dict]:
    # imported here: GX takes seconds to import, and a missing connection string is told at once
    import great_expectations as gx
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    keep_duckdb_connection()
    context = gx.get_context(mode="ephemeral")
    source = context.data_sources.add_sql("cataloger_source", connection_string=connection)
    verdicts = []
    for index, path in enumerate(paths):
        document = json.loads(path.read_text(encoding="utf-8"))
        facts = document["meta"]["cataloger"]
        asset = source.add_query_asset(f"table_{index}", query=facts["batch_query"])
        batch = asset.add_batch_definition_whole_table("whole_table")
        suite = context.suites.add(
            gx.ExpectationSuite(
                name=document["name"],
                meta=document["meta"],
                expectations=[ExpectationConfiguration(**e).to_domain_obj() for e in document["expectations"]],
            )
        )
        validation = context.validation_definitions.add(
            gx.ValidationDefinition(name=f"validation_{index}", data=batch, suite=suite)
        )
        checkpoint = context.checkpoints.add(
            gx.Checkpoint(name=f"checkpoint_{index}", validation_definitions=[validation], result_format="SUMMARY")
        )
        for result in checkpoint.run().run_results.values():
            for outcome in result.results:
                config = outcome.expectation_config
                if config is None:
                    continue
                errors = [
                    info.get("exception_message")
                    for info in (outcome.exception_info or {}).values()
                    if isinstance(info, dict) and info.get("raised_exception")
                ]
                verdicts.append(
                    {
                        "table": facts["table"],
                        "guardrail": config.meta["cataloger"]["name"],
                        "expectation": config.type,
                        "success": bool(outcome.success),
                        "observed": _observed(outcome.result or {}),
                        "error": errors[0] if errors else None,
                    }
                )
    return verdicts


def _observed(result: dict):
    """What the expectation measured: its observed value, or the rows a column expectation rejected."""
    return result.get("observed_value", result.get("unexpected_count"))


def main() -> int:
    parser = argparse.ArgumentParser(description="Run the catalog's guardrails with Great Expectations.")
    parser.add_argument("suites", nargs="+", type=Path, help="the <table>.gx_suite.json files")
    parser.add_argument("--json", action="store_true", help="print the verdicts as one JSON object")
    args = parser.parse_args()
    connection = os.environ.get(
        "GX_CONNECTION_STRING"
    )  # CONNECTION_ENV, spelled out so each read of the environment names its variable
    if not connection:
        print(f"Set {CONNECTION_ENV} to the database's SQLAlchemy URL (e.g. duckdb:///shop.duckdb)", file=sys.stderr)
        return 2
    verdicts = run(args.suites, connection)
    if args.json:
        print(json.dumps({"verdicts": verdicts}, default=str))
    else:
        for v in verdicts:
            said = v["error"] or f"observed {v['observed']}"
            print(f"{'PASS' if v['success'] else 'FAIL'} {v['table']} {v['guardrail']}: {said}")
    return 0 if all(v["success"] for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
