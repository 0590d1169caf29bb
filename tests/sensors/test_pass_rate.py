"""pass_rate_sensor against a real (temporary) Dagster instance, ticked as the daemon ticks it.

Most tests record `investigations` materializations with the metadata the real asset writes
(runless events, or a run of a stand-in asset carrying a sensor request's tags and run
config, as the daemon would launch it); the last test runs the real assets end to end.
"""

import json

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.assets.investigations import InvestigationsConfig
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.definitions import TABLE_ASSETS, defs
from cataloger_dagster.jobs import CATALOG_TABLE_JOB
from cataloger_dagster.sensors.database_change import FINGERPRINT_TAG, REASON_TAG
from cataloger_dagster.sensors.pass_rate import (
    ATTEMPT_TAG,
    COOLDOWN_ENV,
    DEFAULT_COOLDOWN_S,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_THRESHOLD,
    MAX_ATTEMPTS_ENV,
    PASS_RATE_BELOW_THRESHOLD,
    PASS_RATE_TAG,
    RELEARN_RUN_CONFIG,
    THRESHOLD_ENV,
    THRESHOLD_TAG,
    BadCursor,
    build_pass_rate_sensor,
    read_cursor,
)
from cataloger_dagster.settings.model import load_settings
from cataloger_dagster.settings.factories import resources

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

SENSOR = defs.resolve_sensor_def("pass_rate_sensor")


class StandInConfig(InvestigationsConfig):
    pass_rate: float = 1.0
    fingerprint: str = "fp1"


@dg.asset(name="investigations", partitions_def=tables_partitions)
def stand_in(context: dg.AssetExecutionContext, config: StandInConfig) -> dg.MaterializeResult:
    """Writes the metadata the real investigations asset writes, from its config."""
    return dg.MaterializeResult(metadata={
        "pass_rate": config.pass_rate, "fingerprint": config.fingerprint,
        "explored": True, "explore_requested": config.explore,
    })


class Ticker:
    def __init__(self, instance: dg.DagsterInstance):
        self.instance = instance
        self.cursor: str | None = None

    def tick(self):
        context = dg.build_sensor_context(
            instance=self.instance, instance_ref=self.instance.get_ref(), definitions=defs, cursor=self.cursor,
        )
        # the sensor as the code location builds it from the environment of this tick (a
        # changed setting reaches a running daemon when the code location is reloaded)
        data = build_pass_rate_sensor(load_settings()).evaluate_tick(context)
        self.cursor = data.cursor
        return data

    def report(self, table: str, pass_rate: float, fingerprint: str = "fp1", explore: bool = False) -> None:
        """An investigations materialization with the metadata the asset writes (no run behind it)."""
        self.instance.report_runless_asset_event(dg.AssetMaterialization(
            asset_key="investigations", partition=table,
            metadata={"pass_rate": pass_rate, "fingerprint": fingerprint, "explored": explore,
                      "explore_requested": explore},
        ))

    def launch(self, request: dg.RunRequest, pass_rate: float, fingerprint: str = "fp1") -> None:
        """Runs a request as the daemon would: its tags and its run config, on the stand-in asset."""
        config = request.run_config["ops"]["investigations"]["config"]
        result = dg.materialize(
            [stand_in], partition_key=request.partition_key, instance=self.instance,
            tags={k: v for k, v in request.tags.items() if not k.startswith("dagster/")},
            run_config={"ops": {"investigations": {"config": {**config, "pass_rate": pass_rate,
                                                              "fingerprint": fingerprint}}}},
        )
        assert result.success

    @property
    def state(self) -> dict:
        return read_cursor(self.cursor)[1]


@pytest.fixture
def ticker(monkeypatch):
    for name in (THRESHOLD_ENV, COOLDOWN_ENV, MAX_ATTEMPTS_ENV):
        monkeypatch.delenv(name, raising=False)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["orders", "customers", "events"])
        yield Ticker(instance)


