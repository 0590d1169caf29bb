"""Every cataloged table of a database, read from the store: each table's latest complete run (one
holding its catalog page) as a `CatalogedTable`.

A table whose stored results cannot be read (a file that is not JSON, or not of its model) is
left out with a one-line reason naming it; the others are read all the same.  A table with no
complete run yet is not cataloged, and left out silently.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from pydantic import BaseModel

from cataloger_dagster.core.cataloged import CatalogedTable, cataloged_table
from cataloger_dagster.core.layout import (
    CATALOG_PAGE,
    INVESTIGATIONS,
    ISSUES,
    PROFILE,
    SCRIPT,
    UNDERSTANDING,
    metrics_filename,
    table_prefix,
)
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    DatasetUnderstandingModel,
    InvestigationsResult,
    TableProfile,
)
from cataloger_dagster.core.shown import visible
from cataloger_dagster.resources.store.base import StoreError
from cataloger_dagster.core.results import ResultError, load_metrics, load_result

if TYPE_CHECKING:
    from cataloger_dagster.resources.store.base import CatalogStore

READERS = 8  # tables read at once: each is a few requests, which an S3 store answers in tens of ms


class UnreadableResults(ValueError):
    """A stored file of the table is not what its stage writes."""


def read_cataloged_tables(store: CatalogStore, database: str) -> tuple[list[CatalogedTable], list[str]]:
    """(the cataloged tables of ``database``, by name; one line per table left out and why)."""
    tables = store.list_tables(database)
    with ThreadPoolExecutor(max_workers=min(READERS, max(len(tables), 1))) as pool:
        read = list(pool.map(lambda table: _read_table(store, database, table), tables))
    found = [entry for entry, _ in read if entry is not None]
    return found, [problem for _, problem in read if problem]


def _read_table(store: CatalogStore, database: str, table: str) -> tuple[CatalogedTable | None, str | None]:
    try:
        return cataloged(store, database, table), None
    except (StoreError, UnreadableResults) as e:
        return None, visible(f"table {table!r} left out: {e}")


def cataloged(store: CatalogStore, database: str, table: str) -> CatalogedTable | None:
    """The table as its latest complete run left it; None when no run is complete."""
    prefix = table_prefix(database, table)
    for run in reversed(store.list_runs(prefix)):
        files = set(store._list(f"{prefix}/{run}")[1])
        if CATALOG_PAGE not in files or PROFILE not in files or ISSUES not in files:
            continue  # a run under way, or one that failed before its page
        understanding = _model(store, prefix, run, UNDERSTANDING, DatasetUnderstandingModel, files)
        metrics = load_metrics(store, prefix, run) if metrics_filename(SCRIPT) in files else None
        rate = metrics.pass_rate if metrics else None
        return cataloged_table(
            database=database,
            table=table,
            run=run,
            profile=_model(store, prefix, run, PROFILE, TableProfile, files),
            understanding=understanding,
            issues=_model(store, prefix, run, ISSUES, AnalysisResultModel, files),
            investigations=_model(store, prefix, run, INVESTIGATIONS, InvestigationsResult, files),
            pass_rate=rate if isinstance(rate, (int, float)) and not isinstance(rate, bool) else None,
            page=store.uri(prefix, run, CATALOG_PAGE),
            timelapse=store.timelapse_uri(prefix) if store.has_timelapse(prefix) else None,
        )
    return None


def _model(store: CatalogStore, prefix: str, run: str, filename: str, model: type[BaseModel], files: set[str]):
    if filename not in files:
        return None
    try:
        return load_result(store, prefix, run, filename, model)
    except ResultError as e:
        raise UnreadableResults(str(e)) from None
