from urllib.parse import quote

import dagster as dg

from cataloger_dagster.assets.catalog_page import catalog_page
from cataloger_dagster.assets.common import GROUP, OWNERS, link
from cataloger_dagster.assets.index_automation import AFTER_TABLE_RUNS
from cataloger_dagster.resources import store as stores
from cataloger_dagster.core.investigate.outcome import standing
from cataloger_dagster.core.layout import CATALOG_PAGE, INVESTIGATIONS, ISSUES, PROFILE, SCRIPT, TIMELAPSE
from cataloger_dagster.core.models import AnalysisResultModel, InvestigationsResult, TableProfile, severity_counts
from cataloger_dagster.core.health import health_score
from cataloger_dagster.core.render.pages import IndexEntry, render_index
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.resources.store.identity import check_database_catalog


class CatalogIndexConfig(dg.Config):
    # table -> error, for tables whose run failed (the `cataloger run` command fills it); a
    # table whose name cannot be a partition key is listed from here alone
    errors: dict[str, str] = {}


def index_entry(store: CatalogStore, database: str, table: str, error: str | None) -> IndexEntry:
    prefix = stores.table_prefix(database, table)
    for ts in reversed(store.list_runs(prefix)):
        if store.read_artifact(prefix, ts, CATALOG_PAGE) is None:
            continue
        profile = TableProfile.model_validate(store.read_json(prefix, ts, PROFILE))
        found = store.read_json(prefix, ts, INVESTIGATIONS)
        investigated = InvestigationsResult.model_validate(found).investigations if found else None
        # the issues their investigation refuted are dismissed: they count nowhere
        issues = standing(AnalysisResultModel.model_validate(store.read_json(prefix, ts, ISSUES)), investigated)
        metrics = store.read_metrics(prefix, ts, SCRIPT) or {}
        pass_rate = metrics.get("pass_rate")
        return IndexEntry(
            table=table,
            row_count=profile.row_count,
            column_count=profile.column_count,
            issues_by_severity=severity_counts(i.severity for i in issues.issues),
            pass_rate=pass_rate,
            health=health_score(profile, issues, pass_rate),
            # relative to index.html, which sits in the database's folder beside the tables'
            href="/".join(quote(part, safe="") for part in (prefix.split("/")[1], ts, CATALOG_PAGE)),
            timelapse="/".join(quote(part, safe="") for part in (prefix.split("/")[1], TIMELAPSE))
            if store.has_timelapse(prefix)
            else "",
            updated=ts,
            status="failed" if error else issues.status,
            error=error,
        )
    return IndexEntry(
        table=table,
        row_count=0,
        column_count=0,
        issues_by_severity={},
        pass_rate=None,
        health=0.0,
        href="",
        updated="",
        status="failed" if error else "missing",
        error=error or "not cataloged yet: materialize this table's partition",
    )


@dg.asset(
    deps=[catalog_page],
    group_name=GROUP,
    owners=OWNERS,
    kinds={"html"},
    description="index.html over every table of the database's catalog (the tables with results in the "
    "store, and those whose run just failed), with a health score each.",
    automation_condition=AFTER_TABLE_RUNS,  # catalog_index_sensor evaluates it
)
def catalog_index(
    context: dg.AssetExecutionContext,
    config: CatalogIndexConfig,
    database: DatabaseResource,
    store: CatalogStore,
) -> dg.MaterializeResult:
    # the catalog's own stored tables: never the instance's partitions, which may hold another
    # database's tables (one DAGSTER_HOME, two databases) and not yet this one's
    check_database_catalog(store, database)
    db = database.database_name
    tables = sorted({*store.list_tables(db), *config.errors})
    entries = [index_entry(store, db, t, config.errors.get(t)) for t in tables]
    uri = store.write_index(db, render_index(database=db, tables=entries))
    return dg.MaterializeResult(
        metadata={
            "tables": len(entries),
            "failed": sum(1 for e in entries if e.status != "ok"),
            "index": link(uri),
        }
    )
