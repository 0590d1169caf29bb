"""Catalog a database without the UI: a Dagster run per batch of tables, then the index.

Used by the `cataloger run` command and by the tests.  One table that fails
does not stop the others; its error is reported and shown in the index.
How tables are batched, and run side by side: `cli/batches.py`; how a signal stops the
runs: `cli/stopping.py`; a failure's line and log: `cli/failures.py`.
"""

from __future__ import annotations

import os
from contextlib import closing, contextmanager
from dataclasses import dataclass
from traceback import format_exception
from typing import Callable, Iterator, Optional, TypedDict, Unpack

import dagster as dg
from pydantic import BaseModel, computed_field

from cataloger_dagster.assets.catalog_index import catalog_index
from cataloger_dagster.assets.common import STEP_DONE
from cataloger_dagster.assets.partitions import partition_key_problem, TABLES_PARTITIONS
from cataloger_dagster.assets.pools import settings_pool, with_pool
from cataloger_dagster.cli.batches import (
    RANGE_START,
    catalog_in_workers,
    catalog_tables,
    range_tags,
    sandbox_spares,
    table_batches,
)
from cataloger_dagster.cli.failures import RunLog, failure_line, step_failure
from cataloger_dagster.cli.findings import IssueSummary, summarize_all
from cataloger_dagster.cli.resume import ResumePlan, finish_database_run, plan_resume, start_database_run
from cataloger_dagster.cli.stopping import check_stop, stop_on_signals
from cataloger_dagster.core.history.timelapse import RunSummary
from cataloger_dagster.core.investigate.outcome import dismissed
from cataloger_dagster.core.layout import CATALOG_PAGE, table_prefix
from cataloger_dagster.core.models import AnalysisResultModel, severity_counts
from cataloger_dagster.jobs import TABLE_ASSETS
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.sandbox.pool import SandboxPool
from cataloger_dagster.resources.store.identity import claim_database_catalog
from cataloger_dagster.settings.model import CatalogerSettings, load_settings
from cataloger_dagster.settings.environment import dagster_home
from cataloger_dagster.settings.factories import plain_database
from cataloger_dagster.settings.factories import resources as make_resources, sandbox_pool
from cataloger_dagster.core.results import load_run

# the steps of each table (its progress is counted in them)
STEPS = tuple(a.key.path[-1] for a in TABLE_ASSETS)
# Dagster's console logger prints a failed step's stack traces (ERROR): the command says each
# failure in one line instead, and writes the traceback to its log file (`cli/failures.py`)
QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


class TableReport(BaseModel):
    table: str
    run: Optional[str] = None  # the run folder (timestamp) in the store
    dagster_run_id: Optional[str] = None
    status: str  # "ok" | "degraded" (some checks could not run) | "failed"
    error: Optional[str] = None  # failed: what went wrong, in one line
    log: Optional[str] = None  # failed: the file holding the error's full traceback
    # failed: the traceback, for the log file only (a worker hands it to the runner; not in `to_json`)
    traceback: Optional[str] = None
    degradations: list[str] = []  # why the table is degraded, one sentence each
    html: Optional[str] = None
    issues: list[IssueSummary] = []
    # issues their investigation refuted ("checked and dismissed"), listed apart from `issues`
    dismissed: list[IssueSummary] = []
    # found but not raised: a person dismissed them (and they stay within what was dismissed) or
    # marked them expected (`core/reviews/memory.py`); each says so in its `review`
    reviewed: list[IssueSummary] = []
    pass_rate: Optional[float] = None
    sandbox_cells: int = 0
    tokens: int = 0
    # the table's own time in its steps, each measured as it ran (a batch's shared Dagster
    # start and bookkeeping is in no table's)
    seconds: float = 0.0
    # set when the table was not run again: its run that finished earlier for the same data
    resumed: bool = False


