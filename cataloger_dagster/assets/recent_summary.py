import dagster as dg

from cataloger_dagster.assets.common import (
    GROUP, OWNERS, link, previous_artifacts, run_folder, table_prefix,
)
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.core.models import AnalysisResultModel, InvestigationsResult, TableProfile
from cataloger_dagster.core.history.recent_changes import compare_runs, render_recent_summary, summary_script
from cataloger_dagster.resources.database import DatabaseResource
from cataloger_dagster.resources.script_store import ScriptStore

PAGE = "recent_summary.html"
SUMMARY_SCRIPT = "summary_script.py"


@dg.asset(
    partitions_def=tables_partitions,
    group_name=GROUP,
    owners=OWNERS,
    kinds={"html", "python"},
    description="What changed since the table's previous run (rows, schema, fingerprint, "
    "distributions, issues new and resolved, verdicts) as recent_summary.html, with "
    "summary_script.py, a standalone script that recomputes the changes from the database.",
)
def recent_summary(
    context: dg.AssetExecutionContext,
    table_profile: TableProfile,
    quality_issues: AnalysisResultModel,
    investigations: InvestigationsResult,
    database: DatabaseResource,
    store: ScriptStore,
) -> dg.MaterializeResult:
    name = context.partition_key
    prefix = table_prefix(database, name)
    timestamp = run_folder(context, store, prefix)
    # the latest earlier run that got as far as profiling the table
    found = previous_artifacts(store, prefix, "profile.json", before=timestamp, limit=1)
    previous = None
    if found:
        ts, profile = found[0]
        previous = {"timestamp": ts, "profile": profile,
                    "issues": store.read_json(prefix, ts, "issues.json"),
                    "investigations": store.read_json(prefix, ts, "investigations.json")}
    current = {"timestamp": timestamp, "profile": table_profile.model_dump(mode="json"),
               "issues": quality_issues.model_dump(mode="json"),
               "investigations": investigations.model_dump(mode="json")}
    summary = compare_runs(previous, current)
    links = {"Summary script": SUMMARY_SCRIPT}
    if previous:
        links["Previous run"] = f"../{previous['timestamp']}/catalog.html"
    html = render_recent_summary(summary, database=database.database_name, links=links)
    uri = store.write_artifact(prefix, timestamp, PAGE, html)
    script = summary_script(name, previous["profile"] if previous else None,
                            previous_timestamp=previous["timestamp"] if previous else None)
    script_uri = store.write_script(prefix, timestamp, SUMMARY_SCRIPT, script)
    for line in summary.headline:
        context.log.info(f"{name}: {line}")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": table_profile.row_count,
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
            "summary": dg.MetadataValue.md("\n".join(f"- {line}" for line in summary.headline)),
            "recent_summary": link(uri),
            "summary_script": link(script_uri),
            "catalog_page": link(store.uri(prefix, timestamp, "catalog.html")),
        }
    )
