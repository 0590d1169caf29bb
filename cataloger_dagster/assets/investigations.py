import time

import dagster as dg

from cataloger_dagster.assets.common import (
    GROUP,
    OWNERS,
    TableRun,
    each_table,
    link,
    per_table,
    table_input,
    table_ins,
    table_output,
)
from cataloger_dagster.assets.metadata import investigations_summary, usage_metadata
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.core.history.anomalies import SOURCE as HISTORY_SOURCE
from cataloger_dagster.core.investigate.code import referenced_tables
from cataloger_dagster.core.investigate.learning import choose_previous_script
from cataloger_dagster.core.investigate.outcome import (
    SampleSeen,
    SessionStats,
    honest_counts,
    investigations_result,
    script_metrics,
)
from cataloger_dagster.core.layout import INVESTIGATIONS, SCRIPT
from cataloger_dagster.core.sensitive.hypotheses import class_hypotheses
from cataloger_dagster.core.reviews.memory import ReviewMemory
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    DatasetUnderstandingModel,
    InvestigationsResult,
    TableProfile,
)
from cataloger_dagster.resources.agent import AgentResource
from cataloger_dagster.resources.database.snapshots import SNAPSHOT_URL
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.sandbox import SandboxResource
from cataloger_dagster.resources.sandbox.pool import SandboxPool
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.core.shown import visible


class InvestigationsConfig(dg.Config):
    explore: bool = False  # ignore earlier scripts and explore afresh (relearning)
    exploration_rate: float = 0.1  # share of runs that explore anyway (an A/B test of the ranked script)
    exploration_seed: int = 0


@dg.asset(
    partitions_def=tables_partitions,
    group_name=GROUP,
    owners=OWNERS,
    kinds={"python", "sandbox"},
    dagster_type=per_table(InvestigationsResult),
    ins=table_ins(
        table_profile=TableProfile, table_understanding=DatasetUnderstandingModel, quality_issues=AnalysisResultModel
    ),
    description="Code-backed evidence for every issue, and for every column's class of personal data, "
    "run in the sandbox over a read-only snapshot; "
    "the session is kept as catalog_script.py and fed to the next run.",
)
def investigations(
    context: dg.AssetExecutionContext,
    config: InvestigationsConfig,
    table_profile: TableProfile,
    table_understanding: DatasetUnderstandingModel,
    quality_issues: AnalysisResultModel,
    database: DatabaseResource,
    store: CatalogStore,
    sandbox: SandboxResource,
    sandbox_pool: dg.ResourceParam[SandboxPool],
    agent: AgentResource,
) -> dg.Output:
    profiles, understandings = table_input(context, table_profile), table_input(context, table_understanding)
    found = table_input(context, quality_issues)
    return table_output(
        context,
        each_table(
            context,
            lambda table: _investigations(
                context,
                config,
                TableRun.open(context, database, store, table),
                profiles(table),
                understandings(table),
                found(table),
                sandbox,
                sandbox_pool,
                agent,
            ),
        ),
    )


