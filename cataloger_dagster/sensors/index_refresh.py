"""catalog_index_sensor: evaluates catalog_index's automation condition (assets/index_automation.py).

Dagster would make a `default_automation_condition_sensor` for it, but stopped until someone
turns it on in the UI; this one is on from the start, so index.html follows the table runs
on a fresh instance.  It ticks at the change sensor's pace (CATALOGER_SENSOR_INTERVAL_S): the
index follows a change as soon as the change is noticed.
"""

import dagster as dg

from cataloger_dagster.assets.catalog_index import catalog_index
from cataloger_dagster.settings.model import CatalogerSettings

INDEX_SENSOR = "catalog_index_sensor"


def build_index_sensor(settings: CatalogerSettings) -> dg.AutomationConditionSensorDefinition:
    return dg.AutomationConditionSensorDefinition(
        INDEX_SENSOR,
        target=dg.AssetSelection.assets(catalog_index),
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=settings.sensor_interval_s,
        description="Rebuilds index.html after the table runs (whoever launched them), once the "
        "runs in progress are done.",
    )
