"""database_change_sensor: keeps `tables` in step with the database and reruns changed tables.

The cursor holds every table's fingerprint value as JSON (`{"fingerprints": {table: value}}`).
Each tick first gives the database's pool its limit (assets/pools.py), so that the runs it
requests wait queued beyond CATALOGER_DATABASE_CONCURRENCY; then it lists the tables,
fingerprints each one (one query per table), and:

- adds a partition for a table that has none, and deletes the partition of a dropped
  table (its stored history in the store is left alone);
- requests a run of `catalog_table` for each table whose fingerprint differs from the
  cursor's, with run key `table:fingerprint`, so the daemon runs one change once;
- requests one run of the `guardrails` job over the changed tables that have a guardrail suite
  (cheap: plain SQL, no agent), run key `guardrails:` and their `table:fingerprint`s, so a
  failing guardrail is seen (and alerted on) before the catalog run ends;
- a table that cannot be fingerprinted (a broken view, no permission) is skipped with a
  warning and keeps its old cursor entry, so it is noticed again once it is fixed.

A database that cannot be reached fails the tick with the reason; the daemon then keeps
the previous cursor, so nothing is lost and the next tick retries.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence

import dagster as dg

from cataloger_dagster.assets.partitions import TABLES_PARTITIONS, partition_key_problem, tables_partitions
from cataloger_dagster.assets.pools import apply_settings_limit
from cataloger_dagster.assets.guardrails import JOB as GUARDRAILS_JOB
from cataloger_dagster.jobs import CATALOG_TABLE_JOB
from cataloger_dagster.core.models import Fingerprint
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.core.redaction import scrub_secrets
from cataloger_dagster.sensors.cursor import BadCursor, parse_cursor  # noqa: F401  (BadCursor: read_cursor raises it)
from cataloger_dagster.settings.model import CatalogerSettings, default, variable
from cataloger_dagster.core.shown import visible

INTERVAL_ENV = variable("sensor_interval_s")
DEFAULT_INTERVAL_S = default("sensor_interval_s")

REASON_TAG = "cataloger/reason"
FINGERPRINT_TAG = "cataloger/fingerprint"
PREVIOUS_FINGERPRINT_TAG = "cataloger/previous_fingerprint"
NEW_TABLE = "new_table"
FINGERPRINT_CHANGED = "fingerprint_changed"


class DatabaseUnreachable(RuntimeError):
    """The sensor could not list the database's tables; the tick fails, the cursor stays."""


def read_cursor(cursor: str | None) -> dict[str, str]:
    """Table -> fingerprint value from the stored cursor ({} on the first tick)."""
    if not cursor:
        return {}

    def parse(data) -> dict[str, str]:
        fingerprints = data["fingerprints"]
        if not isinstance(fingerprints, dict):
            raise TypeError("fingerprints is not an object")
        return {str(k): str(v) for k, v in fingerprints.items()}

    return parse_cursor(
        cursor,
        parse,
        sensor="database_change_sensor",
        empty_means="an empty cursor reruns every table",
        initial='{"fingerprints": {}}',
    )


def write_cursor(fingerprints: Mapping[str, str]) -> str:
    return json.dumps({"fingerprints": dict(sorted(fingerprints.items()))}, sort_keys=True)


def run_key(table: str, fingerprint: str) -> str:
    return f"{table}:{fingerprint}"


