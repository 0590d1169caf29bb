"""The one entry point: `dagster dev -w workspace.yaml` loads `defs`."""

import dagster as dg

from cataloger_dagster.assets.catalog_index import catalog_index
from cataloger_dagster.assets.checks import ASSET_CHECKS
from cataloger_dagster.assets.catalog_page import catalog_page
from cataloger_dagster.assets.investigations import investigations
from cataloger_dagster.assets.quality_issues import quality_issues
from cataloger_dagster.assets.recent_summary import recent_summary
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.assets.table_understanding import table_understanding
from cataloger_dagster.jobs import build_catalog_table_job
from cataloger_dagster.sensors.database_change import database_change_sensor
from cataloger_dagster.sensors.pass_rate import pass_rate_sensor
from cataloger_dagster.sensors.refresh_schedule import refresh_schedule
from cataloger_dagster.settings import resources

TABLE_ASSETS = [table_profile, table_understanding, quality_issues, investigations, recent_summary, catalog_page]
ALL_ASSETS = [*TABLE_ASSETS, catalog_index]

catalog_table_job = build_catalog_table_job(TABLE_ASSETS)

defs = dg.Definitions(
    assets=ALL_ASSETS,
    jobs=[catalog_table_job],
    asset_checks=ASSET_CHECKS,
    sensors=[database_change_sensor, pass_rate_sensor],
    schedules=[refresh_schedule],
    resources=resources(),
    # A table's assets form one chain, so a process per step would buy no parallelism, only
    # a Python start-up per step; in one process the sandbox also starts with the run, warm
    # by the time the investigations need it.  Tables still run side by side as separate runs.
    executor=dg.in_process_executor,
)