class CatalogReport(BaseModel):
    database: str
    store: str
    catalog: str = ""  # the catalog's name: its folder in the store
    index: Optional[str] = None
    tables: list[TableReport]
    # the start of the earlier run this one resumed (it was interrupted), if any
    resumed_from: Optional[str] = None
    # what the user should know about the catalog (where its earlier results are), one sentence each
    notes: list[str] = []

    @property
    def failed(self) -> list[TableReport]:
        return [t for t in self.tables if t.status == "failed"]

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented spelling
    @property
    def totals(self) -> dict[str, dict[str, int]]:
        """Tables by outcome, and the issues of every table by severity (most severe first)."""
        outcomes = {"ok": 0, "degraded": 0, "failed": 0}
        for t in self.tables:
            outcomes[t.status] = outcomes.get(t.status, 0) + 1
        return {
            "tables": {"total": len(self.tables), **outcomes, "kept": sum(t.resumed for t in self.tables)},
            "issues": severity_counts(i.severity for t in self.tables for i in t.issues),
        }

    def to_json(self) -> str:
        """`cataloger run --json`: this report without the tracebacks (in the log file instead);
        its shape is docs/run-json-example.json's."""
        return self.model_dump_json(indent=2, exclude={"tables": {"__all__": {"traceback"}}})

    def high_severity(self) -> list[tuple[str, IssueSummary]]:
        """(table, issue) of every high-severity issue, in the tables' order."""
        return [(t.table, i) for t in self.tables for i in t.issues if i.severity == "high"]


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


def _failure(report: TableReport, result: dg.ExecuteInProcessResult) -> None:
    """The failed run's error on the report: one plain line, and the traceback for the log."""
    failed = step_failure(result)
    if failed is not None:
        step, error = failed
        report.error = failure_line(step, error)
        report.traceback = error.to_string()
        return
    for event in result.all_events:
        if event.is_failure and event.message:
            report.error = event.message.strip().splitlines()[0]
            report.traceback = event.message
            return
    report.error = "the Dagster run failed without saying why"


class CatalogOptions(TypedDict, total=False):
    """What `catalog_database` takes, each optional (see there)."""

    database: str | None
    name: str | None
    store: str | None
    agent: str | None
    sandbox: str | None
    tables: list[str] | None
    explore: bool
    exploration_rate: float | None
    instance: dg.DagsterInstance | None
    on_table_done: Callable[[TableReport], None] | None
    on_tables: Callable[[list[str]], None] | None
    on_progress: Callable[[str, str, float], None] | None
    settings: CatalogerSettings | None
    resume: bool | None
    batch: int | None
    jobs: int | None


@dataclass(frozen=True)
class RunTarget:
    """What a run catalogs, resolved before any Dagster run: the settings, the resources made of
    them, the tables asked for and those the database lists."""

    settings: CatalogerSettings
    resources: dict
    database: DatabaseResource  # closed: for its name and redacted URL, and a copy's connection
    available: list[str]
    wanted: list[str]  # asked for (default: all listed), in order, repeats kept
    refused: dict[str, str]  # asked for but not listed: why, one line each
    investigations_config: dict
    batch: int
    jobs: int

    @property
    def store(self):
        return self.resources["store"]


@dataclass(frozen=True)
class RunPlan:
    """How a run goes: the reports known before it (tables kept from an earlier run, tables that
    cannot be cataloged) and the batches of partitions to catalog, each one Dagster run."""

    run_id: str  # this run's entry in the database's log of runs
    notes: list[str]
    settled: list[TableReport]
    batches: list[list[str]]
    table_assets: list[dg.AssetsDefinition]
    resumed_from: Optional[str] = None


@dataclass(frozen=True)
class RunListeners:
    """Who hears the run as it goes (`catalog_database`'s `on_*`)."""

    on_tables: Callable[[list[str]], None] | None = None
    on_table_done: Callable[[TableReport], None] | None = None
    on_progress: Callable[[str, str, float], None] | None = None


def catalog_database(**options: Unpack[CatalogOptions]) -> CatalogReport:
    """Catalog `tables` (default: all), up to `batch` tables per Dagster run, `jobs` runs at a
    time (processes: only with a persistent instance, DAGSTER_HOME); `on_tables` hears the list
    before the first run, `on_progress(table, step, seconds)` each step of each table as it
    finishes (`STEPS` of them make a table), `on_table_done` each table's report (a batch's
    together, at its run's end).  A failed table's report names the log file holding its
    traceback (`cli/failures.py`).

    A SIGINT or SIGTERM stops it (`Interrupted`, raised): no table is counted failed for it,
    the tables finished stay in the store, and the next run resumes with the others.

    `batch` and `jobs` default to the settings' `run_batch` and `run_jobs`.
    `resume`: None resumes an interrupted run (the tables already cataloged for their current
    data are not run again), True skips such tables whatever happened before, False runs all.
    `settings` default to the environment's; `database`, `name` (the catalog's), `store`, `agent`
    and `sandbox` replace theirs.  A catalog of the same name that holds another database's
    results stops it before any run (`CatalogIdentityError`).

    Four steps: resolve what to catalog, plan the run, execute its batches, index the catalog."""
    target = resolve_target(options)
    listeners = RunListeners(options.get("on_tables"), options.get("on_table_done"), options.get("on_progress"))
    with _run_instance(options.get("instance")) as instance:
        plan = plan_run(target, instance, listeners, options.get("resume"))
        reports = execute_plan(target, plan, instance, listeners)
        return index_catalog(target, plan, instance, reports)