def plan_changes(
    tables: Iterable[str],
    fingerprint_of: Callable[[str], Fingerprint],
    previous: Mapping[str, str],
    partitions: Iterable[str],
    warn: Callable[[str], None],
    guarded: Mapping[str, dg.AssetCheckKey] | None = None,
) -> dg.SensorResult:
    """The sensor's decision for one tick, given the database's tables and the stored state."""
    tables = sorted(set(tables))
    existing = set(partitions)
    to_add, to_delete, requests = [], sorted(existing - set(tables)), []
    cursor: dict[str, str] = {}
    skipped = []
    checked: list[tuple[str, str]] = []
    for table in tables:
        problem = partition_key_problem(table)
        if problem:
            warn(problem)
            skipped.append(table)
            continue
        if table not in existing:
            to_add.append(table)
        try:
            fingerprint = fingerprint_of(table).value
        except Exception as exc:  # noqa: BLE001 - one broken table must not stop the others
            warn(
                f"table {table!r} skipped this tick, its fingerprint failed "
                f"({type(exc).__name__}: {exc}); fix the table or view, the next tick retries"
            )
            skipped.append(table)
            if table in previous:
                cursor[table] = previous[table]
            continue
        cursor[table] = fingerprint
        old = previous.get(table)
        if old == fingerprint:
            continue
        tags = {REASON_TAG: NEW_TABLE if old is None else FINGERPRINT_CHANGED, FINGERPRINT_TAG: fingerprint}
        if old is not None:
            tags[PREVIOUS_FINGERPRINT_TAG] = old
        requests.append(
            dg.RunRequest(
                job_name=CATALOG_TABLE_JOB, partition_key=table, run_key=run_key(table, fingerprint), tags=tags
            )
        )
        if old is not None and guarded and table in guarded:
            checked.append((table, fingerprint))
    if checked:
        requests.append(
            dg.RunRequest(
                job_name=GUARDRAILS_JOB,
                run_key="guardrails:" + ",".join(run_key(t, f) for t, f in checked),
                asset_selection=[],
                asset_check_keys=[guarded[t] for t, _ in checked],  # type: ignore[index]
                tags={REASON_TAG: FINGERPRINT_CHANGED},
            )
        )

    partition_requests: list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest] = []
    if to_add:
        partition_requests.append(tables_partitions.build_add_request(to_add))
    if to_delete:
        partition_requests.append(tables_partitions.build_delete_request(to_delete))
    skip_reason = None
    if not requests:
        skip_reason = f"no table changed ({len(tables)} tables checked" + (
            f", {len(skipped)} skipped: {', '.join(skipped[:10])})" if skipped else ")"
        )
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=partition_requests,
        cursor=write_cursor(cursor),
        skip_reason=skip_reason,
    )


def list_tables_or_fail(database: DatabaseResource, consequence: str) -> list[str]:
    try:
        return database.list_tables()
    except Exception as exc:  # noqa: BLE001 - whatever the driver raises, the tick fails the same way
        message = scrub_secrets(str(exc), database.url)
        raise DatabaseUnreachable(
            f"cannot reach the database {database.safe_url} ({type(exc).__name__}: {message}); "
            f"check CATALOGER_DATABASE and that the database is up. {consequence}"
        ) from None


def build_database_change_sensor(
    settings: CatalogerSettings,
    catalog_job: dg.UnresolvedAssetJobDefinition | None = None,
    guardrails_jobs: Sequence[dg.UnresolvedAssetJobDefinition] = (),
    guarded: Mapping[str, dg.AssetCheckKey] | None = None,
) -> dg.SensorDefinition:
    """The sensor; given the `guardrails` job and the guarded tables' checks, it also runs the
    changed tables' guardrails."""
    targets = (
        {"jobs": [catalog_job, *guardrails_jobs]}
        if catalog_job and guardrails_jobs
        else {"job_name": CATALOG_TABLE_JOB}
    )
    guarded = guarded if guardrails_jobs else None

    @dg.sensor(
        name="database_change_sensor",
        **targets,  # type: ignore[arg-type]
        minimum_interval_seconds=settings.sensor_interval_s,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Adds a partition of tables per new table, removes dropped ones, and catalogs "
        f"each table whose fingerprint changed (every {INTERVAL_ENV} seconds).",
    )
    def database_change_sensor(context: dg.SensorEvaluationContext, database: DatabaseResource) -> dg.SensorResult:
        # before any run is requested: the runs it requests wait for this limit
        apply_settings_limit(context.instance, settings, context.log.warning)
        return detect_changes(context, database, guarded)

    return database_change_sensor


def detect_changes(
    context: dg.SensorEvaluationContext,
    database: DatabaseResource,
    guarded: Mapping[str, dg.AssetCheckKey] | None = None,
) -> dg.SensorResult:
    """One tick of the sensor (its settings are only its interval)."""
    previous = read_cursor(context.cursor)
    try:
        tables = list_tables_or_fail(database, "The cursor is kept and the next tick retries.")
        partitions = context.instance.get_dynamic_partitions(TABLES_PARTITIONS)
        result = plan_changes(
            tables,
            database.fingerprint,
            previous,
            partitions,
            lambda message: context.log.warning(visible(message)),
            guarded,
        )
    finally:
        # An open DuckDB handle, even read-only, locks writers out of the file between ticks.
        database.close()
    context.log.info(
        visible(
            f"{len(tables)} tables; {len(result.run_requests or [])} runs requested; partitions added "
            f"{_keys(result, dg.AddDynamicPartitionsRequest)}, removed {_keys(result, dg.DeleteDynamicPartitionsRequest)}"
        )
    )
    return result


def _keys(result: dg.SensorResult, kind: type) -> list[str]:
    return [k for r in result.dynamic_partitions_requests or [] if isinstance(r, kind) for k in r.partition_keys]
