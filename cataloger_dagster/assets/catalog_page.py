import dagster as dg

from cataloger_dagster.assets.guardrails import write_suite
from cataloger_dagster.core.guardrails.dbt_schema import Descriptions
from cataloger_dagster.core.guardrails.downloads import suite_files
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
from cataloger_dagster.assets.metadata import catalog_summary, column_schema, review_metadata
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.core.history.timelapse import run_summaries, summarize_run, timelapse_rows
from cataloger_dagster.core.layout import (
    CATALOG_PAGE,
    PROFILE,
    RECENT_SUMMARY,
    RUN_SUMMARY,
    SCRIPT,
    SUMMARY_SCRIPT,
)
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    DatasetUnderstandingModel,
    InvestigationsResult,
    TableProfile,
    severity_counts,
)
from cataloger_dagster.core.render.formats import run_moment
from cataloger_dagster.core.results import ScriptMetrics, latest_results, load_run
from cataloger_dagster.core.render.pages import render_catalog_page
from cataloger_dagster.core.shown import visible
from cataloger_dagster.core.render.timelapse import render_timelapse
from cataloger_dagster.resources import store as stores
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import CatalogStore


def run_history(store: CatalogStore, prefix: str, *, limit: int = 10) -> list[dict]:
    """One row per run of the table (this one included), newest first, from its stored results."""
    history = []
    for ts, profile in latest_results(store, prefix, PROFILE, limit=limit):
        run = load_run(store, prefix, ts)
        found = run.issues.issues if run.issues else []
        metrics = run.metrics or ScriptMetrics()
        history.append(
            {
                "timestamp": ts,
                "row_count": profile.row_count,
                "fingerprint": profile.fingerprint.value,
                "issues": len(found),
                "high": severity_counts(i.severity for i in found)["high"],
                "pass_rate": metrics.pass_rate,
                "cells": metrics.cells,
                "explored": metrics.explored,
            }
        )
    return history


def write_timelapse(store: CatalogStore, database: str, table: str) -> str:
    """timelapse.html over every run of the table and its review log; where it was written."""
    prefix = stores.table_prefix(database, table)
    reviews = store.read_reviews(prefix)
    rows = timelapse_rows(run_summaries(store, prefix), reviews)
    return store.write_timelapse(prefix, render_timelapse(database=database, table=table, rows=rows, reviews=reviews))


def run_tokens(context: dg.AssetExecutionContext, table: str) -> int:
    """The agent's tokens for `table` in this run: the "tokens" metadata of the three agent stages."""
    total = 0
    for key in ("table_understanding", "quality_issues", "investigations"):
        found = context.instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(key), asset_partitions=[table]), limit=1
        )
        for record in found.records:
            mat = record.asset_materialization
            if record.run_id == context.run.run_id and mat is not None and "tokens" in mat.metadata:
                total += int(mat.metadata["tokens"].value)
    return total


@dg.asset(
    partitions_def=tables_partitions,
    group_name=GROUP,
    owners=OWNERS,
    kinds={"html"},
    ins=table_ins(
        table_profile=TableProfile,
        table_understanding=DatasetUnderstandingModel,
        quality_issues=AnalysisResultModel,
        investigations=InvestigationsResult,
    ),
    description="The table's catalog page (catalog.html): columns with statistics and charts, "
    "understanding, issues by severity, investigations with their code and evidence, run "
    "history, and this run's script against the one it started from.",
)
def catalog_page(
    context: dg.AssetExecutionContext,
    table_profile: TableProfile,
    table_understanding: DatasetUnderstandingModel,
    quality_issues: AnalysisResultModel,
    investigations: InvestigationsResult,
    database: DatabaseResource,
    store: CatalogStore,
) -> dg.MaterializeResult:
    profiles, understandings = table_input(context, table_profile), table_input(context, table_understanding)
    found, investigated = table_input(context, quality_issues), table_input(context, investigations)
    return table_result(
        context,
        each_table(
            context,
            lambda table: _page(
                context,
                TableRun.open(context, database, store, table),
                profiles(table),
                understandings(table),
                found(table),
                investigated(table),
            ),
        ),
    )


