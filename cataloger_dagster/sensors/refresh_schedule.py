"""refresh_schedule: recatalogs every table once a day (off until someone turns it on).

One run request per `tables` partition, with run key `table:date`, so a day's refresh
of a table runs once however often the tick is retried.  A partition whose table is no
longer in the database (dropped since the change sensor last ran, or the sensor is off)
gets no run: it would only fail.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence

import dagster as dg

from cataloger_dagster.assets.partitions import TABLES_PARTITIONS
from cataloger_dagster.assets.pools import apply_settings_limit
from cataloger_dagster.jobs import CATALOG_TABLE_JOB
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.sensors.database_change import REASON_TAG, list_tables_or_fail
from cataloger_dagster.settings.model import CatalogerSettings, default, variable

CRON_ENV = variable("refresh_cron")
DEFAULT_CRON = default("refresh_cron")
SCHEDULED_REFRESH = "scheduled_refresh"


def refresh_requests(partitions: Sequence[str], tables: list[str], day: _dt.date) -> list[dg.RunRequest]:
    present = set(tables)
    return [
        dg.RunRequest(
            partition_key=table,
            run_key=f"{table}:{day.isoformat()}",
            tags={REASON_TAG: SCHEDULED_REFRESH},
        )
        for table in sorted(partitions)
        if table in present
    ]


def build_refresh_schedule(settings: CatalogerSettings) -> dg.ScheduleDefinition:
    @dg.schedule(
        name="refresh_schedule",
        cron_schedule=settings.refresh_cron,
        job_name=CATALOG_TABLE_JOB,
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description=f"Recatalogs every table (cron from {CRON_ENV}, default {DEFAULT_CRON!r}).",
    )
    def refresh_schedule(context: dg.ScheduleEvaluationContext, database: DatabaseResource):
        # the schedule may be on while the change sensor is off: its runs wait for the same limit
        apply_settings_limit(context.instance, settings, context.log.warning)
        return refresh(context, database)

    return refresh_schedule


def refresh(context: dg.ScheduleEvaluationContext, database: DatabaseResource):
    """One tick of the schedule (its settings are only its cron)."""
    when = context.scheduled_execution_time or _dt.datetime.now(_dt.timezone.utc)
    partitions = context.instance.get_dynamic_partitions(TABLES_PARTITIONS)
    if not partitions:
        return dg.SkipReason("no tables yet: the database_change_sensor adds them")
    try:
        tables = list_tables_or_fail(database, "No table is refreshed this tick.")
    finally:
        database.close()
    requests = refresh_requests(partitions, tables, when.date())
    gone = sorted(set(partitions) - set(tables))
    if gone:
        context.log.warning(f"not refreshing {len(gone)} tables no longer in the database: {gone[:20]}")
    return requests or dg.SkipReason(f"none of the {len(partitions)} partitions is still a table")
