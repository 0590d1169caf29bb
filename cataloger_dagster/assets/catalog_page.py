import dagster as dg

from cataloger_dagster.assets.common import (
    GROUP, OWNERS, previous_artifacts, run_folder, table_prefix,
)
from cataloger_dagster.assets.quality_issues import severity_counts
from cataloger_dagster.models import AnalysisResultModel, DatasetUnderstandingModel, TableProfile
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.pages import render_catalog_page
from cataloger_dagster.resources.database import DatabaseResource
from cataloger_dagster.resources.script_store import ScriptStore


def run_history(store: ScriptStore, prefix: str, *, limit: int = 10) -> list[dict]:
    """One row per earlier run of the table, newest first, from its stored JSON."""
    history = []
    for ts, profile in previous_artifacts(store, prefix, "profile.json", limit=limit):
        issues = store.read_json(prefix, ts, "issues.json") or {}
        found = issues.get("issues", [])
        history.append(
            {
                "timestamp": ts,
                "row_count": profile.get("row_count"),
                "fingerprint": (profile.get("fingerprint") or {}).get("value"),
                "issues": len(found),
                "high": sum(1 for i in found if i.get("severity") == "high"),
            }
        )
    return history


@dg.asset(
    partitions_def=tables_partitions,
    group_name=GROUP,
    owners=OWNERS,
    kinds={"html"},
    description="The table's catalog page (catalog.html): columns with statistics and charts, "
    "understanding, issues by severity, run history.",
)
def catalog_page(
    context: dg.AssetExecutionContext,
    table_profile: TableProfile,
    table_understanding: DatasetUnderstandingModel,
    quality_issues: AnalysisResultModel,
    database: DatabaseResource,
    store: ScriptStore,
) -> dg.MaterializeResult:
    name = context.partition_key
    prefix = table_prefix(database, name)
    timestamp = run_folder(context, store, prefix)
    html = render_catalog_page(
        profile=table_profile,
        understanding=table_understanding,
        issues=quality_issues,
        history=run_history(store, prefix),
        run={"timestamp": timestamp, "dagster_run_id": context.run.run_id, "database": database.safe_url},
    )
    uri = store.write_artifact(prefix, timestamp, "catalog.html", html)
    counts = severity_counts(quality_issues)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": table_profile.row_count,
            "issues": len(quality_issues.issues),
            **{f"issues_{s}": n for s, n in counts.items()},
            "run_folder": timestamp,
            "catalog_page": dg.MetadataValue.url(uri) if uri.startswith("s3://") else dg.MetadataValue.path(uri),
        }
    )
