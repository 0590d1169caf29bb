"""pass_rate_sensor: relearns a table whose investigations pass rate fell.

Each tick reads the `investigations` materializations stored since the cursor's
storage id, oldest first, so a table materialized between two ticks is never missed
however many others were materialized too.  A table whose latest pass rate is below
the threshold gets a rerun of its `catalog_table` partition with `explore: True`, so
the investigations ignore the earlier scripts and explore afresh.

So that a table that keeps failing does not loop:

- a cooldown per table between two requests (a low pass rate seen during the cooldown
  is kept as pending and requested once the cooldown is over);
- at most `CATALOGER_RELEARN_MAX_ATTEMPTS` relearning runs per table fingerprint.  Every
  relearning run counts: the sensor's own when it requests it, one started by hand with
  `explore: True` when its materialization is read.  A new fingerprint (the data
  changed) starts from zero.

The cursor is JSON: `{"after": storage_id, "tables": {table: {"last_request": epoch
seconds, "attempts": {fingerprint: n}, "pending": {...}}}}`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg

from cataloger_dagster.assets.partitions import TABLES_PARTITIONS
from cataloger_dagster.jobs import CATALOG_TABLE_JOB
from cataloger_dagster.sensors.cursor import BadCursor, parse_cursor  # noqa: F401  (BadCursor: read_cursor raises it)
from cataloger_dagster.core.shown import visible
from cataloger_dagster.sensors.database_change import FINGERPRINT_TAG, REASON_TAG
from cataloger_dagster.settings.model import CatalogerSettings, default, variable

THRESHOLD_ENV = variable("pass_rate_threshold")
COOLDOWN_ENV = variable("relearn_cooldown_s")
MAX_ATTEMPTS_ENV = variable("relearn_max_attempts")
DEFAULT_THRESHOLD = default("pass_rate_threshold")
DEFAULT_COOLDOWN_S = default("relearn_cooldown_s")
DEFAULT_MAX_ATTEMPTS = default("relearn_max_attempts")

PASS_RATE_BELOW_THRESHOLD = "pass_rate_below_threshold"
PASS_RATE_TAG = "cataloger/pass_rate"
THRESHOLD_TAG = "cataloger/threshold"
ATTEMPT_TAG = "cataloger/attempt"
MAX_ATTEMPTS_TAG = "cataloger/max_attempts"
RELEARN_RUN_CONFIG = {"ops": {"investigations": {"config": {"explore": True}}}}

INVESTIGATIONS = dg.AssetKey("investigations")
PAGE_SIZE = 200
MAX_PAGES_PER_TICK = 25  # the rest waits for the next tick: the cursor keeps the place
FINGERPRINTS_KEPT = 5  # per table, so the cursor does not grow with every change


@dataclass(frozen=True)
class Observation:
    """What one `investigations` materialization says about its table."""

    storage_id: int
    table: str
    pass_rate: float
    fingerprint: str
    relearning: bool  # the run explored afresh because relearning was asked for
    counted: bool  # this sensor already counted it as an attempt when requesting it


@dataclass(frozen=True)
class Policy:
    threshold: float
    cooldown_s: int
    max_attempts: int

    @classmethod
    def of(cls, settings: CatalogerSettings) -> Policy:
        return cls(settings.pass_rate_threshold, settings.relearn_cooldown_s, settings.relearn_max_attempts)


def read_cursor(cursor: str | None) -> tuple[int | None, dict[str, dict]]:
    if not cursor:
        return None, {}

    def parse(data) -> tuple[int | None, dict[str, dict]]:
        after = data["after"]
        tables = data["tables"]
        if (after is not None and not isinstance(after, int)) or not isinstance(tables, dict):
            raise TypeError("after must be a storage id and tables an object")
        return after, {str(k): dict(v) for k, v in tables.items()}

    # starting over would reread every materialization and might relearn every table
    return parse_cursor(
        cursor,
        parse,
        sensor="pass_rate_sensor",
        empty_means="an empty cursor rereads every investigations materialization",
        initial='{"after": null, "tables": {}}',
    )


def write_cursor(after: int | None, tables: Mapping[str, dict]) -> str:
    return json.dumps({"after": after, "tables": dict(sorted(tables.items()))}, sort_keys=True)


def _value(metadata: Mapping[str, Any], key: str) -> Any:
    entry = metadata.get(key)
    return getattr(entry, "value", entry)


def observe(record: dg.EventLogRecord, run_tags: Mapping[str, str], warn: Callable[[str], None]) -> Observation | None:
    event = record.asset_materialization
    table = record.partition_key or (event.partition if event else None)
    if event is None or not table:
        warn(f"investigations materialization {record.storage_id} has no table partition; ignored")
        return None
    metadata = event.metadata or {}
    rate = _value(metadata, "pass_rate")
    if not isinstance(rate, (int, float)) or isinstance(rate, bool):
        warn(
            f"{table}: investigations materialization {record.storage_id} has no numeric pass_rate "
            f"metadata ({rate!r}); ignored. Rematerialize the table to record one."
        )
        return None
    ours = run_tags.get(REASON_TAG) == PASS_RATE_BELOW_THRESHOLD
    return Observation(
        storage_id=record.storage_id,
        table=table,
        pass_rate=float(rate),
        fingerprint=str(_value(metadata, "fingerprint") or ""),
        relearning=ours or _value(metadata, "explore_requested") is True,
        counted=ours,
    )


def _count(state: dict, fingerprint: str, by: int = 1) -> int:
    attempts = dict(state.get("attempts") or {})
    attempts[fingerprint] = int(attempts.get(fingerprint, 0)) + by
    # dicts keep insertion order: the oldest fingerprints go first
    while len(attempts) > FINGERPRINTS_KEPT:
        del attempts[next(k for k in attempts if k != fingerprint)]
    state["attempts"] = attempts
    return attempts[fingerprint]


def relearn_request(table: str, pending: Mapping[str, Any], attempt: int, policy: Policy) -> dg.RunRequest:
    fingerprint = pending["fingerprint"]
    return dg.RunRequest(
        partition_key=table,
        run_key=f"{table}:{fingerprint}:relearn-{attempt}",
        run_config=RELEARN_RUN_CONFIG,
        tags={
            REASON_TAG: PASS_RATE_BELOW_THRESHOLD,
            PASS_RATE_TAG: f"{pending['pass_rate']:.4f}",
            THRESHOLD_TAG: f"{policy.threshold:.4f}",
            ATTEMPT_TAG: str(attempt),
            MAX_ATTEMPTS_TAG: str(policy.max_attempts),
            FINGERPRINT_TAG: fingerprint,
        },
    )


def plan_relearning(
    observations: Iterable[Observation],
    tables: dict[str, dict],
    partitions: set[str],
    policy: Policy,
    now: float,
    log: Callable[[str], None],
) -> tuple[list[dg.RunRequest], dict[str, dict]]:
    """Fold new observations into the per-table state, then decide which tables to relearn."""
    tables = {t: dict(s) for t, s in tables.items()}
    for obs in observations:
        state = tables.setdefault(obs.table, {})
        if obs.relearning and not obs.counted:
            _count(state, obs.fingerprint)
        if obs.pass_rate < policy.threshold:
            state["pending"] = {
                "pass_rate": obs.pass_rate,
                "fingerprint": obs.fingerprint,
                "storage_id": obs.storage_id,
            }
        else:
            state.pop("pending", None)  # the table recovered: an older low rate no longer matters

    requests = []
    for table in sorted(tables):
        if table not in partitions:
            if tables[table].get("pending"):
                log(f"{table}: no longer a `tables` partition (dropped); not relearned")
            del tables[table]
            continue
        state = tables[table]
        pending = state.get("pending")
        if not pending:
            continue
        done = int((state.get("attempts") or {}).get(pending["fingerprint"], 0))
        rate = f"{pending['pass_rate']:.0%} < {policy.threshold:.0%}"
        if done >= policy.max_attempts:
            log(
                f"{table}: pass rate {rate}, but {done} relearning runs were already made for fingerprint "
                f"{pending['fingerprint']} (max {policy.max_attempts}, {MAX_ATTEMPTS_ENV}); giving up until "
                "the data changes. Look at its investigations on the catalog page."
            )
            state.pop("pending")
            continue
        waited = now - float(state.get("last_request") or 0.0)
        if waited < policy.cooldown_s:
            log(
                f"{table}: pass rate {rate}; relearning waits {policy.cooldown_s - waited:.0f}s more "
                f"(cooldown {policy.cooldown_s}s, {COOLDOWN_ENV})"
            )
            continue
        attempt = _count(state, pending["fingerprint"])
        requests.append(relearn_request(table, pending, attempt, policy))
        state["last_request"] = now
        state.pop("pending")
        log(f"{table}: pass rate {rate}; relearning run requested (attempt {attempt} of {policy.max_attempts})")
    return requests, tables


def new_materializations(
    instance: dg.DagsterInstance, after: int | None, asset_key: dg.AssetKey = INVESTIGATIONS
) -> list[dg.EventLogRecord]:
    records: list[dg.EventLogRecord] = []
    for _ in range(MAX_PAGES_PER_TICK):
        page = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=asset_key, after_storage_id=after),
            limit=PAGE_SIZE,
            ascending=True,
        )
        records.extend(page.records)
        if not page.records or not page.has_more:
            break
        after = page.records[-1].storage_id
    return records


def run_tags_of(instance: dg.DagsterInstance, run_ids: Iterable[str]) -> dict[str, Mapping[str, str]]:
    ids = sorted({r for r in run_ids if r})
    if not ids:
        return {}
    return {run.run_id: run.tags for run in instance.get_runs(filters=dg.RunsFilter(run_ids=ids))}


def build_pass_rate_sensor(settings: CatalogerSettings) -> dg.SensorDefinition:
    policy = Policy.of(settings)

    @dg.sensor(
        name="pass_rate_sensor",
        job_name=CATALOG_TABLE_JOB,
        minimum_interval_seconds=settings.sensor_interval_s,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"Reruns a table with explore=True (relearning) when its investigations pass rate falls "
        f"below {THRESHOLD_ENV} (default {DEFAULT_THRESHOLD}), at most {MAX_ATTEMPTS_ENV} (default "
        f"{DEFAULT_MAX_ATTEMPTS}) times per fingerprint and once per {COOLDOWN_ENV} (default {DEFAULT_COOLDOWN_S}s).",
    )
    def pass_rate_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        return relearn(context, policy)

    return pass_rate_sensor


def relearn(context: dg.SensorEvaluationContext, policy: Policy) -> dg.SensorResult:
    """One tick of the sensor."""
    after, tables = read_cursor(context.cursor)
    records = new_materializations(context.instance, after)

    def warn(message: str) -> None:
        context.log.warning(visible(message))

    def info(message: str) -> None:
        context.log.info(visible(message))

    tags = run_tags_of(context.instance, (r.run_id for r in records))
    observations = [o for r in records if (o := observe(r, tags.get(r.run_id, {}), warn))]
    partitions = set(context.instance.get_dynamic_partitions(TABLES_PARTITIONS))
    requests, tables = plan_relearning(observations, tables, partitions, policy, time.time(), info)
    after = records[-1].storage_id if records else after
    skip = None
    if not requests:
        waiting = sorted(t for t, s in tables.items() if s.get("pending"))
        skip = f"{len(records)} new investigations materializations; no table to relearn" + (
            f" now ({len(waiting)} waiting for the cooldown: {', '.join(waiting[:10])})" if waiting else ""
        )
    return dg.SensorResult(run_requests=requests, cursor=write_cursor(after, tables), skip_reason=skip)