def _investigations(
    context: dg.AssetExecutionContext,
    config: InvestigationsConfig,
    folder: TableRun,
    table_profile: TableProfile,
    table_understanding: DatasetUnderstandingModel,
    quality_issues: AnalysisResultModel,
    sandbox: SandboxResource,
    pool: SandboxPool,
    agent: AgentResource,
) -> tuple[InvestigationsResult, dict]:
    store, database = folder.store, folder.database
    # a history finding's evidence is the stored history, which the table's snapshot cannot test:
    # the generic check would only say "inconclusive", and lower the pass rate for it
    issues = [i for i in quality_issues.issues if i.source != HISTORY_SOURCE]
    # each class of personal data the profile gave a column is tested like any finding
    issues += class_hypotheses(table_profile)
    previous, why = choose_previous_script(
        store,
        database.database_name,
        table_profile,
        {i.id for i in issues},
        explore=config.explore,
        exploration_rate=config.exploration_rate,
        exploration_seed=config.exploration_seed,
    )
    context.log.info(visible(f"{folder.table}: {len(issues)} issues to investigate; {why}"))
    run, usage, script, session = _investigate(
        context, folder, database, sandbox, pool, agent, table_profile, table_understanding, issues, previous
    )
    result = investigations_result(folder.table, run, previous, session, backend=sandbox.backend, agent=agent.kind)
    metrics = script_metrics(
        result, run, issues, table_profile, session, why=why, usage=usage.model_dump(), tokens=usage.tokens
    )
    script_uri = folder.write_script(SCRIPT, script, metrics)
    uri = folder.uri(INVESTIGATIONS)  # the IO manager writes it there
    if run.relearned:
        context.log.warning(
            visible(f"{folder.table}: the earlier script failed on {run.relearned}; investigated afresh")
        )
    return result, _metadata(
        table_profile,
        result,
        metrics,
        usage,
        session,
        folder,
        links={"script": link(script_uri), "investigations_json": link(uri)},
        explore_requested=config.explore,
    )


def _metadata(
    profile: TableProfile,
    result: InvestigationsResult,
    metrics: dict,
    usage,
    session: SessionStats,
    folder: TableRun,
    *,
    links: dict,
    explore_requested: bool,
) -> dict:
    return {
        "dagster/row_count": profile.row_count,
        "pass_rate": metrics["pass_rate"],
        "investigations": len(result.investigations),
        **{f"verdict_{v}": n for v, n in metrics["verdicts"].items()},
        "sandbox_cells": session.cells,
        "sandbox_seconds": round(session.seconds, 3),
        "explored": result.explored,
        "based_on": result.based_on or "",
        "why": metrics["why"],
        "relearned": ", ".join(result.relearned),
        "fingerprint": profile.fingerprint.value,
        **usage_metadata(usage),
        **links,
        "summary": investigations_summary(result),
        "duration_s": session.wall_seconds,
        "run_folder": folder.timestamp,
        # the pass-rate sensor counts a run asked to explore as a relearning attempt
        "explore_requested": explore_requested,
    }


def _investigate(
    context,
    folder: TableRun,
    database: DatabaseResource,
    sandbox: SandboxResource,
    pool: SandboxPool,
    agent: AgentResource,
    profile: TableProfile,
    understanding: DatasetUnderstandingModel,
    issues: list,
    previous,
):
    """One sandbox session over a snapshot of the table: the agent investigates every issue."""
    name = folder.table
    started = time.monotonic()
    # The session comes before the snapshot (from the pool: often started as the run began, or
    # cleaned after the last table), so its interpreter loads ibis while the snapshot is written
    # into its private /data.  `env` is the sandbox's whole environment: no credential of the host gets in.
    with sandbox.session(env={"DB_CONNECTION_STRING": SNAPSHOT_URL}, pool=pool) as runtime:
        snapshot = database.write_snapshot(name, runtime.data_folder, references=referenced_tables(issues))
        if snapshot.sampled:
            context.log.info(
                visible(
                    f"{name}: the sandbox sees a seeded sample of {snapshot.rows:,} of {snapshot.source_rows:,} rows"
                )
            )
        # the table's reviews reach a model as context (JSON), never the sandbox as code
        reviews = ReviewMemory(reviews=folder.store.read_reviews(folder.prefix)).for_prompt()
        run, usage = agent.investigate(runtime, profile, understanding, issues, previous, reviews=reviews)
        # a sample says so, and counts that differ from the issue's say both
        run.investigations = honest_counts(
            run.investigations, issues, SampleSeen(snapshot.rows, snapshot.source_rows, snapshot.seed)
        )
        script = runtime.get_session_script()
        cells, seconds = len(runtime.cells), runtime.sandbox_seconds
        cell_seconds = [round(c.duration_ms / 1000, 3) for c in runtime.cells]
    session = SessionStats(
        cells=cells, seconds=seconds, cell_seconds=cell_seconds, wall_seconds=round(time.monotonic() - started, 3)
    )
    return run, usage, script, session
