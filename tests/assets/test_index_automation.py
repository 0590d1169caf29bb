"""assets/index_automation.py: Dagster requests catalog_index by itself after table runs.

A real instance (a temp DAGSTER_HOME) and the real `catalog_table` job run on a small DuckDB
database; the condition is evaluated as the daemon's catalog_index_sensor evaluates it, tick
after tick (each tick's cursor passed to the next).
"""

import datetime

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.jobs import CATALOG_TABLE_JOB
from cataloger_dagster.settings.model import load_settings
from tests.conftest import sandbox_problem, service_unavailable

pytestmark = [pytest.mark.bwrap, pytest.mark.filterwarnings("error::DeprecationWarning")]

INDEX = dg.AssetSelection.assets("catalog_index")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    problem = sandbox_problem("local")
    if problem:
        service_unavailable(problem)
    tmp = tmp_path_factory.mktemp("index_automation")
    db = tmp / "two.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE small AS SELECT range AS id, range % 3 AS grp FROM range(30)")
        con.execute("CREATE TABLE other AS SELECT range AS id, 'x' || range AS label FROM range(20)")
    settings = load_settings(database=f"duckdb://{db}", store=str(tmp / "store"), sandbox="local")
    return build_definitions(settings)


class Ticks:
    """The sensor's successive evaluations against one instance."""

    def __init__(self, defs: dg.Definitions, instance: dg.DagsterInstance) -> None:
        self.defs, self.instance, self.cursor = defs, instance, None

    def requested(self, at: datetime.datetime | None = None) -> bool:
        result = dg.evaluate_automation_conditions(defs=self.defs, instance=self.instance, asset_selection=INDEX,
                                                   cursor=self.cursor, evaluation_time=at)
        self.cursor = result.cursor
        return result.get_num_requested(dg.AssetKey("catalog_index")) == 1


def run_table(defs: dg.Definitions, instance: dg.DagsterInstance, table: str) -> None:
    """The run the change sensor, the launchpad or a backfill would launch for one table."""
    result = defs.resolve_job_def(CATALOG_TABLE_JOB).execute_in_process(
        instance=instance, partition_key=table,
        run_config={"ops": {"investigations": {"config": {"exploration_rate": 0.0}}}})
    assert result.success


def test_a_table_run_requests_the_index_once(catalog):
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["small", "other"])
        ticks = Ticks(catalog, instance)
        assert not ticks.requested()           # nothing cataloged yet: no index to build
        run_table(catalog, instance, "small")
        assert ticks.requested()               # after the table's run, though `other` has no page yet
        assert not ticks.requested()           # nothing changed since
        assert not ticks.requested()


@pytest.mark.slow  # two runs of a table
def test_the_index_waits_for_the_runs_in_progress(catalog):
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["small", "other"])
        ticks = Ticks(catalog, instance)
        assert not ticks.requested()
        # a run of `other` created and not started, as a backfill's or a sensor's waits for its
        # pool (queued, it is the same to the condition: a page still planned)
        waiting = instance.create_run_for_job(
            catalog.resolve_job_def(CATALOG_TABLE_JOB), status=dg.DagsterRunStatus.NOT_STARTED,
            tags={"dagster/partition": "other"})
        run_table(catalog, instance, "small")
        now = datetime.datetime.now(datetime.timezone.utc)
        assert not ticks.requested(now)        # `small` is done, `other` still to come
        # while runs never stop coming, the index is rebuilt at the next quarter-hour all the same
        later = now + datetime.timedelta(minutes=16)
        assert ticks.requested(later)
        assert not ticks.requested(later + datetime.timedelta(seconds=30))
        instance.report_run_canceled(waiting)   # the last run of the batch is over
        run_table(catalog, instance, "small")
        assert ticks.requested(later + datetime.timedelta(minutes=1))
        assert not ticks.requested(later + datetime.timedelta(minutes=2))
