# no `from __future__ import annotations`: Dagster reads the config class from its annotation
import dagster as dg
from pydantic import Field

from cataloger_dagster.assets.common import (
    GROUP,
    OWNERS,
    TableRun,
    each_table,
    link,
    table_input,
    table_ins,
    table_result,
)
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.core.layout import (
    CATALOG_PAGE,
    PROFILE,
    RECENT_SUMMARY,
    SUMMARY_SCRIPT,
)
from cataloger_dagster.core.models import AnalysisResultModel, InvestigationsResult, TableProfile
from cataloger_dagster.core.history.recent_changes import RunResults, compare_runs, summary_script
from cataloger_dagster.core.results import StoredRun
from cataloger_dagster.core.render.recent_summary import render_recent_summary
from cataloger_dagster.core.history.timelapse import recent_summaries, summarize_run
from cataloger_dagster.core.shown import markdown_text, visible
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import CatalogStore

PAGE = RECENT_SUMMARY
DEFAULT_RUNS = 10


class RecentSummaryConfig(dg.Config):
    runs: int = Field(DEFAULT_RUNS, ge=2, description="the runs the trend covers, this one included")


@dg.asset(
    partitions_def=tables_partitions,
    group_name=GROUP,
    owners=OWNERS,
    kinds={"html", "python"},
    ins=table_ins(table_profile=TableProfile, quality_issues=AnalysisResultModel, investigations=InvestigationsResult),
    description="What changed since the table's previous run (rows, schema, fingerprint, "
    "distributions, issues new and resolved, verdicts) and the trend over its last runs (rows, "
    "issues, health, pass rate; config `runs`, default 10) as recent_summary.html, with "
    "summary_script.py, a standalone script that recomputes the changes from the database.",
)
def recent_summary(
    context: dg.AssetExecutionContext,
    config: RecentSummaryConfig,
    table_profile: TableProfile,
    quality_issues: AnalysisResultModel,
    investigations: InvestigationsResult,
    database: DatabaseResource,
    store: CatalogStore,
) -> dg.MaterializeResult:
    profiles, found = table_input(context, table_profile), table_input(context, quality_issues)
    investigated = table_input(context, investigations)
    return table_result(
        context,
        each_table(
            context,
            lambda table: _summary(
                context,
                config,
                TableRun.open(context, database, store, table),
                profiles(table),
                found(table),
                investigated(table),
            ),
        ),
    )


def _summary(
    context: dg.AssetExecutionContext,
    config: RecentSummaryConfig,
    folder: TableRun,
    table_profile: TableProfile,
    quality_issues: AnalysisResultModel,
    investigations: InvestigationsResult,
) -> dict:
    store, database = folder.store, folder.database
    previous = _previous_run(folder)
    current = RunResults(folder.timestamp, table_profile, quality_issues, investigations)
    trend = recent_summaries(store, folder.prefix, before=folder.timestamp, limit=config.runs - 1)
    trend.append(summarize_run(folder.timestamp, table_profile, quality_issues, investigations))
    summary = compare_runs(previous, current, trend=trend)
    links = {"Summary script": SUMMARY_SCRIPT}
    if previous:
        links["Previous run"] = f"../{previous.timestamp}/{CATALOG_PAGE}"
    html = render_recent_summary(summary, database=database.database_name, links=links)
    uri = folder.write_artifact(PAGE, html)
    script = summary_script(
        folder.table,
        previous.profile if previous else None,
        previous_timestamp=previous.timestamp if previous else None,
        trend=trend[:-1],
    )
    script_uri = folder.write_script(SUMMARY_SCRIPT, script)
    for line in summary.headline:
        context.log.info(visible(f"{folder.table}: {line}"))
    return {
        "dagster/row_count": table_profile.row_count,
        **_change_counts(summary),
        "summary": dg.MetadataValue.md("\n".join(f"- {markdown_text(line)}" for line in summary.headline)),
        "recent_summary": link(uri),
        "summary_script": link(script_uri),
        "catalog_page": link(folder.uri(CATALOG_PAGE)),
    }


def _previous_run(folder: TableRun) -> StoredRun | None:
    """The latest earlier run that got as far as profiling the table."""
    found = folder.previous(PROFILE, limit=1)
    return folder.run(found[0][0]) if found else None


def _change_counts(summary) -> dict:
    return {
        "first_run": summary.first_run,
        "previous_run": summary.previous_timestamp or "",
        "rows_delta": summary.rows_delta,
        "rows_delta_pct": summary.rows_delta_pct if summary.rows_delta_pct is not None else 0.0,
        "schema_changes": 0 if summary.first_run else summary.schema_changes,
        "fingerprint_changed": summary.fingerprint_changed,
        "notable_shifts": summary.notable_shifts,
        "issues_new": len(summary.issues_new),
        "issues_resolved": len(summary.issues_resolved),
        "verdicts_changed": len(summary.verdict_changes),
        "trend_runs": len(summary.trend),
    }
