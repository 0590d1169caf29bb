"""What the store says of a table's reviews, gathered for the quality_issues asset.

Learned precision reads every review of the database, from its review log (a
digest and the few entries after it), once per Dagster run.  The schema history (earlier runs'
profile.json) is read only when a review names a column this run does not have:
the column may have been renamed since.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import dagster as dg

from cataloger_dagster.assets.common import TableRun
from cataloger_dagster.core.layout import PROFILE
from cataloger_dagster.core.models import AnalysisResultModel, TableProfile
from cataloger_dagster.core.reviews.memory import ReviewMemory, opened_by
from cataloger_dagster.core.reviews.model import Review
from cataloger_dagster.core.reviews.precision import dismissal_counts
from cataloger_dagster.core.reviews.renames import renames_through
from cataloger_dagster.core.sensitive.teaching import Teaching, class_precision
from cataloger_dagster.resources.agent import AgentResource
from cataloger_dagster.resources.store import CatalogStore, table_prefix

HISTORY_RUNS = 32  # earlier profiles searched for a renamed column
_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 4
_LOCK = threading.Lock()


def database_reviews(
    store: CatalogStore, database: str, run_id: str, log: dg.DagsterLogManager | None = None
) -> dict[str, list[Review]]:
    """{table: its review log} over every table of ``database``, from the database's review log
    (a few requests however many tables), read once per Dagster run.  An entry that cannot be
    read is left out with a warning: another table's broken entry must not fail this table (its
    own log is read again, strictly)."""
    key = (store.describe(), database, run_id)
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    logs, problems = store.read_database_reviews(database)
    for problem in problems:
        if log is not None:
            log.warning(f"left out of learned precision: {problem}")
    with _LOCK:
        _CACHE[key] = logs
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return logs


def _renames(folder: TableRun, profile: TableProfile, reviews: list[Review]) -> dict[str, str]:
    present = {c.name for c in profile.columns}
    if all(c in present for r in reviews if r.issue for c in r.issue.affectedColumns):
        return {}
    earlier = folder.previous(PROFILE, limit=HISTORY_RUNS)
    history = [profile for _, profile in reversed(earlier)]
    return renames_through([*history, profile])


def table_memory(
    context: dg.AssetExecutionContext,
    folder: TableRun,
    agent: AgentResource,
    profile: TableProfile,
    previous: AnalysisResultModel | None,
    own: list[Review] | None = None,
) -> ReviewMemory:
    """The table's review memory for this run, with the agent's tolerance and precision threshold;
    ``own``: the table's review log when the caller has read it already."""
    logs = database_reviews(folder.store, folder.database.database_name, context.run.run_id, context.log)
    own = folder.store.read_reviews(folder.prefix) if own is None else own
    return agent.memory(
        reviews=own,
        dismissals=dismissal_counts({**logs, folder.table: own}),
        renames=_renames(folder, profile, own),
        opened=opened_by(previous),
    )


def table_teaching(context: dg.AssetExecutionContext, store: CatalogStore, database: str, table: str) -> Teaching:
    """What people said of the table's classes of personal data, and the classes' precision
    learned over the database, for this run's classification."""
    logs = database_reviews(store, database, context.run.run_id, context.log)
    own = store.read_reviews(table_prefix(database, table))
    return Teaching(reviews=own, precision=class_precision({**logs, table: own}))
