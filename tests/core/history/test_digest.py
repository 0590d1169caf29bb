"""core/history/digest.py: each run's numbers, cached in the table's folder and rebuilt from the profiles."""

import json

from pydantic import PrivateAttr

from cataloger_dagster.core.history.digest import DETAILED_RUNS, load_history, point_of
from cataloger_dagster.core.layout import HISTORY, table_prefix
from cataloger_dagster.resources.store import LocalStore
from histories import Day, profile_of, run_timestamp, write_history

PREFIX = table_prefix("shop", "orders")


class CountingStore(LocalStore):
    """Counts the profile.json reads (the cache is there to spare them) and the listings of runs."""

    _reads: list = PrivateAttr(default_factory=list)
    _listings: list = PrivateAttr(default_factory=list)

    def list_runs(self, prefix):
        self._listings.append(prefix)
        return super().list_runs(prefix)

    def read_json(self, prefix, timestamp, filename):
        self._reads.append(timestamp)
        return super().read_json(prefix, timestamp, filename)


def test_a_point_keeps_the_numbers_the_findings_read():
    point = point_of("2026-09-07T06:00:00.000000Z", profile_of(Day(rows=1234)))
    assert point.rows == 1234 and point.update_column == "updated_at" and point.max_updated
    assert set(point.columns) == {"id", "amount", "status", "updated_at"}
    status = point.columns["status"]
    assert status.top[0] == ("paid", int(1234 * 0.7)) and point.columns["amount"].counts


def test_the_second_load_reads_the_cache_only_and_a_limit_bounds_the_history(tmp_path):
    store = CountingStore(root=str(tmp_path))
    write_history(store, PREFIX, [Day(rows=100 + n) for n in range(12)])
    current = point_of(run_timestamp(12), profile_of(Day(rows=500)))
    first = load_history(store, PREFIX, run_timestamp(12), current=current, limit=10)
    assert [p.rows for p in first] == [102 + n for n in range(10)] and len(store._reads) == 10
    cached = json.loads((tmp_path / "shop" / "orders" / HISTORY).read_text())["points"]
    assert [p["rows"] for p in cached][-1] == 500 and len(cached) == 11

    store._reads.clear()
    second = load_history(store, PREFIX, run_timestamp(12), limit=10)
    assert store._reads == []                       # every run before is in the cache
    assert [(p.timestamp, p.rows, p.fingerprint) for p in second] == [(p.timestamp, p.rows, p.fingerprint) for p in first]
    # the shapes (histograms, top values) of the latest runs only: the drift reads no older one
    assert [p.columns["amount"].counts is not None for p in second] == [False] * (11 - DETAILED_RUNS) + [True] * (DETAILED_RUNS - 1)
    assert all(a.columns["status"].null_fraction == b.columns["status"].null_fraction for a, b in zip(first, second))


def test_a_damaged_earlier_profile_is_left_out(tmp_path):
    store = LocalStore(root=str(tmp_path))
    stamps = write_history(store, PREFIX, [Day(rows=100 + n) for n in range(4)])
    (tmp_path / "shop" / "orders" / stamps[1] / "profile.json").write_text("{not json")
    store.write_json(PREFIX, "2026-09-20T06:00:00.000000Z", "profile.json", {"columns": [{"no": "name"}]})
    assert [p.timestamp for p in load_history(store, PREFIX, "2026-12-01T00:00:00.000000Z")] == [
        stamps[0], stamps[2], stamps[3]]


def test_runs_listed_by_the_caller_spare_the_listing_and_give_the_same_history(tmp_path):
    store = CountingStore(root=str(tmp_path))
    write_history(store, PREFIX, [Day(rows=100 + n) for n in range(6)])
    listed = store.list_runs(PREFIX)
    store._listings.clear()
    given = load_history(store, PREFIX, run_timestamp(6), runs=listed)
    assert store._listings == [] and [p.rows for p in given] == [100 + n for n in range(6)]
    # runs at or after `before` are left out of a caller's listing as of the store's own
    assert [p.rows for p in load_history(store, PREFIX, run_timestamp(3), runs=listed)] == [100, 101, 102]


def test_run_after_run_the_cache_keeps_detail_for_the_latest_runs_only(tmp_path):
    store = LocalStore(root=str(tmp_path))
    days = [Day(rows=100 + n) for n in range(12)]
    write_history(store, PREFIX, days[:8])
    for n in range(8, 12):      # each run adds itself; the run leaving the detailed window is slimmed
        current = point_of(run_timestamp(n), profile_of(days[n]))
        load_history(store, PREFIX, run_timestamp(n), current=current)
        store.write_json(PREFIX, run_timestamp(n), "profile.json", profile_of(days[n]))
        cached = json.loads((tmp_path / "shop" / "orders" / HISTORY).read_text())["points"]
        detailed = ["counts" in p["columns"]["amount"] for p in cached]
        assert len(cached) == n + 1 and detailed == [False] * (n + 1 - DETAILED_RUNS) + [True] * DETAILED_RUNS
