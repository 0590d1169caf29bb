"""Guardrails in Dagster: each catalog run writes its table's suite beside its results
(``guardrails.json``), and a `guardrails` check on each of the user's tables (`table_specs`) runs
the latest stored suite against the database, with no agent and no sandbox.

The `guardrails` job runs every table's check; its schedule (``CATALOGER_GUARDRAILS_CRON``) makes
it a cheap watch between two catalog runs.  A table whose suite cannot be read or run fails only
its own check, with the reason.
"""

from typing import Iterator, Optional, Sequence

import dagster as dg

from cataloger_dagster.assets.common import TableRun
from cataloger_dagster.core.guardrails.build import RunResults, build_suite
from cataloger_dagster.core.guardrails.checks_log import load_suite, read_checks, record_check
from cataloger_dagster.core.guardrails.loop import follow_up
from cataloger_dagster.core.guardrails.diff import SuiteDiff, diff_suites
from cataloger_dagster.core.guardrails.model import GuardrailResult, GuardrailSuite, band_text
from cataloger_dagster.core.guardrails.run import ibis_query, run_suite
from cataloger_dagster.core.layout import GUARDRAILS, PROFILE
from cataloger_dagster.core.models import AnalysisResultModel, InvestigationsResult, TableProfile
from cataloger_dagster.core.shown import visible
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import CatalogStore, StoreError, table_prefix

CHECK = "guardrails"
JOB = "guardrails"
HISTORY_RUNS = 5  # earlier profiles the bands are drawn from
FAILURES_SHOWN = 10


def write_suite(
    folder: TableRun, profile: TableProfile, issues: AnalysisResultModel, investigations: InvestigationsResult
) -> tuple[GuardrailSuite, SuiteDiff]:
    """Build the table's suite from this run and store it with the run, versioned: (suite, what
    changed since the previous run's)."""
    earlier = folder.previous(PROFILE, limit=HISTORY_RUNS)
    previous = next(
        (s for s in (load_suite(folder.store, folder.prefix, ts) for ts in reversed(folder.earlier_runs)) if s), None
    )
    results = RunResults(
        profile=profile,
        analysis=issues,
        investigations=investigations,
        history=[TableProfile.model_validate(p) for _, p in reversed(earlier)],
        built_at=folder.timestamp,
        version=(previous.version + 1) if previous else 1,
        dbt_tests=folder.database.documented(folder.table).dbt_tests,
    )
    database = folder.database
    catalog = database.catalog()
    others = {name: catalog[name] for name in _referenced(issues) if name in catalog}
    suite = build_suite(database.table(folder.table), results, tables=others)
    if previous is not None:
        checks = read_checks(folder.store, database.database_name, folder.table, since=previous.built_at)
        verdicts = {i.issue_id: i.verdict for i in investigations.investigations if i.issue_id and i.verdict}
        suite = follow_up(previous, suite, checks, verdicts)
    folder.write_json(GUARDRAILS, suite.model_dump(mode="json"))
    return suite, diff_suites(previous, suite)


def _referenced(issues: AnalysisResultModel) -> set[str]:
    return {str(i.details["target_table"]) for i in issues.issues if i.details.get("target_table")}


def latest_suite(store: CatalogStore, database: str, table: str) -> Optional[GuardrailSuite]:
    prefix = table_prefix(database, table)
    for ts in reversed(store.list_runs(prefix)):
        stored = load_suite(store, prefix, ts)
        if stored is not None:
            return stored
    return None


def check_table(
    store: CatalogStore, database: DatabaseResource, table: str, key: dg.AssetKey, run_id: str = ""
) -> dg.AssetCheckResult:
    def failed(reason: str) -> dg.AssetCheckResult:
        return dg.AssetCheckResult(
            asset_key=key,
            check_name=CHECK,
            passed=False,
            severity=dg.AssetCheckSeverity.WARN,
            description=visible(reason),
        )

    try:
        suite = latest_suite(store, database.database_name, table)
    except (StoreError, ValueError) as e:
        return failed(f"the guardrails of {table!r} could not be read: {e}")
    if suite is None:
        return failed(f"no catalog run of {table!r} has written guardrails yet: catalog it first")
    results = run_suite(suite, ibis_query(database.connect()))
    check, where = record_check(store, database.database_name, suite, results, dagster_run_id=run_id)
    return _result(suite, check.results, key, where)