def resolve_target(options: CatalogOptions) -> RunTarget:
    """The settings with the options' replacements, and the tables: those the database lists,
    those asked for, and why each asked for but not listed is refused."""
    settings = options.get("settings") or load_settings()
    settings = settings.replace(
        database=options.get("database"),
        name=options.get("name"),
        store=options.get("store"),
        agent=options.get("agent"),
        sandbox=options.get("sandbox"),
    )
    batch, jobs = options.get("batch"), options.get("jobs")
    # the URL becomes this process's CATALOGER_DATABASE: Dagster keeps only that name (settings.use_database)
    res = make_resources(settings)
    investigations_config: dict = {"explore": options.get("explore", False)}
    if options.get("exploration_rate") is not None:
        investigations_config["exploration_rate"] = options.get("exploration_rate")
    tables = options.get("tables")
    # a plain resource outside Dagster, only to list the tables; each run opens its own
    db_res = plain_database(settings)
    try:
        available = db_res.list_tables()
        if not available:  # a wrong database or schema, most likely: say so rather than catalog nothing
            raise db_res.no_tables_error()
        # a table asked for that is not listed fails alone, saying why (absent, or a system catalog)
        refused = {name: db_res.missing_table(name, available) for name in tables or [] if name not in available}
    finally:
        db_res.close()
    return RunTarget(
        settings=settings,
        resources=res,
        database=db_res,
        available=available,
        wanted=list(tables or available),
        refused=refused,
        investigations_config=investigations_config,
        batch=settings.run_batch if batch is None else batch,
        jobs=settings.run_jobs if jobs is None else jobs,
    )


@contextmanager
def _run_instance(given: dg.DagsterInstance | None) -> Iterator[dg.DagsterInstance]:
    """The caller's instance as it is, or the environment's, opened here with signals stopping
    the run (`cli/stopping.py`)."""
    if given is not None:
        yield given
        return
    with stop_on_signals(), dagster_instance() as instance:
        yield instance


def plan_run(target: RunTarget, instance: dg.DagsterInstance, listeners: RunListeners, resume: bool | None) -> RunPlan:
    """Claim the catalog, add the tables' partitions, and split the tables into those settled
    already and batches of neighbour partitions to run."""
    st, db_res = target.store, target.database
    # the catalog must be this database's: checked once before anything is added or run (each
    # run's first write checks again: TableRun.open)
    notes = claim_database_catalog(st, db_res)
    # a name Dagster cannot take as a partition key fails alone, reported below
    known = [t for t in target.wanted if t in target.available and partition_key_problem(t) is None]
    existing = set(instance.get_dynamic_partitions(TABLES_PARTITIONS))
    new = [t for t in known if t not in existing]
    if new:
        instance.add_dynamic_partitions(TABLES_PARTITIONS, new)
    if listeners.on_tables is not None:
        listeners.on_tables(list(target.wanted))
    earlier = _resume_plan(st, db_res, known, resume)
    run_id = start_database_run(st, db_res.database_name, list(target.wanted))
    settled: list[TableReport] = []
    to_run = []
    for name in target.wanted:
        if name in earlier.done:
            settled.append(_resumed(st, db_res.database_name, name, earlier.done[name]))
        elif name not in target.available:
            settled.append(TableReport(table=name, status="failed", error=target.refused[name]))
        elif name not in known:
            settled.append(TableReport(table=name, status="failed", error=partition_key_problem(name)))
        else:
            to_run.append(name)
    return RunPlan(
        run_id=run_id,
        notes=notes,
        settled=settled,
        batches=table_batches(instance.get_dynamic_partitions(TABLES_PARTITIONS), to_run, target.batch),
        # each run in its database's pool: the daemon and each step count it against the limit
        table_assets=with_pool(TABLE_ASSETS, settings_pool(target.settings)),
        resumed_from=(earlier.interrupted or {}).get("at"),
    )


