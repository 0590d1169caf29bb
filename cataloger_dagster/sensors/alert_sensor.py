"""alert_sensor: after a table's catalog run, one message per Dagster run to the people concerned.

Each tick reads the `catalog_page` materializations (the last step of a table's run) since the
cursor, reads that run's issues and investigations from the store, and sends one message per
Dagster run through the `notifier` resource: new high-severity issues, regressions and history
anomalies (`core.alerts`), with links to the page and the evidence, grouped by the tables' owners
(CATALOGER_TABLE_OWNERS).

- Never twice: the cursor keeps, per table, the keys of the alerts already delivered that its
  latest run still raises; one no longer raised is forgotten, so it alerts again if it comes back.
- A delivery that fails is retried by the notifier (CATALOGER_ALERT_ATTEMPTS, doubling backoff),
  then recorded; its alerts stay unsent, so the table's next run raises them again.  The sensor
  never fails for it and runs nothing: the catalog runs are not affected.
- Every delivery, sent or failed, is an entry of the append-only log `<store>/<database>/alerts/`.

The cursor is JSON: `{"after": storage_id, "sent": {table: [alert keys]}}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import dagster as dg

from cataloger_dagster.assets.catalog_page import catalog_page
from cataloger_dagster.assets.checks import issues_for
from cataloger_dagster.core.alerts import Alert, AlertMessage, alerts_of, owner_of, unsent
from cataloger_dagster.core.layout import (
    ALERTS,
    CATALOG_PAGE,
    INVESTIGATIONS,
    ISSUES,
    new_timestamp,
    store_name,
    table_prefix,
)
from cataloger_dagster.core.models import InvestigationsResult
from cataloger_dagster.core.results import load_result
from cataloger_dagster.core.shown import visible
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.notifier import Delivery, NotifierResource
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.sensors.cursor import BadCursor, parse_cursor  # noqa: F401  (read_cursor raises it)
from cataloger_dagster.sensors.pass_rate import new_materializations
from cataloger_dagster.settings.model import CatalogerSettings, variable


def read_cursor(cursor: str | None) -> tuple[int | None, dict[str, list[str]]]:
    if not cursor:
        return None, {}

    def parse(data) -> tuple[int | None, dict[str, list[str]]]:
        after, sent = data["after"], data["sent"]
        if (after is not None and not isinstance(after, int)) or not isinstance(sent, dict):
            raise TypeError("after must be a storage id and sent an object")
        return after, {str(t): [str(k) for k in keys] for t, keys in sent.items()}

    # starting over would alert again on every table's latest findings
    return parse_cursor(
        cursor,
        parse,
        sensor="alert_sensor",
        empty_means="an empty cursor alerts again on every catalog run recorded",
        initial='{"after": null, "sent": {}}',
    )


def write_cursor(after: int | None, sent: Mapping[str, list[str]]) -> str:
    return json.dumps({"after": after, "sent": {t: sorted(k) for t, k in sorted(sent.items())}}, sort_keys=True)


def run_alerts(
    record: dg.EventLogRecord, store: CatalogStore, database: str, owners: Mapping[str, str], warn
) -> tuple[str, list[Alert]] | None:
    """(table, alerts) of one catalog_page materialization, from its run folder in the store."""
    event = record.asset_materialization
    table = record.partition_key or (event.partition if event else None)
    entry = (event.metadata or {}).get("run_folder") if event else None
    folder = getattr(entry, "value", None)
    if not table or not folder:
        warn(f"catalog_page materialization {record.storage_id} has no table partition or run_folder; ignored")
        return None
    prefix = table_prefix(database, table)
    try:
        found = issues_for(store, prefix, folder)
        if found is None:
            warn(f"{visible(table)}: no {ISSUES} in or before run folder {folder} of {store.describe()}; no alert")
            return None
        recorded = load_result(store, prefix, folder, INVESTIGATIONS, InvestigationsResult)
        investigations = recorded.investigations if recorded else []
    except ValueError as exc:
        # one unreadable run must not hold back the other tables' alerts
        warn(
            f"{visible(table)}: the issues or investigations of run folder {folder} are not readable ({exc}); no alert"
        )
        return None
    return table, alerts_of(
        table,
        owner_of(table, owners),
        found,
        investigations,
        page=as_url(store.uri(prefix, folder, CATALOG_PAGE)),
        evidence=as_url(store.uri(prefix, folder, ISSUES)),
    )


def as_url(uri: str) -> str:
    # a local store's locations are paths; a message's links are URLs
    return uri if "://" in uri else Path(uri).resolve().as_uri()


def record_delivery(store: CatalogStore, database: str, message: AlertMessage, delivery: Delivery) -> str:
    entry = {
        "at": new_timestamp(),
        "run_id": message.run_id,
        "backend": delivery.backend,
        "ok": delivery.ok,
        "attempts": delivery.attempts,
        "error": delivery.error,
        "title": message.title,
        "alerts": [{"table": a.table, "owner": a.owner, "key": a.key} for a in message.alerts],
    }
    return store.append_entry(
        f"{store_name(database)}/{ALERTS}", json.dumps(entry, indent=2).encode("utf-8"), "an alert delivery"
    )


def deliver(
    log, store: CatalogStore, database: str, notifier: NotifierResource, message: AlertMessage
) -> tuple[set[tuple[str, str]], int]:
    """Sends one run's message (per table if a name keeps it from being written whole), records
    each delivery; the (table, alert key)s delivered, and how many deliveries failed."""
    delivered: set[tuple[str, str]] = set()
    failed = 0
    for part, delivery in notifier.deliveries(message):
        where = record_delivery(store, database, part, delivery)
        if delivery.ok:
            delivered |= {(a.table, a.key) for a in part.alerts}
            log.info(f"{part.title}: sent by {delivery.backend} (try {delivery.attempts})")
        else:
            failed += 1
            log.warning(
                f"{part.title}: {delivery.backend} failed after {delivery.attempts} tries "
                f"({visible(delivery.error)}); recorded in {where}; the tables' next runs raise them again"
            )
    return delivered, failed


def alert(
    context: dg.SensorEvaluationContext,
    store: CatalogStore,
    database: DatabaseResource,
    notifier: NotifierResource,
    owners: Mapping[str, str],
) -> dg.SensorResult:
    """One tick of the sensor."""
    after, sent = read_cursor(context.cursor)
    records = new_materializations(context.instance, after, catalog_page.key)
    name = database.database_name
    messages: dict[str, AlertMessage] = {}
    raised: dict[str, list[Alert]] = {}

    def warn(message: str) -> None:
        context.log.warning(visible(message))

    for record in records:
        found = run_alerts(record, store, name, owners, warn)
        if found is None:
            continue
        table, alerts = found
        raised[table] = alerts  # a table's latest run is the one whose findings stand
        fresh = unsent(alerts, sent.get(table, []))
        if fresh:
            messages.setdefault(record.run_id, AlertMessage(run_id=record.run_id)).alerts.extend(fresh)
    delivered: set[tuple[str, str]] = set()
    failed = 0
    if messages and notifier.backend == "none":
        context.log.info(
            f"{sum(len(m.alerts) for m in messages.values())} alerts not sent: alerts are off "
            f"({variable('alert_notifier')}=none)"
        )
        messages = {}
    for message in messages.values():
        sent_now, failures = deliver(context.log, store, name, notifier, message)
        delivered |= sent_now
        failed += failures
    for table, alerts in raised.items():
        before = set(sent.get(table, []))
        sent[table] = sorted(a.key for a in alerts if a.key in before or (table, a.key) in delivered)
    after = records[-1].storage_id if records else after
    skip = None if messages else f"{len(records)} new catalog runs; nothing new to alert on"
    if failed:
        skip = f"{failed} alert messages could not be delivered (recorded in the store)"
    return dg.SensorResult(cursor=write_cursor(after, {t: k for t, k in sent.items() if k}), skip_reason=skip)


def build_alert_sensor(settings: CatalogerSettings) -> dg.SensorDefinition:
    owners = dict(settings.table_owners)

    @dg.sensor(
        name="alert_sensor",
        minimum_interval_seconds=settings.sensor_interval_s,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"After each table's catalog run, one message per run (by {variable('alert_notifier')}) on "
        "new high-severity issues, regressions and history anomalies, grouped by owner, each sent once.",
    )
    def alert_sensor(
        context: dg.SensorEvaluationContext, store: CatalogStore, database: DatabaseResource, notifier: NotifierResource
    ) -> dg.SensorResult:
        return alert(context, store, database, notifier, owners)

    return alert_sensor
