"""One `guardrails` run of the definitions the environment's settings build, and the failure
sensor's evaluation of it, as Dagster's daemon would tick it after the run."""

from __future__ import annotations

import dagster as dg

from cataloger_dagster.assets.guardrails import JOB
from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.settings.factories import resources
from cataloger_dagster.settings.model import load_settings

SENSOR = "guardrail_failure_sensor"


def guardrails_then_sensor(instance: dg.DagsterInstance):
    """(the guardrails run's result, what the sensor returned for it)."""
    settings = load_settings()
    defs = build_definitions(settings)
    run = defs.resolve_job_def(JOB).execute_in_process(instance=instance)
    assert run.success
    used = {k: v for k, v in resources(settings).items() if k in ("store", "database", "notifier")}
    with dg.build_run_status_sensor_context(
        sensor_name=SENSOR,
        dagster_event=run.get_run_success_event(),
        dagster_instance=instance,
        dagster_run=run.dagster_run,
        resources=used,
    ) as context:
        return run, defs.resolve_sensor_def(SENSOR)(context)