class _Reports:
    """The tables' reports as they come, each heard by `on_table_done`; a failure's traceback
    goes to the run's log file, which the report names."""

    def __init__(self, target: RunTarget, on_table_done: Callable[[TableReport], None] | None) -> None:
        self.by_table: dict[str, TableReport] = {}
        self._log = RunLog(target.database.database_name, target.settings.database)
        self._on_table_done = on_table_done

    def add(self, report: TableReport) -> None:
        if report.traceback:
            report.log = self._log.write(report.table, report.traceback)
        self.by_table[report.table] = report
        if self._on_table_done is not None:
            self._on_table_done(report)


def execute_plan(
    target: RunTarget, plan: RunPlan, instance: dg.DagsterInstance, listeners: RunListeners
) -> dict[str, TableReport]:
    """Every table's report, by name: the settled ones, then each batch's as its Dagster run ends
    (in worker processes with `jobs` > 1, several batches and a persistent instance)."""
    reports = _Reports(target, listeners.on_table_done)
    for report in plan.settled:
        reports.add(report)
    spares = sandbox_spares(target.batch, target.jobs)
    if target.jobs > 1 and len(plan.batches) > 1 and instance.is_persistent:
        setup = (target.settings, instance.get_ref(), target.investigations_config, spares)
        with closing(catalog_in_workers(plan.batches, target.jobs, setup, listeners.on_progress)) as reported:
            for name, data in reported:
                reports.add(
                    TableReport.model_validate_json(data)
                    if data is not None
                    else TableReport(
                        table=name,
                        status="failed",
                        error="the worker process cataloging it ended first "
                        "(killed, or out of memory?); `cataloger run --resume` catalogs the tables without a finished run",
                    )
                )
        return reports.by_table
    # each table's sandbox starts, warm, while the table before it runs: the runs share one
    # `sandbox_pool` resource (and the reference search finds each table's keys once for the
    # whole run: the resources' `run_state`)
    with SandboxPool(spares) as pool:
        kept = {**target.resources, "sandbox_pool": sandbox_pool(target.settings, pool)}
        catalog = batch_cataloger(
            kept, instance, target.investigations_config, plan.table_assets, listeners.on_progress
        )
        for names in plan.batches:
            for report in catalog(names):
                reports.add(report)
    return reports.by_table


def index_catalog(
    target: RunTarget, plan: RunPlan, instance: dg.DagsterInstance, reports: dict[str, TableReport]
) -> CatalogReport:
    """The catalog's index, written by its own Dagster run with the failed tables' errors, and
    the run's report; the run is logged finished only once its index is written."""
    st, db_res = target.store, target.database
    reports_in_order = [reports[name] for name in dict.fromkeys(target.wanted)]
    errors = {
        r.table: r.error or "failed" for r in reports_in_order if r.status == "failed" and r.table in target.available
    }
    index = dg.materialize(
        [*plan.table_assets, catalog_index],
        selection=[catalog_index],
        instance=instance,
        resources=target.resources,
        run_config={**QUIET_LOGS, "ops": {"catalog_index": {"config": {"errors": errors}}}},
        raise_on_error=False,
        tags={"cataloger/launched_by": "cli"},
    )
    check_stop()  # an index run a signal stopped is no failure either: the next run resumes
    index_uri = None
    if index.success:
        mats = index.asset_materializations_for_node("catalog_index")
        index_uri = str(mats[-1].metadata["index"].value) if mats else None
        finish_database_run(st, db_res.database_name, plan.run_id, sorted(errors))
    return CatalogReport(
        database=db_res.safe_url,
        store=st.describe(),
        catalog=db_res.database_name,
        index=index_uri,
        tables=reports_in_order,
        resumed_from=plan.resumed_from,
        notes=plan.notes,
    )