def _page(
    context: dg.AssetExecutionContext,
    folder: TableRun,
    table_profile: TableProfile,
    table_understanding: DatasetUnderstandingModel,
    quality_issues: AnalysisResultModel,
    investigations: InvestigationsResult,
) -> dict:
    store, database = folder.store, folder.database
    facts = _run_facts(context, folder, investigations)
    guardrails, downloads = _guardrails(
        context, folder, table_profile, table_understanding, quality_issues, investigations
    )
    if guardrails:
        facts["guardrails"] = (
            f"{guardrails['guardrails']} assertions, version {guardrails['guardrails_version']}; "
            f"changed since the last suite: {guardrails['guardrails_changed']}"
        )
    if guardrails.get("guardrails_followed_up"):
        facts["guardrails followed up"] = guardrails["guardrails_followed_up"]
    html = render_catalog_page(
        profile=table_profile,
        understanding=table_understanding,
        issues=quality_issues,
        investigations=investigations.investigations,
        history=run_history(store, folder.prefix),
        script=folder.read_script(SCRIPT),
        previous_script=_previous_script(folder, investigations),
        links={
            "Recent changes": RECENT_SUMMARY,
            "Catalog script": SCRIPT,
            "Summary script": SUMMARY_SCRIPT,
            **downloads,
        },
        run=facts,
        review={"database": folder.database.database_name, "store": stores.store_url(store)},
        now=run_moment(folder.timestamp),
    )
    uri = folder.write_artifact(CATALOG_PAGE, html)
    folder.write_json(
        RUN_SUMMARY,
        summarize_run(folder.timestamp, table_profile, quality_issues, investigations, tokens=facts["tokens"]),
    )
    timelapse = write_timelapse(store, database.database_name, folder.table)
    counts = severity_counts(i.severity for i in quality_issues.issues)
    return {
        "dagster/row_count": table_profile.row_count,
        "dagster/column_schema": column_schema(table_profile, table_understanding),
        "summary": catalog_summary(table_profile, table_understanding, quality_issues, investigations),
        "issues": len(quality_issues.issues),
        **{f"issues_{s}": n for s, n in counts.items()},
        **review_metadata(quality_issues),
        "pass_rate": investigations.pass_rate if investigations.pass_rate is not None else 1.0,
        "sandbox_cells": investigations.cells,
        "run_folder": folder.timestamp,
        "catalog_page": link(uri),
        "recent_summary": link(folder.uri(RECENT_SUMMARY)),
        "timelapse": link(timelapse),
        "script": link(folder.uri(SCRIPT)),
        **guardrails,
    }


def _guardrails(
    context: dg.AssetExecutionContext,
    folder: TableRun,
    table_profile: TableProfile,
    table_understanding: DatasetUnderstandingModel,
    quality_issues: AnalysisResultModel,
    investigations: InvestigationsResult,
) -> tuple[dict, dict[str, str]]:
    """The run's guardrail suite, stored with it, and in each tool's format for the page's
    downloads: its size and what changed since the last one, and the downloads' links.  A suite
    that cannot be built is a warning, never the page's failure."""
    try:
        suite, changed = write_suite(folder, table_profile, quality_issues, investigations)
    except Exception as e:  # noqa: BLE001 - the page and the results stand without guardrails
        context.log.warning(visible(f"{folder.table!r}: no guardrails this run: {type(e).__name__}: {e}"))
        return {}, {}
    described = Descriptions(
        table_understanding.summary.description, [(c.name, c.description) for c in table_understanding.columns]
    )
    downloads = {}
    for download, content in suite_files(suite, described):
        folder.write_artifact(download.filename, content)
        downloads[download.key] = download.filename
    moved = [*(f"+ {n}" for n in changed.added), *(f"- {n}" for n in changed.removed), *changed.changed]
    return {
        "guardrails": len(suite.guardrails),
        "guardrails_version": suite.version,
        "guardrails_changed": visible("; ".join(moved)) if moved else "none",
        **(
            {"guardrails_followed_up": visible("; ".join(f.sentence() for f in suite.followed_up))}
            if suite.followed_up
            else {}
        ),
    }, downloads


def _previous_script(folder: TableRun, investigations: InvestigationsResult) -> str | None:
    """The script this run started from (its own table's, or the similar table's it transferred)."""
    if not investigations.based_on:
        return None
    source = stores.table_prefix(folder.database.database_name, investigations.based_on_table or folder.table)
    return folder.store.read_script(source, investigations.based_on, SCRIPT)


def _run_facts(context: dg.AssetExecutionContext, folder: TableRun, investigations: InvestigationsResult) -> dict:
    """The page's "this run" box."""
    return {
        "timestamp": folder.timestamp,
        "dagster_run_id": context.run.run_id,
        "database": folder.database.safe_url,
        "started from": (
            f"{investigations.based_on_table or folder.table} @ {investigations.based_on}"
            if investigations.based_on
            else "explored afresh"
        ),
        "sandbox cells": investigations.cells,
        "tokens": run_tokens(context, folder.table),
    }
