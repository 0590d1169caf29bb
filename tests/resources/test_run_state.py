"""resources/run_state.py: what the tables of one process share reaches the assets as a resource.

Real definitions and real runs of the quality_issues asset on the shop database: the asset reads
the other tables' keys from the `run_state` it is given, whoever launched it.
"""

import dagster as dg
import pytest

from cataloger_dagster.assets.quality_issues import quality_issues
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.assets.table_understanding import table_understanding
from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.resources.run_state import RunSharedState
from cataloger_dagster.settings.model import load_settings
from cataloger_dagster.settings.factories import resources
from shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

ASSETS = [table_profile, table_understanding, quality_issues]
ORPHANS = "events_orphan_references_customer_id"   # events.customer_id points at customers.id


def test_the_quality_issues_asset_names_the_shared_state_it_uses():
    assert "run_state" in quality_issues.op.required_resource_keys


def test_each_set_of_resources_has_a_state_of_its_own(tmp_path, monkeypatch):
    url = f"duckdb://{make_shop(tmp_path / 'shop.duckdb')}"
    first, second = resources(database=url)["run_state"], resources(database=url)["run_state"]
    assert isinstance(first, RunSharedState) and first is not second and first.across_tables == {}
    # the code location's (`dagster dev`): one per process that loads it, as one per `cataloger run`
    monkeypatch.setenv("CATALOGER_DATABASE", url)
    assert isinstance(build_definitions(load_settings()).resources["run_state"], RunSharedState)


def _issue_ids(res: dict, instance: dg.DagsterInstance) -> set[str]:
    result = dg.materialize(ASSETS, partition_key="events", instance=instance, resources=res)
    assert result.success
    return {i.id for i in result.output_for_node("quality_issues").issues}


@pytest.mark.slow
def test_runs_with_the_same_resources_read_the_other_tables_keys_from_their_state(tmp_path):
    db = make_shop(tmp_path / "shop.duckdb")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events"])
        res = resources(database=f"duckdb://{db}", store=str(tmp_path / "store"))
        assert ORPHANS in _issue_ids(res, instance)
        # the run kept what it learned of customers for the runs after it
        assert ("keys", "customers") in res["run_state"].across_tables
        # what the state says is what the next run believes: told customers has no key, it finds no orphans
        res["run_state"].across_tables[("keys", "customers")] = []
        assert ORPHANS not in _issue_ids(res, instance)
        # a fresh state (a new process, another `cataloger run`) reads the table again
        assert ORPHANS in _issue_ids({**res, "run_state": RunSharedState()}, instance)
