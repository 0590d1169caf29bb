"""Catalog a database without the UI: a Dagster run per batch of tables, then the index.

Used by the `cataloger run` command and by the tests.  One table that fails
does not stop the others; its error is reported and shown in the index.
How tables are batched, and run side by side: `cli/batches.py`.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

import dagster as dg
from pydantic import BaseModel

from cataloger_dagster.assets.catalog_index import catalog_index
from cataloger_dagster.assets.partitions import partition_key_problem, tables_partitions
from cataloger_dagster.assets.pools import settings_pool, with_pool
from cataloger_dagster.cli.batches import (
    RANGE_START, catalog_in_workers, catalog_tables, range_tags, sandbox_spares, table_batches,
)
from cataloger_dagster.cli.resume import ResumePlan, finish_database_run, plan_resume, start_database_run
from cataloger_dagster.core.history.timelapse import RunSummary
from cataloger_dagster.core.investigate.outcome import dismissed
from cataloger_dagster.core.issues.detectors import across_tables
from cataloger_dagster.core.layout import CATALOG_PAGE, ISSUES, table_prefix
from cataloger_dagster.jobs import TABLE_ASSETS
from cataloger_dagster.resources.database import DatabaseResource
from cataloger_dagster.resources.sandbox.pool import sandbox_pool
from cataloger_dagster.resources.script_store.identity import claim_database_catalog
from cataloger_dagster.settings import CatalogerSettings, dagster_home, load_settings, plain_database
from cataloger_dagster.settings import resources as make_resources

QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


class IssueSummary(BaseModel):
    id: str
    type: str
    severity: str
    category: str
    affectedColumns: list[str]
    affectedRows: Optional[int] = None


class TableReport(BaseModel):
    table: str
    run: Optional[str] = None           # the run folder (timestamp) in the store
    dagster_run_id: Optional[str] = None
    status: str                         # "ok" | "degraded" (some checks could not run) | "failed"
    error: Optional[str] = None
    degradations: list[str] = []        # why the table is degraded, one sentence each
    html: Optional[str] = None
    issues: list[IssueSummary] = []
    # issues their investigation refuted ("checked and dismissed"), listed apart from `issues`
    dismissed: list[IssueSummary] = []
    pass_rate: Optional[float] = None
    sandbox_cells: int = 0
    tokens: int = 0
    seconds: float = 0.0                # the whole Dagster run of this table
    # set when the table was not run again: its run that finished earlier for the same data
    resumed: bool = False


class CatalogReport(BaseModel):
    database: str
    store: str
    catalog: str = ""                   # the catalog's name: its folder in the store
    index: Optional[str] = None
    tables: list[TableReport]
    # the start of the earlier run this one resumed (it was interrupted), if any
    resumed_from: Optional[str] = None
    # what the user should know about the catalog (where its earlier results are), one sentence each
    notes: list[str] = []

    @property
    def failed(self) -> list[TableReport]:
        return [t for t in self.tables if t.status == "failed"]


@contextmanager
def dagster_instance() -> Iterator[dg.DagsterInstance]:
    """The persistent instance when DAGSTER_HOME is set (runs then show in the UI)."""
    home = dagster_home()
    if home:
        # a DAGSTER_HOME that does not exist yet (a fresh clone's .dagster_home) is made, not an error
        os.makedirs(home, exist_ok=True)
        with dg.DagsterInstance.get() as instance:
            yield instance
    else:
        with dg.DagsterInstance.ephemeral() as instance:
            yield instance


def _failure_message(result: dg.ExecuteInProcessResult) -> str:
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data and event.step_failure_data.error:
            err = event.step_failure_data.error
            cause = err.cause.message.strip() if err.cause else ""
            return f"{event.step_key}: {cause or err.message.strip()}"
        if event.is_failure and event.message:
            return event.message
    return "run failed"


def catalog_database(
    *,
    database: str | None = None,
    name: str | None = None,
    store: str | None = None,
    agent: str | None = None,
    sandbox: str | None = None,
    tables: list[str] | None = None,
    explore: bool = False,
    exploration_rate: float | None = None,
    instance: dg.DagsterInstance | None = None,
    on_table_done: Callable[[TableReport], None] | None = None,
    on_tables: Callable[[list[str]], None] | None = None,
    settings: CatalogerSettings | None = None,
    resume: bool | None = None,
    batch: int | None = None,
    jobs: int | None = None,
) -> CatalogReport:
    """Catalog `tables` (default: all), up to `batch` tables per Dagster run, `jobs` runs at a
    time (processes: only with a persistent instance, DAGSTER_HOME); `on_tables` hears the list
    before the first run, `on_table_done` each table's report as it finishes (a batch's together).

    `batch` and `jobs` default to the settings' `run_batch` and `run_jobs`.
    `resume`: None resumes an interrupted run (the tables already cataloged for their current
    data are not run again), True skips such tables whatever happened before, False runs all.
    `settings` default to the environment's; `database`, `name` (the catalog's), `store`, `agent`
    and `sandbox` replace theirs.  A catalog of the same name that holds another database's
    results stops it before any run (`CatalogIdentityError`)."""
    if settings is None:
        settings = load_settings()
    settings = settings.replace(database=database, name=name, store=store, agent=agent, sandbox=sandbox)
    batch = settings.run_batch if batch is None else batch
    jobs = settings.run_jobs if jobs is None else jobs
    # the URL becomes this process's CATALOGER_DATABASE: Dagster keeps only that name (settings.use_database)
    res = make_resources(settings)
    investigations_config: dict = {"explore": explore}
    if exploration_rate is not None:
        investigations_config["exploration_rate"] = exploration_rate
    st = res["store"]
    # a plain resource outside Dagster, only to list the tables; each run opens its own
    db_res = plain_database(settings)
    try:
        available = db_res.list_tables()
    finally:
        db_res.close()
    wanted = tables or available
    if instance is None:
        with dagster_instance() as inst:
            return catalog_database(
                tables=tables, explore=explore, exploration_rate=exploration_rate, instance=inst,
                on_table_done=on_table_done, on_tables=on_tables, settings=settings, resume=resume,
                batch=batch, jobs=jobs,
            )
    # the catalog must be this database's: checked once before anything is added or run (each
    # run's first write checks again: TableRun.open)
    notes = claim_database_catalog(st, db_res)
    # a name Dagster cannot take as a partition key fails alone, reported below
    known = [t for t in wanted if t in available and partition_key_problem(t) is None]
    existing = set(instance.get_dynamic_partitions(tables_partitions.name))
    new = [t for t in known if t not in existing]
    if new:
        instance.add_dynamic_partitions(tables_partitions.name, new)
    if on_tables is not None:
        on_tables(list(wanted))
    plan = _resume_plan(st, db_res, known, resume)
    run_id = start_database_run(st, db_res.database_name, list(wanted))
    # each run in its database's pool: the daemon and each step count it against the limit
    table_assets = with_pool(TABLE_ASSETS, settings_pool(settings))
    reports: dict[str, TableReport] = {}

    def done(report: TableReport) -> None:
        reports[report.table] = report
        if on_table_done is not None:
            on_table_done(report)

    to_run = []
    for name in wanted:
        if name in plan.done:
            done(_resumed(st, db_res.database_name, name, plan.done[name]))
        elif name not in available:
            done(TableReport(table=name, status="failed",
                             error=f"table {name!r} not found in {db_res.safe_url}; tables: {', '.join(available)}"))
        elif name not in known:
            done(TableReport(table=name, status="failed", error=partition_key_problem(name)))
        else:
            to_run.append(name)
    batches = table_batches(instance.get_dynamic_partitions(tables_partitions.name), to_run, batch)
    if jobs > 1 and len(batches) > 1 and instance.is_persistent:
        for name, data in catalog_in_workers(batches, jobs, (settings, instance.get_ref(), investigations_config,
                                                                     sandbox_spares(batch, jobs))):
            done(TableReport.model_validate_json(data) if data is not None else TableReport(
                table=name, status="failed", error="the worker process cataloging it ended first (killed, or out "
                "of memory?); `cataloger run --resume` catalogs the tables without a finished run"))
    else:
        # the reference search finds each table's keys once in this process; each table's
        # sandbox starts, warm, while the table before it runs
        with across_tables(), sandbox_pool(sandbox_spares(batch, jobs)):
            catalog = batch_cataloger(res, instance, investigations_config, table_assets)
            for names in batches:
                for report in catalog(names):
                    done(report)
    reports_in_order = [reports[name] for name in dict.fromkeys(wanted)]
    errors = {r.table: r.error or "failed" for r in reports_in_order if r.status == "failed" and r.table in available}
    index = dg.materialize(
        [*table_assets, catalog_index],
        selection=[catalog_index],
        instance=instance,
        resources=res,
        run_config={**QUIET_LOGS, "ops": {"catalog_index": {"config": {"errors": errors}}}},
        raise_on_error=False,
        tags={"cataloger/launched_by": "cli"},
    )
    index_uri = None
    if index.success:
        mats = index.asset_materializations_for_node("catalog_index")
        index_uri = str(mats[-1].metadata["index"].value) if mats else None
        finish_database_run(st, db_res.database_name, run_id, sorted(errors))
    return CatalogReport(database=db_res.safe_url, store=st.describe(), catalog=db_res.database_name,
                         index=index_uri, tables=reports_in_order, resumed_from=(plan.interrupted or {}).get("at"),
                         notes=notes)


def _resume_plan(store, db_res: DatabaseResource, tables: list[str], resume: bool | None) -> ResumePlan:
    if resume is False:
        return ResumePlan()
    db = DatabaseResource(url=db_res.url, name=db_res.name)
    try:
        return plan_resume(store, db.database_name, tables, lambda name: db.fingerprint(name).value,
                           force=bool(resume))
    finally:
        db.close()


def _resumed(store, database: str, name: str, summary: RunSummary) -> TableReport:
    """The report of a table not run again: its earlier finished run for the same data."""
    prefix = table_prefix(database, name)
    stored = store.read_json(prefix, summary.timestamp, ISSUES) or {}
    found = [IssueSummary.model_validate(i) for i in stored.get("issues") or []]
    standing = set(summary.issue_ids)
    return TableReport(table=name, run=summary.timestamp, status=summary.status, resumed=True,
                       html=store.uri(prefix, summary.timestamp, CATALOG_PAGE), pass_rate=summary.pass_rate,
                       issues=[i for i in found if i.id in standing], dismissed=[i for i in found if i.id not in standing],
                       sandbox_cells=summary.cells or 0, tokens=summary.tokens or 0)


def batch_cataloger(res: dict, instance: dg.DagsterInstance, investigations_config: dict,
                    assets=TABLE_ASSETS) -> Callable[[list[str]], list[TableReport]]:
    """A function cataloging one batch of tables (neighbour partitions) into their reports."""
    timings: dict[str, tuple[float, int]] = {}   # run id -> (its seconds, its tables)

    def run(names: list[str]) -> dg.ExecuteInProcessResult:
        started = time.monotonic()
        result = _materialize_tables(names, res, instance, investigations_config, assets)
        timings[result.run_id] = (time.monotonic() - started, len(names))
        return result

    def report(name: str, result: dg.ExecuteInProcessResult | None, error: BaseException | None) -> TableReport:
        if result is None:   # a definition-level failure must still not stop other tables
            return TableReport(table=name, status="failed", error=f"{type(error).__name__}: {error}")
        seconds, tables = timings[result.run_id]
        table_report = _table_report(name, result)
        table_report.seconds = round(seconds / tables, 3)
        return table_report

    return lambda names: catalog_tables(names, run, report)


def _materialize_tables(names: list[str], res, instance, investigations_config,
                        assets=TABLE_ASSETS) -> dg.ExecuteInProcessResult:
    """One Dagster run over `names`: one table, or a range of neighbour partitions."""
    target = range_tags(names)
    return dg.materialize(
        assets,
        partition_key=target.get("partition_key"),
        instance=instance,
        resources=res,
        run_config={**QUIET_LOGS, "ops": {"investigations": {"config": investigations_config}}},
        raise_on_error=False,
        tags={"cataloger/launched_by": "cli", **target.get("tags", {})},
    )


def _table_output(result: dg.ExecuteInProcessResult, node: str, name: str):
    value = result.output_for_node(node)
    return value[name] if RANGE_START in result.dagster_run.tags else value


def _table_report(name: str, result: dg.ExecuteInProcessResult) -> TableReport:
    report = TableReport(table=name, dagster_run_id=result.run_id, status="ok" if result.success else "failed")
    if not result.success:
        report.error = _failure_message(result)
        return report
    page = _materialization(result, "catalog_page", name).metadata
    report.run = str(page["run_folder"].value)
    report.html = str(page["catalog_page"].value)
    issues = _table_output(result, "quality_issues", name)
    found = _table_output(result, "investigations", name)
    gone = dismissed(found.investigations)
    report.issues = [IssueSummary.model_validate(i.model_dump()) for i in issues.issues if i.id not in gone]
    report.dismissed = [IssueSummary.model_validate(i.model_dump()) for i in issues.issues if i.id in gone]
    report.status = issues.status
    report.degradations = [f"{d.stage}" + (f" on {d.column}" if d.column else "") + f": {d.reason}"
                           for d in issues.degradations]
    report.pass_rate = found.pass_rate
    report.sandbox_cells = found.cells
    for node in ("table_understanding", "quality_issues", "investigations"):
        tokens = _materialization(result, node, name).metadata.get("tokens")
        report.tokens += int(tokens.value) if tokens is not None else 0
    return report


def _materialization(result: dg.ExecuteInProcessResult, node: str, name: str) -> dg.AssetMaterialization:
    """The materialization of `name`'s partition of `node` in this run."""
    return [m for m in result.asset_materializations_for_node(node) if m.partition == name][-1]
