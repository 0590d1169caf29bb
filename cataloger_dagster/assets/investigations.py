import time

import dagster as dg

from cataloger_dagster.assets.common import GROUP, OWNERS, link, run_folder, table_prefix
from cataloger_dagster.assets.metadata import investigations_summary, usage_metadata
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.core.investigate.learning import SCRIPT, choose_previous_script
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    DatasetUnderstandingModel,
    InvestigationsResult,
    TableProfile,
    pass_rate,
)
from cataloger_dagster.resources.agent import AgentResource
from cataloger_dagster.resources.database import SNAPSHOT_URL, DatabaseResource
from cataloger_dagster.core.investigate.code import referenced_tables
from cataloger_dagster.resources.sandbox import SandboxResource
from cataloger_dagster.resources.script_store import ScriptStore


class InvestigationsConfig(dg.Config):
    explore: bool = False            # ignore earlier scripts and explore afresh (relearning)
    exploration_rate: float = 0.1    # share of runs that explore anyway (seed 000's A/B testing)
    exploration_seed: int = 0


@dg.asset(
    partitions_def=tables_partitions,
    group_name=GROUP,
    owners=OWNERS,
    kinds={"python", "sandbox"},
    description="Code-backed evidence for every issue, run in the sandbox over a read-only snapshot; "
    "the session is kept as catalog_script.py and fed to the next run.",
)
def investigations(
    context: dg.AssetExecutionContext,
    config: InvestigationsConfig,
    table_profile: TableProfile,
    table_understanding: DatasetUnderstandingModel,
    quality_issues: AnalysisResultModel,
    database: DatabaseResource,
    store: ScriptStore,
    sandbox: SandboxResource,
    agent: AgentResource,
) -> dg.Output[InvestigationsResult]:
    name = context.partition_key
    prefix = table_prefix(database, name)
    timestamp = run_folder(context, store, prefix)
    issues = quality_issues.issues
    previous, why = choose_previous_script(
        store, database.database_name, table_profile, {i.id for i in issues},
        explore=config.explore, exploration_rate=config.exploration_rate,
        exploration_seed=config.exploration_seed,
    )
    context.log.info(f"{name}: {len(issues)} issues to investigate; {why}")
    started = time.monotonic()
    # The session comes before the snapshot (often ready since the run began: the resource's
    # prestart_env), so its interpreter loads ibis while the snapshot is written into its
    # private /data.  `env` is the sandbox's whole environment: no credential of the host gets in.
    with sandbox.session(env={"DB_CONNECTION_STRING": SNAPSHOT_URL}) as runtime:
        snapshot = database.write_snapshot(name, runtime.data_dir, references=referenced_tables(issues))
        if snapshot.sampled:
            context.log.info(f"{name}: the sandbox sees a seeded sample of {snapshot.rows:,} of "
                             f"{snapshot.source_rows:,} rows")
        run, usage = agent.investigate(runtime, table_profile, table_understanding, issues, previous)
        script = runtime.get_session_script()
        cells, seconds = len(runtime.cells), runtime.sandbox_seconds
        cell_seconds = [round(c.duration_ms / 1000, 3) for c in runtime.cells]
    rate = pass_rate(run.investigations)
    verdicts = {v: sum(1 for i in run.investigations if i.verdict == v)
                for v in ("confirmed", "refuted", "inconclusive")}
    answered = [i.issue_id for i in run.investigations if i.success and i.verdict]
    result = InvestigationsResult(
        table=name,
        investigations=run.investigations,
        pass_rate=rate,
        cells=cells,
        sandbox_seconds=round(seconds, 3),
        explored=previous is None,
        based_on=previous.timestamp if previous else None,
        based_on_table=previous.table if previous and previous.table != name else None,
        reused=run.reused,
        relearned=run.relearned,
        refreshed=run.refreshed,
        backend=sandbox.backend,
        agent=agent.kind,
    )
    metrics = {
        "cells": cells,
        "seconds": round(seconds, 3),
        "cell_seconds": cell_seconds,
        "wall_seconds": round(time.monotonic() - started, 3),
        "pass_rate": rate if rate is not None else 1.0,
        "investigations": len(run.investigations),
        "answered": answered,
        "coverage": len(answered) / len(issues) if issues else 1.0,
        "verdicts": verdicts,
        "explored": previous is None,
        "based_on": result.based_on,
        "based_on_table": result.based_on_table,
        "reused": run.reused,
        "relearned": run.relearned,
        "refreshed": run.refreshed,
        "reuse_error": run.reuse_error,
        "why": why,
        "schema_hash": table_profile.fingerprint.schema_hash,
        "fingerprint": table_profile.fingerprint.value,
        "agent": agent.kind,
        "tokens": usage.tokens,
        "usage": usage.model_dump(),
        "backend": sandbox.backend,
    }
    script_uri = store.write_script_with_metrics(prefix, timestamp, SCRIPT, script, metrics)
    uri = store.write_json(prefix, timestamp, "investigations.json", result)
    if run.relearned:
        context.log.warning(f"{name}: the earlier script failed on {run.relearned}; investigated afresh")
    return dg.Output(
        result,
        metadata={
            "dagster/row_count": table_profile.row_count,
            "pass_rate": rate if rate is not None else 1.0,
            "investigations": len(run.investigations),
            **{f"verdict_{v}": n for v, n in verdicts.items()},
            "sandbox_cells": cells,
            "sandbox_seconds": round(seconds, 3),
            "explored": previous is None,
            "based_on": result.based_on or "",
            "why": why,
            "relearned": ", ".join(run.relearned),
            "fingerprint": table_profile.fingerprint.value,
            **usage_metadata(usage),
            "script": link(script_uri),
            "investigations_json": link(uri),
            "summary": investigations_summary(result),
            "duration_s": metrics["wall_seconds"],
            "run_folder": timestamp,
            # the pass-rate sensor counts a run asked to explore as a relearning attempt
            "explore_requested": config.explore,
        },
    )
