from typing import Mapping, Optional
from urllib.parse import quote

import dagster as dg

from cataloger_dagster.assets.catalog_page import catalog_page
from cataloger_dagster.assets.common import GROUP, OWNERS, link
from cataloger_dagster.assets.index_automation import AFTER_TABLE_RUNS
from cataloger_dagster.resources import store as stores
from cataloger_dagster.core.alerts import NO_OWNER, owner_of
from cataloger_dagster.core.history.timelapse import RunSummary
from cataloger_dagster.core.layout import CATALOG_PAGE, RUN_SUMMARY, TIMELAPSE
from cataloger_dagster.core.results import ResultError, load_result
from cataloger_dagster.core.render.pages import IndexColumn, IndexEntry, IndexFinding, render_index
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.resources.store.cataloged import UnreadableResults, cataloged
from cataloger_dagster.core.shown import visible
from cataloger_dagster.resources.store.identity import check_database_catalog
from cataloger_dagster.settings.model import load_settings


class CatalogIndexConfig(dg.Config):
    # table -> error, for tables whose run failed (the `cataloger run` command fills it); a
    # table whose name cannot be a partition key is listed from here alone
    errors: dict[str, str] = {}
    # table -> owner, as CATALOGER_TABLE_OWNERS; None: that setting's value where the run runs
    owners: Optional[dict[str, str]] = None


FIRST_SEEN_RUNS = 20  # runs looked back through for when a finding was first found


def index_entry(
    store: CatalogStore, database: str, table: str, error: str | None, owners: Mapping[str, str] | None = None
) -> IndexEntry:
    """The table's row of the index, from its latest complete run (as Dagster's catalog shows it):
    its description, columns with their meanings, open findings with when each was first found,
    the tables it references, and its owner (`CATALOGER_TABLE_OWNERS`)."""
    prefix = stores.table_prefix(database, table)
    try:
        found = cataloged(store, database, table)
    except (stores.StoreError, UnreadableResults) as e:  # one table's bad results never hide the others
        return IndexEntry(table=table, status="failed", error=error or visible(f"its results cannot be read: {e}"))
    owner = owner_of(table, owners or {})
    owner = "" if owner == NO_OWNER else owner
    if found is None:
        return IndexEntry(
            table=table,
            status="failed" if error else "missing",
            error=error or "not cataloged yet: materialize this table's partition",
            owner=owner,
        )
    since = first_seen(store, prefix, found.run, [f.id for f in found.findings])
    folder = prefix.split("/")[1]
    return IndexEntry(
        table=table,
        row_count=found.row_count,
        column_count=len(found.columns),
        issues_by_severity=found.findings_by_severity,
        pass_rate=found.pass_rate,
        health=found.health,
        # relative to index.html, which sits in the database's folder beside the tables'
        href="/".join(quote(part, safe="") for part in (folder, found.run, CATALOG_PAGE)),
        timelapse="/".join(quote(part, safe="") for part in (folder, TIMELAPSE)) if found.timelapse else "",
        updated=found.run,
        status="failed" if error else found.status,
        error=error,
        description=found.description,
        owner=owner,
        columns=[
            IndexColumn(
                name=c.name,
                type=c.type,
                description=c.description,
                personal=list(c.personal.classes) if c.personal else [],
                personal_share=c.personal.share if c.personal else None,
                personal_reviewed=c.personal.reviewed if c.personal else False,
            )
            for c in found.columns
        ],
        findings=[
            IndexFinding(
                id=f.id,
                type=f.type,
                severity=f.severity,
                description=f.description,
                columns=list(f.columns),
                since=since.get(f.id, found.run),
            )
            for f in found.findings
        ],
        references=list(found.references),
    )


def first_seen(store: CatalogStore, prefix: str, run: str, ids: list[str]) -> dict[str, str]:
    """For each finding of ``run``, the earliest run of the unbroken line of runs up to it that
    found it too (as their run summaries say), looking back at most FIRST_SEEN_RUNS runs."""
    since = {i: run for i in ids}
    runs = store.list_runs(prefix)
    earlier = runs[: runs.index(run)] if run in runs else []
    still = set(ids)
    for timestamp in reversed(earlier[-FIRST_SEEN_RUNS:]):
        if not still:
            break
        try:
            summary = load_result(store, prefix, timestamp, RUN_SUMMARY, RunSummary)
        except ResultError:
            summary = None
        if summary is None:
            continue  # a run that stopped before its page, or a damaged summary: it says nothing either way
        present = set(summary.issue_ids)
        still &= present
        for finding in still:
            since[finding] = timestamp
    return since


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
    owners = config.owners if config.owners is not None else load_settings().table_owners
    entries = [index_entry(store, db, t, config.errors.get(t), owners) for t in tables]
    uri = store.write_index(db, render_index(database=db, tables=entries))
    return dg.MaterializeResult(
        metadata={
            "tables": len(entries),
            "failed": sum(1 for e in entries if e.status != "ok"),
            "index": link(uri),
        }
    )