def _resume_plan(store, db_res: DatabaseResource, tables: list[str], resume: bool | None) -> ResumePlan:
    if resume is False:
        return ResumePlan()
    db = DatabaseResource(url=db_res.url, name=db_res.name)
    try:
        return plan_resume(store, db.database_name, tables, lambda name: db.fingerprint(name).value, force=bool(resume))
    finally:
        db.close()


_NO_ISSUES = {"issues": [], "summary": "", "completedAt": ""}


def _resumed(store, database: str, name: str, summary: RunSummary) -> TableReport:
    """The report of a table not run again: its earlier finished run for the same data."""
    prefix = table_prefix(database, name)
    run = load_run(store, prefix, summary.timestamp)
    stored = run.issues or AnalysisResultModel.model_validate(_NO_ISSUES)
    investigations = run.investigations.investigations if run.investigations else []
    found = summarize_all(stored.issues, investigations)
    standing = set(summary.issue_ids)
    return TableReport(
        table=name,
        run=summary.timestamp,
        status=summary.status,
        resumed=True,
        html=store.uri(prefix, summary.timestamp, CATALOG_PAGE),
        pass_rate=summary.pass_rate,
        issues=[i for i in found if i.id in standing],
        dismissed=[i for i in found if i.id not in standing],
        reviewed=summarize_all(stored.reviewed, investigations),
        sandbox_cells=summary.cells or 0,
        tokens=summary.tokens or 0,
    )


def batch_cataloger(
    res: dict,
    instance: dg.DagsterInstance,
    investigations_config: dict,
    assets=TABLE_ASSETS,
    on_progress: Callable[[str, str, float], None] | None = None,
) -> Callable[[list[str]], list[TableReport]]:
    """A function cataloging one batch of tables (neighbour partitions) into their reports;
    `on_progress(table, step, seconds)` hears each step of each table as it finishes."""
    spent: dict[str, float] = {}  # table -> its own seconds in the steps of its latest run

    def heard(table: str, step: str, seconds: float) -> None:
        spent[table] = spent.get(table, 0.0) + seconds
        if on_progress is not None:
            on_progress(table, step, seconds)

    def run(names: list[str]) -> dg.ExecuteInProcessResult:
        for name in names:  # a table run again (its batch failed on another) counts its last run
            spent[name] = 0.0
        listening = STEP_DONE.set(heard)
        try:
            return _materialize_tables(names, res, instance, investigations_config, assets)
        finally:
            STEP_DONE.reset(listening)

    def report(name: str, result: dg.ExecuteInProcessResult | None, error: BaseException | None) -> TableReport:
        if result is None:  # a definition-level failure must still not stop other tables
            return TableReport(
                table=name,
                status="failed",
                error=str(error) or type(error).__name__,
                traceback="".join(format_exception(error)),
            )
        table_report = _table_report(name, result)
        table_report.seconds = round(spent.get(name, 0.0), 3)
        return table_report

    return lambda names: catalog_tables(names, run, report)


def _materialize_tables(
    names: list[str], res, instance, investigations_config, assets=TABLE_ASSETS
) -> dg.ExecuteInProcessResult:
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
        _failure(report, result)
        return report
    page = _materialization(result, "catalog_page", name).metadata
    report.run = str(page["run_folder"].value)
    report.html = str(page["catalog_page"].value)
    issues = _table_output(result, "quality_issues", name)
    found = _table_output(result, "investigations", name)
    gone = dismissed(found.investigations)
    summaries = summarize_all(issues.issues, found.investigations)
    report.issues = [i for i in summaries if i.id not in gone]
    report.dismissed = [i for i in summaries if i.id in gone]
    report.reviewed = summarize_all(issues.reviewed, found.investigations)
    report.status = issues.status
    report.degradations = [
        f"{d.stage}" + (f" on {d.column}" if d.column else "") + f": {d.reason}" for d in issues.degradations
    ]
    report.pass_rate = found.pass_rate
    report.sandbox_cells = found.cells
    for node in ("table_understanding", "quality_issues", "investigations"):
        tokens = _materialization(result, node, name).metadata.get("tokens")
        report.tokens += int(tokens.value) if tokens is not None else 0  # type: ignore[arg-type]  # an int's
    return report


def _materialization(result: dg.ExecuteInProcessResult, node: str, name: str) -> dg.AssetMaterialization:
    """The materialization of `name`'s partition of `node` in this run."""
    return [m for m in result.asset_materializations_for_node(node) if m.partition == name][-1]