def _result(suite: GuardrailSuite, results: list[GuardrailResult], key: dg.AssetKey, where: str) -> dg.AssetCheckResult:
    failing = [r for r in results if not r.passed]
    broken = [r for r in failing if r.error]
    # the breaking rows' keys are the table's values: they stay in the store's log (`results`)
    lines = [
        f"{r.name}: {r.error or f'measured {r.measured:g}, allowed {band_text(r.low, r.high)}'}"
        for r in failing[:FAILURES_SHOWN]
    ]
    return dg.AssetCheckResult(
        asset_key=key,
        check_name=CHECK,
        passed=not failing,
        severity=dg.AssetCheckSeverity.ERROR if any(r.guards for r in failing) else dg.AssetCheckSeverity.WARN,
        description=visible(
            f"{len(results) - len(failing)} of {len(results)} guardrails hold"
            + (f"; {len(broken)} could not run" if broken else "")
        ),
        metadata={
            "guardrails": len(results),
            "failing": len(failing),
            "suite_version": suite.version,
            "built_from_run": suite.built_at,
            "failures": dg.MetadataValue.md(visible("\n".join(f"- {line}" for line in lines)) or "none"),
            "results": dg.MetadataValue.path(where),
        },
    )


def guardrail_check_keys(specs: Sequence[dg.AssetSpec]) -> dict[str, dg.AssetCheckKey]:
    """{table: the key of its `guardrails` check}."""
    return {str(spec.metadata["table"]): dg.AssetCheckKey(spec.key, CHECK) for spec in specs}


def build_guardrail_checks(specs: Sequence[dg.AssetSpec]) -> list[dg.AssetChecksDefinition]:
    """One `guardrails` check per table spec, all run by one step; none without tables."""
    tables = {spec.key: spec.metadata["table"] for spec in specs}
    if not tables:
        return []

    @dg.multi_asset_check(
        name="table_guardrails",
        specs=[
            dg.AssetCheckSpec(
                CHECK,
                asset=key,
                description="runs the table's guardrail suite (plain SQL written by its latest catalog run) "
                "against the database: passes when every assertion holds",
            )
            for key in tables
        ],
        can_subset=True,
    )
    def table_guardrails(
        context: dg.AssetCheckExecutionContext, store: CatalogStore, database: DatabaseResource
    ) -> Iterator[dg.AssetCheckResult]:
        for check in sorted(context.selected_asset_check_keys, key=lambda k: k.asset_key.to_user_string()):
            table = tables[check.asset_key]
            try:
                yield check_table(store, database, table, check.asset_key, context.run.run_id)
            except Exception as e:  # noqa: BLE001 - one table's failure is its own check's result
                yield dg.AssetCheckResult(
                    asset_key=check.asset_key,
                    check_name=CHECK,
                    passed=False,
                    severity=dg.AssetCheckSeverity.WARN,
                    description=visible(f"the guardrails of {table!r} could not run: {type(e).__name__}: {e}"),
                )

    return [table_guardrails]


def build_guardrails_job(checks: Sequence[dg.AssetChecksDefinition], cron: str) -> tuple[list, list]:
    """([the `guardrails` job], [its schedule, when a cron is set]); nothing without tables."""
    if not checks:
        return [], []
    job = dg.define_asset_job(
        JOB,
        selection=dg.AssetSelection.checks(*checks),
        description="Runs every table's guardrails against the database: plain SQL, no agent, no sandbox.",
    )
    schedules = [dg.ScheduleDefinition(name="guardrails_schedule", job=job, cron_schedule=cron)] if cron else []
    return [job], schedules
