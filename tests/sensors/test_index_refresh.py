"""sensors/index_refresh.py: catalog_index_sensor, on from the start, evaluates the index's condition.

What the condition requests, tick after tick, after real table runs: tests/assets/test_index_automation.py.
"""

import dagster as dg
import pytest

from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.sensors.index_refresh import INDEX_SENSOR
from cataloger_dagster.settings.model import load_settings

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")


def test_the_index_sensor_is_on_from_the_start_and_targets_the_index(tmp_path):
    defs = build_definitions(load_settings(database=f"duckdb://{tmp_path / 'any.duckdb'}",
                                           store=str(tmp_path / "store"), sensor_interval_s=7))
    sensor = defs.resolve_sensor_def(INDEX_SENSOR)
    assert isinstance(sensor, dg.AutomationConditionSensorDefinition)
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    assert sensor.minimum_interval_seconds == 7   # the change sensor's pace
    assert sensor.asset_selection.resolve(defs.resolve_asset_graph()) == {dg.AssetKey("catalog_index")}
    # Dagster's own default sensor (off until turned on in the UI) is not made: this one covers the index
    sensors = defs.get_repository_def().sensor_defs
    assert [s.name for s in sensors if isinstance(s, dg.AutomationConditionSensorDefinition)] == [INDEX_SENSOR]
