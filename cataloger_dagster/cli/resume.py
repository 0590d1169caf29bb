"""Resuming `cataloger run` where a killed run stopped, from what the store already holds.

Each database run adds two entries to ``<database>/database_runs/`` (created exclusively, never
replaced): one when it starts, one when its index is written.  A run that finds the latest
entry a start without its end knows the previous run was interrupted, and catalogs only the
tables without a finished run for their current data: a table's run is finished once its
catalog page wrote ``run_summary.json``, the last thing it writes, and that summary holds the
fingerprint of the data it cataloged.  Nothing is overwritten and nothing is deleted: the
killed run's half-written folder stays, as any failed run's does.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Callable, Optional

from cataloger_dagster.core.history.timelapse import RunSummary
from cataloger_dagster.core.layout import (
    DATABASE_RUNS,
    LATEST_WINDOW,
    RUN_SUMMARY,
    new_timestamp,
    store_name,
    table_prefix,
)
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.core.results import load_result


@dataclass
class ResumePlan:
    interrupted: Optional[dict] = None  # the start entry of the run that did not finish, if any
    done: dict[str, RunSummary] = field(default_factory=dict)  # table -> its finished run for its data
    unreadable: dict[str, str] = field(default_factory=dict)  # table -> why its data could not be checked


def _log(database: str) -> str:
    return f"{store_name(database)}/{DATABASE_RUNS}"


def start_database_run(store: CatalogStore, database: str, tables: list[str]) -> str:
    """Records that a run of ``tables`` starts; its id, for `finish_database_run`."""
    run_id = uuid.uuid4().hex
    entry = {"event": "started", "id": run_id, "at": new_timestamp(), "tables": tables}
    store.append_entry(_log(database), json.dumps(entry).encode(), what="the database run's start")
    return run_id


def finish_database_run(store: CatalogStore, database: str, run_id: str, failed: list[str]) -> None:
    entry = {"event": "finished", "id": run_id, "at": new_timestamp(), "failed": failed}
    store.append_entry(_log(database), json.dumps(entry).encode(), what="the database run's end")


def interrupted_run(store: CatalogStore, database: str) -> Optional[dict]:
    """The start entry of the latest database run, if it never finished."""
    for _, data in reversed(store.read_entries(_log(database), latest=1)):
        try:
            entry = json.loads(data)
        except ValueError:
            return None  # a damaged entry decides nothing: the run catalogs everything
        return entry if isinstance(entry, dict) and entry.get("event") == "started" else None
    return None


def finished_run(store: CatalogStore, database: str, table: str) -> Optional[RunSummary]:
    """The table's latest run that finished (wrote its summary), among its latest runs."""
    prefix = table_prefix(database, table)
    for timestamp in reversed(store.list_runs(prefix)[-LATEST_WINDOW:]):
        try:
            found = load_result(store, prefix, timestamp, RUN_SUMMARY, RunSummary)
        except ValueError:
            return None
        if found is not None:
            return found
    return None


def plan_resume(
    store: CatalogStore, database: str, tables: list[str], fingerprint: Callable[[str], str], *, force: bool = False
) -> ResumePlan:
    """Which of ``tables`` need no new run: those whose latest finished run cataloged the data
    they hold now.  Looked at only after an interrupted run, or always with ``force``."""
    plan = ResumePlan(interrupted=interrupted_run(store, database))
    if plan.interrupted is None and not force:
        return plan
    for table in tables:
        summary = finished_run(store, database, table)
        if summary is None or summary.fingerprint is None:
            continue
        try:
            current = fingerprint(table)
        except Exception as exc:  # the table's own run reports the error; here it is just not skipped
            plan.unreadable[table] = f"{type(exc).__name__}: {exc}"
            continue
        if current == summary.fingerprint:
            plan.done[table] = summary
    return plan
