"""core/history/anomalies.py: findings from generated histories written as real profile.json files
into a real LocalStore, at controlled run times (tests/support/histories.py)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from cataloger_dagster.core.history.anomalies import excluded_runs, history_findings
from cataloger_dagster.core.layout import HISTORY, PROFILE, table_prefix
from cataloger_dagster.core.models import HISTORY_ISSUE_TYPES, ISSUE_TYPES
from cataloger_dagster.core.reviews.model import IssueSnapshot, Review
from cataloger_dagster.resources.store import LocalStore
from histories import START, Day, profile_of, run_timestamp, weekly, write_history

PREFIX = table_prefix("shop", "orders")


@pytest.fixture
def store(tmp_path):
    return LocalStore(root=str(tmp_path / "store"))


def judge(store, days: list[Day], current: Day, *, every=timedelta(days=1)):
    """The findings of a run after ``days``, one ``every`` after the last."""
    write_history(store, PREFIX, days, every=every)
    return history_findings(store, PREFIX, run_timestamp(len(days), every=every), profile_of(current))


def by_type(found, type_):
    return [i for i in found if i.type == type_]


def grown(days: list[Day], by: int, **changes) -> Day:
    return Day(rows=days[-1].rows + by, **changes)


def test_history_types_are_apart_from_the_detectors_types():
    assert set(HISTORY_ISSUE_TYPES).isdisjoint(ISSUE_TYPES) and len(HISTORY_ISSUE_TYPES) == 4


def test_a_weekly_pattern_is_not_flagged_but_a_real_drop_is(store):
    days = weekly(3)                                    # 21 runs, Monday to Sunday three times
    assert (START + timedelta(days=21)).weekday() == 0  # the next run is a Monday
    assert not by_type(judge(store, days, grown(days, 1000)), "volume_anomaly")

    saturday = weekly(3)[:19]                           # the next run is a Saturday: a quiet day
    store2 = LocalStore(root=str(store.root) + "2")
    assert not by_type(judge(store2, saturday, grown(saturday, 100)), "volume_anomaly")

    store3 = LocalStore(root=str(store.root) + "3")
    [drop] = by_type(judge(store3, days, grown(days, -3000)), "volume_anomaly")
    band = drop.details["band"]
    assert drop.source == "history" and drop.id == "orders_volume_anomaly"
    assert band["method"] == "day_of_week" and band["weekday"] == "Monday" and not band["short"]
    assert band["expected"] == 1000 and drop.details["change"] == -3000 and "below the expected change" in drop.description
    assert drop.severity in ("medium", "high") and drop.affectedRows == 4000
    chart = drop.details["chart"]
    assert chart["series"]["rows"][-1] == days[-1].rows - 3000 and len(chart["labels"]) == len(chart["series"]["rows"])
    assert chart["series"]["high"][-1] == days[-1].rows + band["high"] and drop.affectedColumns == []


def test_without_two_weeks_the_band_is_robust_and_says_the_history_is_short(store):
    days = weekly(1)[:6]                                # Monday to Saturday
    [quiet_sunday] = by_type(judge(store, days, grown(days, 100)), "volume_anomaly")
    assert quiet_sunday.details["band"]["short"] and quiet_sunday.details["band"]["method"] == "robust"
    assert "history is short" in quiet_sunday.description
    # a short history lowers the severity: the band knows no weekly rhythm yet
    assert quiet_sunday.severity == "low"


def test_too_little_history_finds_nothing(store):
    days = weekly(1)[:3]
    assert judge(store, days, grown(days, -5000)) == []   # 13,000 -> 8,000: less than half lost


@pytest.mark.parametrize("earlier", [1, 2, 5])
def test_before_the_band_a_loss_of_most_rows_still_speaks_at_a_lower_severity(tmp_path, earlier):
    """Five earlier runs give four changes, one fewer than the band needs: a table that lost 90%
    of its rows then must not pass in silence."""
    store = LocalStore(root=str(tmp_path / "store"))
    days = weekly(1)[:earlier]
    before = days[-1].rows
    [drop] = by_type(judge(store, days, Day(rows=before // 10)), "volume_anomaly")
    assert drop.severity == "medium" and drop.id == "orders_volume_anomaly" and drop.source == "history"
    runs = "1 earlier run" if earlier == 1 else f"{earlier} earlier runs"
    assert f"only {runs}, too few for a band" in drop.description and "90% of the rows" in drop.description
    assert drop.affectedRows == before - before // 10 and drop.details["band"] is None
    assert drop.details["short_history"] == {"earlier_runs": earlier, "changes": earlier - 1, "needed": 5}
    assert drop.details["chart"]["series"]["rows"] == [float(d.rows) for d in days] + [float(before // 10)]


def test_before_the_band_a_table_emptied_is_a_drop_and_nothing_else_of_its_history_speaks(store):
    days = weekly(1)[:4]
    found = judge(store, days, Day(rows=0))
    assert [i.type for i in found] == ["volume_anomaly"]
    assert "every row" in found[0].description and found[0].affectedRows == days[-1].rows


@pytest.mark.parametrize("current", [
    pytest.param(lambda before: before, id="unchanged"),
    pytest.param(lambda before: before * 10, id="tenfold growth"),
    pytest.param(lambda before: before - before * 2 // 5, id="two fifths lost"),
    pytest.param(lambda before: before // 2, id="exactly half lost"),
])
def test_before_the_band_unchanged_data_growth_or_losing_half_or_less_finds_no_volume_anomaly(store, current):
    days = weekly(1)[:3]
    assert not by_type(judge(store, days, Day(rows=current(days[-1].rows))), "volume_anomaly")


def test_before_the_band_a_small_table_losing_a_few_rows_is_not_a_drop(store):
    days = [Day(rows=6), Day(rows=6)]
    assert not by_type(judge(store, days, Day(rows=2)), "volume_anomaly")   # 4 rows: within the least band
    store2 = LocalStore(root=str(store.root) + "2")
    assert by_type(judge(store2, days, Day(rows=0)), "volume_anomaly")      # but all of them is a drop


def test_an_empty_table_that_was_empty_before_raises_nothing_from_its_history(store):
    assert judge(store, [Day(rows=0)] * 3, Day(rows=0)) == []
    # emptied six runs ago, after daily loads: its emptiness is the finding, not a stale table on top
    days = [Day(rows=r) for r in (10, 20, 30, 40, 50)] + [Day(rows=0)] * 6
    store2 = LocalStore(root=str(store.root) + "2")
    assert judge(store2, days, Day(rows=0)) == []
    store3 = LocalStore(root=str(store.root) + "3")
    assert by_type(judge(store3, days[:5] + [Day(rows=50)] * 6, Day(rows=50)), "stale_table")  # with rows: stale


def review(issue_id: str, run: str, verdict: str, type_: str = "volume_anomaly") -> Review:
    return Review(table="orders", issue_id=issue_id, verdict=verdict, reviewer="ana", run=run,
                  issue=IssueSnapshot(type=type_, severity="high", source="history"))


def test_changes_people_explained_are_left_out_of_the_baseline(store):
    days = weekly(3)
    for n in (7, 14):                                   # two Mondays with a backfill of 20,000 rows
        for later in days[n:]:
            later.rows += 20_000
    stamps = write_history(store, PREFIX, days)
    current = run_timestamp(21)
    again = profile_of(grown(days, 21_000))
    # the backfills are the Mondays' baseline: another one looks usual
    assert not by_type(history_findings(store, PREFIX, current, again), "volume_anomaly")

    for n in (7, 14):
        store.append_review(PREFIX, review("orders_volume_anomaly", stamps[n], "accept" if n == 7 else "expected"))
    [found] = by_type(history_findings(store, PREFIX, current, again), "volume_anomaly")
    assert found.details["excluded_runs"] == [stamps[7], stamps[14]]
    assert found.details["band"]["expected"] == 1000


def test_the_latest_verdict_on_a_run_decides_and_dismissals_stay_in_the_baseline():
    first = review("orders_volume_anomaly", "2026-09-10T06:00:00.000000Z", "expected")
    later = review("orders_volume_anomaly", "2026-09-10T06:00:00.000000Z", "dismiss")
    other = review("orders_missing_values_x", "2026-09-11T06:00:00.000000Z", "expected", type_="missing_values")
    other.issue.source = "detector"
    assert excluded_runs([first]) == {"orders_volume_anomaly": {"2026-09-10T06:00:00.000000Z"}}
    assert excluded_runs([first, later]) == {}
    assert excluded_runs([other]) == {}


def _weekday_updates(days: int) -> list[Day]:
    out, rows, updated = [], 1000, None
    for n in range(days):
        if (START + timedelta(days=n)).weekday() < 5:
            rows += 100
            updated = (START + timedelta(days=n, hours=-1)).isoformat()
        out.append(Day(rows=rows, updated=updated))
    return out


def test_a_table_loaded_on_weekdays_is_not_stale_on_monday_but_is_after_a_silent_week(store):
    days = _weekday_updates(21)                         # the next run is a Monday
    quiet_weekend = Day(rows=days[-1].rows, updated=days[-1].updated)
    # Monday's run before Monday's load: three days since Friday's, as every weekend
    assert not by_type(judge(store, days, quiet_weekend), "stale_table")

    store2 = LocalStore(root=str(store.root) + "2")
    long = _weekday_updates(21)
    for day in long[16:]:                               # nothing loaded since the Tuesday before
        day.rows, day.updated = long[15].rows, long[15].updated
    [stale] = by_type(judge(store2, long, Day(rows=long[-1].rows, updated=long[-1].updated)), "stale_table")
    assert stale.id == "orders_stale_table_updated_at" and stale.affectedColumns == ["updated_at"]
    assert stale.details["watched"] == "column 'updated_at'"
    assert stale.details["age_hours"] > stale.details["limit_hours"] >= 72
    assert stale.details["usual_interval_hours"] == 24


def test_a_table_that_never_changes_is_not_stale(store):
    days = [Day(rows=500, updated="2026-01-01T00:00:00+00:00") for _ in range(20)]
    assert not by_type(judge(store, days, days[-1]), "stale_table")


def test_columns_added_dropped_retyped_and_renamed_are_a_schema_change(store):
    days = weekly(1)
    now = profile_of(grown(days, 1000, extra_columns=("channel",), amount_dtype="float32"))
    now.columns = [c.model_copy(update={"name": "state"}) if c.name == "status" else c
                   for c in now.columns if c.name != "updated_at"]
    write_history(store, PREFIX, days)
    [change] = by_type(history_findings(store, PREFIX, run_timestamp(7), now), "schema_change")
    d = change.details
    assert d["added"] == ["channel"] and d["dropped"] == ["updated_at"]
    assert d["retyped"] == {"amount": ["float64", "float32"]} and d["renamed"] == {"status": "state"}
    assert change.severity == "high" and set(change.affectedColumns) == {"channel", "updated_at", "amount", "state"}
    assert d["chart"]["series"]["columns"][-2:] == [4.0, 4.0] and d["previous_run"] == run_timestamp(6)

    only_added = LocalStore(root=str(store.root) + "2")
    [change] = by_type(judge(only_added, days, grown(days, 1000, extra_columns=("channel",))), "schema_change")
    assert change.severity == "low" and change.affectedColumns == ["channel"]


def test_a_moved_distribution_and_a_null_rate_jump_are_drift(store):
    days = weekly(3)
    found = judge(store, days, grown(days, 1000, amount_centre=90.0, null_rate=0.4))
    [drift] = by_type(found, "distribution_drift")
    assert drift.id == "orders_distribution_drift_amount" and drift.affectedColumns == ["amount"]
    assert drift.details["psi"]["value"] > drift.details["psi"]["threshold"] == 0.25
    assert drift.details["null_rate"]["value"] == pytest.approx(0.4, abs=0.001)
    assert drift.details["chart"]["percent"] and drift.details["chart"]["series"]["null rate"][-1] == pytest.approx(0.4, abs=0.001)

    steady = LocalStore(root=str(store.root) + "2")
    assert not by_type(judge(steady, days, grown(days, 1000)), "distribution_drift")


def test_a_category_taking_over_is_drift_on_the_top_values(store):
    days = weekly(2)
    [drift] = by_type(judge(store, days, grown(days, 1000, statuses={"void": 0.9, "paid": 0.1})),
                      "distribution_drift")
    assert drift.affectedColumns == ["status"] and drift.details["psi"]["on"] == "top values"


def test_the_digest_is_cached_in_the_tables_folder_and_rebuilt_when_lost(store, tmp_path):
    days = weekly(2)
    judge(store, days, grown(days, -5000))
    cache = tmp_path / "store" / "shop" / "orders" / HISTORY
    digest = json.loads(cache.read_text())
    assert [p["timestamp"] for p in digest["points"]] == [run_timestamp(n) for n in range(15)]

    # the cache is what is read: a profile gone since is still history
    (tmp_path / "store" / "shop" / "orders" / run_timestamp(3) / PROFILE).unlink()
    again = history_findings(store, PREFIX, run_timestamp(15), profile_of(grown(days, -5000)))
    assert by_type(again, "volume_anomaly")[0].details["history_changes"] == \
        by_type(judge(LocalStore(root=str(tmp_path / "fresh")), days, grown(days, -5000)),
                "volume_anomaly")[0].details["history_changes"]

    cache.write_text("{not json")
    rebuilt = history_findings(store, PREFIX, run_timestamp(15), profile_of(grown(days, -5000)))
    assert by_type(rebuilt, "volume_anomaly")
    assert run_timestamp(3) not in [p["timestamp"] for p in json.loads(cache.read_text())["points"]]
