"""The freshness and volume checks, run by Dagster per partition: on the real assets of a DuckDB
table (pass, and fail once the profile is older than allowed), and on a stand-in quality_issues
carrying the history findings (`stale_table`, `volume_anomaly`) that make them fail."""

import time

import dagster as dg
import pytest

from cataloger_dagster.assets.freshness import (
    FRESHNESS_PARAMS, LAST_UPDATED, OVERDUE_SECONDS, build_freshness_checks,
)
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.core.models import AnalysisResultModel, IssueModel
from cataloger_dagster.definitions import TABLE_ASSETS, defs
from cataloger_dagster.jobs import CATALOG_TABLE_JOB, build_catalog_table_job
from cataloger_dagster.settings.model import load_settings
from cataloger_dagster.settings.factories import resources
from tests.support.reviewed import ISSUE_ASSETS
from tests.support.shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

HOURS = "CATALOGER_FRESHNESS_HOURS"


@pytest.fixture
def shop(tmp_path, monkeypatch):
    monkeypatch.delenv(HOURS, raising=False)
    return make_shop(tmp_path / "shop.duckdb")


def evaluations(result) -> dict[str, dg.AssetCheckEvaluation]:
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def catalog(shop, store, instance, *assets):
    instance.add_dynamic_partitions("tables", ["events"])
    result = dg.materialize([*(assets or ISSUE_ASSETS), *build_freshness_checks(load_settings())],
                            partition_key="events", instance=instance,
                            resources=resources(database=f"duckdb://{shop}", store=str(store), sandbox="local"))
    assert result.success
    return result


@pytest.mark.slow
def test_fresh_table_with_its_usual_volume_passes(shop, tmp_path):
    with dg.instance_for_test() as instance:
        catalog(shop, tmp_path / "store", instance)
        result = catalog(shop, tmp_path / "store", instance)  # a second run: two row counts
    found = evaluations(result)
    fresh, volume = found["catalog_is_fresh"], found["row_count_as_expected"]
    assert fresh.passed and volume.passed
    assert fresh.severity == dg.AssetCheckSeverity.WARN
    assert abs(fresh.metadata[LAST_UPDATED].value - time.time()) < 120
    assert fresh.metadata[FRESHNESS_PARAMS].value["lower_bound_delta_seconds"] == 48 * 3600
    rows = result.output_for_node("table_profile").row_count
    assert volume.metadata["dagster/row_count"].value == rows
    assert volume.metadata["recent_row_counts"].value == f"{rows:,}, {rows:,}"


@pytest.mark.slow
def test_an_old_profile_fails_freshness_when_the_check_runs_alone(shop, tmp_path, monkeypatch):
    with dg.instance_for_test() as instance:
        catalog(shop, tmp_path / "store", instance)
        monkeypatch.setenv(HOURS, "0.0002")  # 0.72 s
        time.sleep(1.0)
        settings = load_settings()
        job = dg.Definitions(
            assets=TABLE_ASSETS, asset_checks=build_freshness_checks(settings),
            jobs=[build_catalog_table_job(TABLE_ASSETS)],
            resources=resources(settings, database=f"duckdb://{shop}", store=str(tmp_path / "store"),
                                sandbox="local"),
        ).resolve_job_def(CATALOG_TABLE_JOB)
        only = {k for k in job.asset_layer.asset_graph.asset_check_keys if k.name == "catalog_is_fresh"}
        result = job.get_subset(asset_selection=set(), asset_check_selection=only).execute_in_process(
            partition_key="events", instance=instance)
        assert result.success
    fresh = evaluations(result)["catalog_is_fresh"]
    assert not fresh.passed
    assert fresh.metadata[OVERDUE_SECONDS].value > 0
    assert "more than 0.0002 h" in fresh.description


def history_finding(id, type, description):
    return IssueModel(id=id, type=type, severity="medium", description=description, affectedColumns=[],
                      suggestedAction="look at the loads", category="quick_fixes", source="history")


class StandInConfig(dg.Config):
    stale: bool = False
    volume: bool = False


@dg.asset(name="quality_issues", partitions_def=tables_partitions)
def stand_in(config: StandInConfig) -> AnalysisResultModel:
    """The issues quality_issues would hold once the stored history raised its findings."""
    found = []
    if config.stale:
        found.append(history_finding("stale", "stale_table", "updated_at has not moved for 9 days (usually 1)"))
    if config.volume:
        found.append(history_finding("volume", "volume_anomaly", "rows fell to 120 (expected 1,900 to 2,100)"))
    return AnalysisResultModel(issues=found, summary="", completedAt="now")


@pytest.mark.slow
@pytest.mark.parametrize("stale,volume", [(True, False), (False, True)])
def test_history_findings_fail_their_check(shop, tmp_path, stale, volume):
    with dg.instance_for_test() as instance:
        catalog(shop, tmp_path / "store", instance, *ISSUE_ASSETS[:2])  # a real profile first
        result = dg.materialize(
            [stand_in, *build_freshness_checks(load_settings())], partition_key="events", instance=instance,
            resources=resources(database=f"duckdb://{shop}", store=str(tmp_path / "store"), sandbox="local"),
            run_config={"ops": {"quality_issues": {"config": {"stale": stale, "volume": volume}}}})
    found = evaluations(result)
    assert found["catalog_is_fresh"].passed is not stale
    assert found["row_count_as_expected"].passed is not volume
    if stale:
        assert "has not moved for 9 days" in found["catalog_is_fresh"].description
    else:
        assert found["row_count_as_expected"].description == "rows fell to 120 (expected 1,900 to 2,100)"
        assert "- volume: rows fell" in found["row_count_as_expected"].metadata["volume_anomaly"].value


def test_in_the_definitions_and_the_catalog_job():
    job = defs.resolve_job_def(CATALOG_TABLE_JOB)
    names = {k.name for k in job.asset_layer.asset_graph.asset_check_keys}
    assert {"catalog_is_fresh", "row_count_as_expected"} <= names