def by_table(data) -> dict[str, dg.RunRequest]:
    return {r.partition_key: r for r in data.run_requests}


def test_below_threshold_requests_a_relearning_run_and_says_why(ticker):
    ticker.report("orders", 0.5, fingerprint="fpA")
    data = ticker.tick()
    request = by_table(data)["orders"]
    assert len(data.run_requests) == 1
    assert request.run_config == RELEARN_RUN_CONFIG
    assert request.tags[REASON_TAG] == PASS_RATE_BELOW_THRESHOLD
    assert float(request.tags[PASS_RATE_TAG]) == 0.5
    assert float(request.tags[THRESHOLD_TAG]) == DEFAULT_THRESHOLD
    assert request.tags[ATTEMPT_TAG] == "1"
    assert request.tags[FINGERPRINT_TAG] == "fpA"
    assert request.tags["dagster/partition"] == "orders"  # resolved against the catalog_table job
    assert request.run_key == "orders:fpA:relearn-1"
    assert SENSOR.job_name == CATALOG_TABLE_JOB
    # nothing new: nothing requested again
    assert ticker.tick().run_requests == []


def test_at_or_above_threshold_requests_nothing(ticker):
    ticker.report("orders", 0.8)
    ticker.report("customers", 1.0)
    data = ticker.tick()
    assert data.run_requests == []
    assert "2 new investigations materializations" in data.skip_message


def test_threshold_from_the_environment(ticker, monkeypatch):
    monkeypatch.setenv(THRESHOLD_ENV, "0.95")
    ticker.report("orders", 0.9)
    request = by_table(ticker.tick())["orders"]
    assert request.tags[THRESHOLD_TAG] == "0.9500"


def test_no_partition_is_missed_between_ticks(ticker):
    ticker.tick()
    ticker.report("orders", 0.2)
    ticker.report("customers", 1.0)
    ticker.report("events", 0.4)
    ticker.report("customers", 0.6)  # the latest materialization of a table is the one that counts
    data = ticker.tick()
    assert set(by_table(data)) == {"orders", "events", "customers"}
    assert float(by_table(data)["customers"].tags[PASS_RATE_TAG]) == 0.6
    after, _ = read_cursor(ticker.cursor)
    latest = ticker.instance.fetch_materializations(dg.AssetKey("investigations"), limit=1).records[0]
    assert after == latest.storage_id


def test_a_table_that_recovered_is_not_relearned(ticker):
    ticker.report("orders", 0.3)
    ticker.report("orders", 0.9)
    assert ticker.tick().run_requests == []


def test_cooldown_holds_a_second_request_until_it_is_over(ticker, monkeypatch):
    ticker.report("orders", 0.5)
    first = by_table(ticker.tick())["orders"]
    ticker.launch(first, pass_rate=0.5)  # relearning did not help
    data = ticker.tick()
    assert data.run_requests == []
    assert "waiting for the cooldown: orders" in data.skip_message
    assert ticker.state["orders"]["pending"]["pass_rate"] == 0.5
    assert ticker.tick().run_requests == []  # still cooling down, still remembered

    monkeypatch.setenv(COOLDOWN_ENV, "0")  # the cooldown is over
    second = by_table(ticker.tick())["orders"]
    assert second.tags[ATTEMPT_TAG] == "2"
    assert second.run_key == "orders:fp1:relearn-2"


