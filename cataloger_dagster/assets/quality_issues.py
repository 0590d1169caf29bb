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
from cataloger_dagster.assets.metadata import review_metadata, usage_metadata
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.assets.review_memory import table_memory
from cataloger_dagster.core.fixes.followups import fix_scripts
from cataloger_dagster.core.history.anomalies import history_findings
from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.issues.detectors.references import key_profile
from cataloger_dagster.core.layout import ISSUES, KEYS
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    ColumnRule,
    DatasetUnderstandingModel,
    TableProfile,
    severity_counts,
)
from cataloger_dagster.core.shown import markdown_text, visible
from cataloger_dagster.resources.agent import AgentResource
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.run_state import RunSharedState
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.resources.store.database_log import table_facts
from cataloger_dagster.resources.store.key_profiles import stored_profiles


@dg.asset(
    partitions_def=tables_partitions,
    group_name=GROUP,
    owners=OWNERS,
    kinds={"ibis", "python"},
    dagster_type=per_table(AnalysisResultModel),
    ins=table_ins(table_profile=TableProfile, table_understanding=DatasetUnderstandingModel),
    description="Data-quality issues (AnalysisResultModel): deterministic detectors always "
    "run; the agent reviews, adds and explains.",
)
def quality_issues(
    context: dg.AssetExecutionContext,
    table_profile: TableProfile,
    table_understanding: DatasetUnderstandingModel,
    database: DatabaseResource,
    store: CatalogStore,
    agent: AgentResource,
    run_state: dg.ResourceParam[RunSharedState],
) -> dg.Output:
    profiles, understandings = table_input(context, table_profile), table_input(context, table_understanding)
    return table_output(
        context,
        each_table(
            context,
            lambda table: _issues(
                context,
                TableRun.open(context, database, store, table),
                profiles(table),
                understandings(table),
                agent,
                run_state,
            ),
        ),
    )


def _issues(
    context: dg.AssetExecutionContext,
    folder: TableRun,
    table_profile: TableProfile,
    table_understanding: DatasetUnderstandingModel,
    agent: AgentResource,
    run_state: RunSharedState,
) -> tuple[AnalysisResultModel, dict]:
    store, database = folder.store, folder.database
    keys = key_profile(table_profile)
    folder.write_json(KEYS, keys)  # first: the other tables' searches read it
    store.append_table_facts(database.database_name, table_facts(table_profile, folder.timestamp, keys))
    degradations = list(table_profile.degradations)
    catalog = database.catalog()
    found_rules: list[ColumnRule] = []
    detected = detect_issues(
        database.table(folder.table),
        table_profile,
        catalog=catalog,
        profiles=stored_profiles(store, database, catalog, folder.table),
        degradations=degradations,
        found_rules=found_rules,
        # the other tables' keys, read once for every table of this process
        shared=run_state.across_tables,
    )
    # after the detectors, before the reviews: people dismiss or expect these like any finding
    reviews = store.read_reviews(folder.prefix)
    detected = [
        *detected,
        *history_findings(store, folder.prefix, folder.timestamp, table_profile, reviews, runs=folder.earlier_runs),
    ]
    previous = folder.previous(ISSUES, limit=1)
    previous_result = previous[0][1] if previous else None
    # what people said of earlier findings decides which of these are raised, for every agent
    memory = table_memory(context, folder, agent, table_profile, previous_result, own=reviews)
    result, usage = agent.review_issues(
        table_profile,
        table_understanding,
        detected,
        previous=previous_result,
        memory=memory,
        documented=database.documented(folder.table),
    )
    result, followups_usage = agent.smart_fix_followups(table_profile, result, database.fix_target(folder.table))
    usage = usage.plus(followups_usage)
    result = result.model_copy(update={"degradations": degradations, "rules": found_rules})
    # beside the catalog script, for a person to read and run: never run against the source here
    fixes = fix_scripts(result)
    for name, script in fixes.items():
        folder.write_artifact(name, script)
    uri = folder.uri(ISSUES)  # the IO manager writes it there
    counts = severity_counts(i.severity for i in result.issues)
    context.log.info(
        visible(
            f"{folder.table}: {len(result.issues)} issues ({counts}); "
            f"{len(result.reviewed)} set aside by reviews, {len(result.quieted)} quieted"
        )
    )
    for d in degradations:
        column = f" (column {d.column!r})" if d.column else ""
        context.log.warning(visible(f"{folder.table}: degraded: {d.reason}{column}"))
    return result, {
        "dagster/row_count": table_profile.row_count,
        "issues": len(result.issues),
        "status": result.status,
        **(
            {
                "degradations": dg.MetadataValue.md(
                    "\n".join(
                        f"- {markdown_text(d.stage)}{f' {markdown_text(d.column)}' if d.column else ''}: {markdown_text(d.reason)}"
                        for d in degradations
                    )
                )
            }
            if degradations
            else {}
        ),
        **{f"issues_{s}": n for s, n in counts.items()},
        **review_metadata(result),
        "smart_fix_followups": sum(1 for i in result.issues if i.followup is not None),
        "fix_scripts": len(fixes),
        "summary": dg.MetadataValue.md(markdown_text(result.summary)),
        **usage_metadata(usage),
        "issues_json": link(uri),
    }
