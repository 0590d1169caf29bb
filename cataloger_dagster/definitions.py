"""The one entry point: `dagster dev -w workspace.yaml` loads `defs`.

The settings are read here, once, when the code location loads (a run's process loads
it too, so a run sees the environment it was started with), and passed to everything
that needs them.
"""

import dagster as dg

from cataloger_dagster.assets.catalog_index import catalog_index
from cataloger_dagster.assets.checks import build_asset_checks
from cataloger_dagster.assets.freshness import build_freshness_checks
from cataloger_dagster.assets.guardrails import build_guardrail_checks, build_guardrails_job, guardrail_check_keys
from cataloger_dagster.assets.pools import settings_pool, with_pool
from cataloger_dagster.assets.table_checks import build_table_checks, build_table_checks_job
from cataloger_dagster.assets.table_specs import stored_table_specs
from cataloger_dagster.jobs import ALL_ASSETS, TABLE_ASSETS, build_catalog_table_job, build_review_job
from cataloger_dagster.sensors.alert_sensor import build_alert_sensor
from cataloger_dagster.sensors.database_change import build_database_change_sensor
from cataloger_dagster.sensors.guardrail_failures import build_guardrail_failure_sensor
from cataloger_dagster.sensors.index_refresh import build_index_sensor
from cataloger_dagster.sensors.pass_rate import build_pass_rate_sensor
from cataloger_dagster.sensors.refresh_schedule import build_refresh_schedule
from cataloger_dagster.settings.model import CatalogerSettings, load_settings
from cataloger_dagster.settings.factories import plain_database, resources, store_resource

__all__ = ["ALL_ASSETS", "TABLE_ASSETS", "build_definitions", "defs", "user_tables"]


def user_tables(settings: CatalogerSettings) -> list[dg.AssetSpec]:
    """The database's cataloged tables as the store holds them now: read at each load of the code
    location, so that a table cataloged since appears on the next reload."""
    return stored_table_specs(
        store_resource(settings=settings),
        plain_database(settings).database_name,
        owners=settings.table_owners,
        lineage=settings.table_lineage,
    )


def build_definitions(settings: CatalogerSettings) -> dg.Definitions:
    # every run of a table's assets, however launched, takes a slot of its database's pool
    table_assets = with_pool(TABLE_ASSETS, settings_pool(settings))
    tables = user_tables(settings)
    table_checks = build_table_checks(tables, plain_database(settings).database_name)
    guardrail_checks = build_guardrail_checks(tables)
    guardrail_jobs, guardrail_schedules = build_guardrails_job(guardrail_checks, settings.guardrails_cron)
    catalog_job = build_catalog_table_job(table_assets)
    return dg.Definitions(
        # the index reads the store, not the database; so do the user's tables, one external asset each
        assets=[*table_assets, catalog_index, *tables],
        jobs=[
            catalog_job,
            build_review_job(settings.reviewer),
            *build_table_checks_job(table_checks),
            *guardrail_jobs,
        ],
        asset_checks=[
            *build_asset_checks(settings),
            *build_freshness_checks(settings),
            *table_checks,
            *guardrail_checks,
        ],
        sensors=[
            build_database_change_sensor(settings, catalog_job, guardrail_jobs, guardrail_check_keys(tables)),
            *build_guardrail_failure_sensor(settings, guardrail_jobs, catalog_job, tables),
            build_pass_rate_sensor(settings),
            build_alert_sensor(settings),
            build_index_sensor(settings),
        ],
        schedules=[build_refresh_schedule(settings), *guardrail_schedules],
        resources=resources(settings),
        # A table's assets form one chain, so a process per step would buy no parallelism, only
        # a Python start-up per step; in one process the sandbox also starts with the run, warm
        # by the time the investigations need it.  Tables still run side by side as separate runs.
        executor=dg.in_process_executor,
    )


defs = build_definitions(load_settings())