def test_max_attempts_per_fingerprint_stops_the_loop(ticker, monkeypatch, capfd):
    monkeypatch.setenv(COOLDOWN_ENV, "0")
    ticker.report("orders", 0.5)
    for attempt in range(1, DEFAULT_MAX_ATTEMPTS + 1):
        request = by_table(ticker.tick())["orders"]
        assert request.tags[ATTEMPT_TAG] == str(attempt)
        ticker.launch(request, pass_rate=0.5)
    capfd.readouterr()
    assert ticker.tick().run_requests == []
    assert "giving up until the data changes" in capfd.readouterr().err
    assert ticker.state["orders"]["attempts"] == {"fp1": DEFAULT_MAX_ATTEMPTS}
    assert ticker.tick().run_requests == []  # and it stays given up

    ticker.report("orders", 0.5, fingerprint="fp2")  # the data changed: a new chance
    request = by_table(ticker.tick())["orders"]
    assert request.tags[ATTEMPT_TAG] == "1" and request.tags[FINGERPRINT_TAG] == "fp2"


def test_a_relearning_run_started_by_hand_counts_as_an_attempt(ticker, monkeypatch):
    monkeypatch.setenv(MAX_ATTEMPTS_ENV, "1")
    ticker.report("orders", 0.5, explore=True)  # someone ran it with explore: True already
    data = ticker.tick()
    assert data.run_requests == []
    assert ticker.state["orders"]["attempts"] == {"fp1": 1}

    ticker.report("customers", 0.5)  # an ordinary run: relearned once, which is the maximum
    request = by_table(ticker.tick())["customers"]
    ticker.launch(request, pass_rate=0.5)
    assert ticker.tick().run_requests == []
    assert ticker.state["customers"]["attempts"] == {"fp1": 1}  # the sensor's own run is not counted twice


def test_a_dropped_table_is_not_relearned(ticker):
    ticker.report("orders", 0.5)
    ticker.instance.delete_dynamic_partition("tables", "orders")
    assert ticker.tick().run_requests == []
    assert "orders" not in ticker.state


def test_materialization_without_pass_rate_is_ignored_with_a_warning(ticker, capfd):
    ticker.instance.report_runless_asset_event(
        dg.AssetMaterialization(asset_key="investigations", partition="orders", metadata={"fingerprint": "x"}))
    ticker.report("customers", 0.1)
    data = ticker.tick()
    assert set(by_table(data)) == {"customers"}
    assert "orders: investigations materialization" in capfd.readouterr().err


def test_corrupt_cursor_is_a_clear_error(ticker):
    ticker.cursor = "[1, 2]"
    with pytest.raises(BadCursor, match="reset the sensor's cursor"):
        ticker.tick()


