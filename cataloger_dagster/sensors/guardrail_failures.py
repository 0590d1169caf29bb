"""guardrail_failure_sensor: after each successful run of the `guardrails` job, a table whose
guardrails started failing is marked for a full catalog run, and its owners are alerted.

- Which tables: the run's `guardrails` check evaluations that did not pass; what failed and by
  how much is read from the table's guardrail log in the store (the values never travel through
  Dagster's event log).
- Once: a guardrail that already failed in the previous check of the same suite asks for
  nothing again; each Dagster run is seen once (the run status sensor's own cursor), and each
  catalog run it requests has the run key `guardrails:<run id>:<table>`.  A table with a catalog
  run already queued or running is left to it.
- The catalog run (`catalog_table`, the table's partition) is tagged with its reason, and its
  investigation then confirms or refutes the failure (core/guardrails/loop.py).
- Alerts go through the `notifier` resource like every alert, one message per run, each
  delivery recorded in the store's alerts log; a failed delivery never stops the catalog runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from collections.abc import Mapping, Sequence

import dagster as dg

from cataloger_dagster.assets.guardrails import CHECK
from cataloger_dagster.assets.partitions import TABLES_PARTITIONS, partition_key_problem, tables_partitions
from cataloger_dagster.core.alerts import AlertMessage, guardrail_alerts, owner_of
from cataloger_dagster.core.guardrails.checks_log import check_of_run, read_checks
from cataloger_dagster.core.guardrails.loop import started_failing
from cataloger_dagster.core.layout import CATALOG_PAGE, table_prefix
from cataloger_dagster.core.shown import visible
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.notifier import NotifierResource
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.sensors.alert_sensor import as_url, deliver
from cataloger_dagster.sensors.database_change import REASON_TAG
from cataloger_dagster.settings.model import CatalogerSettings

GUARDRAIL_FAILED = "guardrail_failed"
GUARDRAILS_RUN_TAG = "cataloger/guardrails_run"
IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


def failed_tables(instance: dg.DagsterInstance, run_id: str, tables: Mapping[dg.AssetKey, str]) -> list[str]:
    """The tables whose `guardrails` check did not pass in the run, in the order they were checked."""
    found = []
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        evaluation = entry.dagster_event.asset_check_evaluation_data if entry.dagster_event else None
        if evaluation and evaluation.check_name == CHECK and not evaluation.passed:
            table = tables.get(evaluation.asset_key)
            if table is not None and table not in found:
                found.append(table)
    return found


def being_cataloged(instance: dg.DagsterInstance, job: str, table: str) -> bool:
    runs = instance.get_runs(
        dg.RunsFilter(job_name=job, statuses=IN_FLIGHT, tags={"dagster/partition": table}), limit=1
    )
    return bool(runs)


@dataclass(frozen=True)
class Watched:
    """What the sensor is built with: the user's tables by asset key, their owners, and the job
    that catalogs a table."""

    tables: Mapping[dg.AssetKey, str]
    owners: Mapping[str, str]
    catalog_job: str


def follow_failures(
    context: dg.RunStatusSensorContext,
    store: CatalogStore,
    database: DatabaseResource,
    notifier: NotifierResource,
    watched: Watched,
) -> dg.SensorResult | dg.SkipReason:
    """One evaluation: the catalog runs to request and the alerts to send for one guardrails run."""
    tables, owners, catalog_job = watched.tables, watched.owners, watched.catalog_job
    run_id = context.dagster_run.run_id
    name = database.database_name
    requests: list[dg.RunRequest] = []
    message = AlertMessage(run_id=run_id)
    partitions = set(context.instance.get_dynamic_partitions(TABLES_PARTITIONS))
    to_add: list[str] = []
    for table in failed_tables(context.instance, run_id, tables):
        try:
            found = check_of_run(store, name, table, run_id)
            if found is None:
                context.log.warning(visible(f"{table!r}: its guardrails failed but the store has no record of it"))
                continue
            check, where = found
            earlier = [c for c in read_checks(store, name, table) if c.checked_at < check.checked_at]
            fresh = started_failing(check, earlier)
        except ValueError as e:  # one unreadable log must not hold back the other tables
            context.log.warning(visible(f"{table!r}: its guardrail log is not readable ({e}); nothing requested"))
            continue
        if not fresh:
            continue
        prefix = table_prefix(name, table)
        runs = store.list_runs(prefix)
        page = as_url(store.uri(prefix, runs[-1], CATALOG_PAGE)) if runs else as_url(where)
        message.alerts.extend(
            guardrail_alerts(table, owner_of(table, owners), fresh, page=page, evidence=as_url(where))
        )
        problem = partition_key_problem(table)
        if problem:
            context.log.warning(visible(problem))
            continue
        if being_cataloged(context.instance, catalog_job, table):
            context.log.info(visible(f"{table!r}: a catalog run is already on its way; it follows up the failure"))
            continue
        if table not in partitions:
            to_add.append(table)
        requests.append(
            dg.RunRequest(
                partition_key=table,
                run_key=f"guardrails:{run_id}:{table}",
                tags={REASON_TAG: GUARDRAIL_FAILED, GUARDRAILS_RUN_TAG: run_id},
            )
        )
    if message.alerts and notifier.backend != "none":
        deliver(context.log, store, name, notifier, message)
    if not requests:
        return dg.SkipReason(f"no guardrail started failing in run {run_id}")
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[tables_partitions.build_add_request(to_add)] if to_add else [],
    )


def build_guardrail_failure_sensor(
    settings: CatalogerSettings,
    guardrails_jobs: Sequence[dg.UnresolvedAssetJobDefinition],
    catalog_job: dg.UnresolvedAssetJobDefinition,
    specs: Sequence[dg.AssetSpec],
) -> list[dg.SensorDefinition]:
    """[the sensor], or none without a `guardrails` job."""
    if not guardrails_jobs:
        return []
    tables = {spec.key: str(spec.metadata["table"]) for spec in specs}
    owners = dict(settings.table_owners)

    @dg.run_status_sensor(
        name="guardrail_failure_sensor",
        run_status=dg.DagsterRunStatus.SUCCESS,
        monitored_jobs=list(guardrails_jobs),
        request_job=catalog_job,
        minimum_interval_seconds=settings.sensor_interval_s,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="After each guardrails run, catalogs each table whose guardrails started failing "
        "(its investigation confirms or refutes the failure) and alerts its owners, once per failure.",
    )
    def guardrail_failure_sensor(
        context: dg.RunStatusSensorContext,
        store: CatalogStore,
        database: DatabaseResource,
        notifier: NotifierResource,
    ):
        return follow_failures(context, store, database, notifier, Watched(tables, owners, catalog_job.name))

    return [guardrail_failure_sensor]