def settings_with(monkeypatch, **env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return load_settings()


def test_settings(monkeypatch):
    for name in (THRESHOLD_ENV, COOLDOWN_ENV, MAX_ATTEMPTS_ENV):
        monkeypatch.delenv(name, raising=False)
    defaults = load_settings()
    assert defaults.pass_rate_threshold == DEFAULT_THRESHOLD == 0.8
    assert defaults.relearn_cooldown_s == DEFAULT_COOLDOWN_S == 3600
    assert defaults.relearn_max_attempts == DEFAULT_MAX_ATTEMPTS == 2
    assert settings_with(monkeypatch, **{THRESHOLD_ENV: "0.5"}).pass_rate_threshold == 0.5
    assert settings_with(monkeypatch, **{COOLDOWN_ENV: "60"}).relearn_cooldown_s == 60
    for bad in ("high", "1.5", "-0.1"):
        with pytest.raises(ValueError, match=THRESHOLD_ENV):
            settings_with(monkeypatch, **{THRESHOLD_ENV: bad})
    monkeypatch.delenv(THRESHOLD_ENV)
    for bad in ("soon", "-1"):
        with pytest.raises(ValueError, match=COOLDOWN_ENV):
            settings_with(monkeypatch, **{COOLDOWN_ENV: bad})
    assert SENSOR.default_status == dg.DefaultSensorStatus.RUNNING


SHOP_SQL = """
CREATE TABLE customers AS SELECT range AS customer_id, 'c' || range AS name FROM range(200);
CREATE TABLE events AS
  SELECT range AS event_id, range % 250 AS customer_id,
         CASE WHEN range % 10 = 0 THEN NULL ELSE 'page' || (range % 7) END AS page,
         ['shipped', 'Shipped', 'pending', 'pending', 'shipped', 'pending'][range % 6 + 1] AS status
  FROM range(2000);
"""


# schema changes made between the detection of the issues and their investigation: the checks
# the issues call for stop deciding, and the relearning run (the whole table again) restores them
SCHEMA_CHANGES = {
    "dropped": "ALTER TABLE events DROP COLUMN page; ALTER TABLE events DROP COLUMN status",
    "renamed": "ALTER TABLE events RENAME COLUMN page TO page_name; ALTER TABLE events RENAME COLUMN status TO state",
    "retyped": "ALTER TABLE events ALTER status TYPE INTEGER USING (CASE lower(status) WHEN 'pending' THEN 0 ELSE 1 END);"
               "ALTER TABLE events ALTER page TYPE INTEGER USING (length(page))",
}


@pytest.mark.parametrize("change", list(SCHEMA_CHANGES))
def test_end_to_end_a_failing_table_is_relearned_by_the_real_assets(tmp_path, local_sandbox, monkeypatch, change):
    for name in (THRESHOLD_ENV, COOLDOWN_ENV, MAX_ATTEMPTS_ENV):
        monkeypatch.delenv(name, raising=False)
    db = tmp_path / "shop.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(SHOP_SQL)
    res = resources(database=f"duckdb://{db}", store=str(tmp_path / "store"), sandbox="local")
    no_exploring = {"ops": {"investigations": {"config": {"exploration_rate": 0.0}}}}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events"])
        ticker = Ticker(instance)
        ticker.tick()
        # the issues are found, then two of their columns change: their investigations cannot decide
        upstream = [a for a in TABLE_ASSETS if a.key.path[0] in ("table_profile", "table_understanding",
                                                                  "quality_issues")]
        found = dg.materialize(upstream, partition_key="events", instance=instance, resources=res)
        with duckdb.connect(str(db)) as con:
            con.execute(SCHEMA_CHANGES[change])
        failing = dg.materialize(TABLE_ASSETS, partition_key="events", instance=instance, resources=res,
                                 run_config=no_exploring, selection=dg.AssetSelection.assets("investigations"))
        rate = failing.output_for_node("investigations").pass_rate
        assert rate < DEFAULT_THRESHOLD

        request = by_table(ticker.tick())["events"]
        assert float(request.tags[PASS_RATE_TAG]) == pytest.approx(rate, abs=1e-4)
        assert request.tags[FINGERPRINT_TAG] == found.output_for_node("table_profile").fingerprint.value

        # the daemon's run: the whole table, exploring afresh, with the request's tags
        rerun = dg.materialize(TABLE_ASSETS, partition_key="events", instance=instance, resources=res,
                               run_config=request.run_config,
                               tags={k: v for k, v in request.tags.items() if not k.startswith("dagster/")})
        relearned = rerun.output_for_node("investigations")
        assert relearned.explored and relearned.pass_rate == 1.0
        record = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("investigations"), asset_partitions=["events"]), limit=1,
        ).records[0]
        assert record.asset_materialization.metadata["explore_requested"].value is True
        assert instance.get_run_by_id(record.run_id).tags[REASON_TAG] == PASS_RATE_BELOW_THRESHOLD

        data = ticker.tick()  # the table passes again: nothing more to do
        assert data.run_requests == []
        assert "pending" not in ticker.state["events"]
        assert json.loads(ticker.cursor)["after"] == record.storage_id


def test_many_materializations_are_read_page_by_page(ticker, monkeypatch):
    monkeypatch.setattr("cataloger_dagster.sensors.pass_rate.PAGE_SIZE", 2)
    tables = [f"t{i}" for i in range(7)]
    ticker.instance.add_dynamic_partitions("tables", tables)
    for table in tables:
        ticker.report(table, 0.1)
    assert set(by_table(ticker.tick())) == set(tables)
