"""core/history/timelapse.py: every run of a table, read from one small file per run, and the
review log read against each run's time."""

from __future__ import annotations

import time

import pytest
from pydantic import PrivateAttr

from cataloger_dagster.core.history.timelapse import (
    RunSummary, _rebuilt, in_force, run_summaries, timelapse_rows,
)
from cataloger_dagster.core.layout import RUN_SUMMARY, table_prefix
from cataloger_dagster.core.models import Fingerprint, TableProfile
from cataloger_dagster.core.render.timelapse import render_timelapse
from cataloger_dagster.core.reviews.model import Review
from cataloger_dagster.resources.store import LocalStore
from shop import make_shop


class CountingStore(LocalStore):
    """A real local store that remembers which files it read."""

    _reads: list = PrivateAttr(default_factory=list)

    def _read(self, key):
        self._reads.append(key)
        return super()._read(key)


def profile_of(rows: int) -> TableProfile:
    return TableProfile(database="db", table="t", row_count=rows, column_count=0, columns=[], sample_rows=[],
                        fingerprint=Fingerprint(schema_hash="h", row_count=rows, value="v"))


def review(issue: str, verdict: str, at: str) -> Review:
    return Review(table="t", issue_id=issue, verdict=verdict, reviewer="ana", at=at)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, local_sandbox_for_module):
    from cataloger_dagster.cli.runner import catalog_database

    tmp = tmp_path_factory.mktemp("timelapse")
    db = make_shop(tmp / "shop.duckdb")
    for _ in range(2):
        report = catalog_database(database=f"duckdb:///{db}", store=str(tmp / "store"), tables=["events"],
                                  exploration_rate=0.0)
        assert not report.failed
    return LocalStore(root=str(tmp / "store"))


def test_each_run_writes_its_summary_and_older_runs_are_rebuilt_alike(two_runs):
    prefix = table_prefix("shop.duckdb", "events")
    summaries = run_summaries(two_runs, prefix)
    assert [s.timestamp for s in summaries] == two_runs.list_runs(prefix)
    for summary in summaries:
        assert two_runs.read_json(prefix, summary.timestamp, RUN_SUMMARY) is not None
        # a run from before run_summary.json gives the same numbers from its results
        assert _rebuilt(two_runs, prefix, summary.timestamp) == summary.model_copy(update={"tokens": None})
    first, second = summaries
    assert first.rows == 2030 and first.issue_ids and first.health is not None
    assert first.explored is True and second.explored is False and second.cells < first.cells


def test_a_run_without_issues_is_listed_as_incomplete(tmp_path):
    store = LocalStore(root=str(tmp_path))
    store.write_json("db/t", "2026-01-01T00:00:00.000000Z", "profile.json", profile_of(7))
    [summary] = run_summaries(store, "db/t")
    assert (summary.status, summary.rows, summary.issue_ids) == ("incomplete", 7, [])


def test_reviews_count_from_the_run_after_them():
    runs = [RunSummary(timestamp=f"2026-01-0{d}T00:00:00.000000Z", issue_ids=["a", "b", "c"]) for d in (1, 2, 3)]
    log = [review("a", "dismiss", "2026-01-01T12:00:00+00:00"),
           review("b", "expected", "2026-01-01T13:00:00+00:00"),
           review("a", "accept", "2026-01-02T12:00:00+00:00"),     # a changes its mind
           review("z", "dismiss", "2026-01-02T13:00:00+00:00")]    # an issue no run raises any more
    assert in_force(log, runs[1].timestamp) == {"a": "dismiss", "b": "expected"}
    rows = timelapse_rows(runs, log)
    assert [(r.open, r.dismissed, r.expected, r.accepted) for r in rows] == [
        (3, 0, 0, 0), (1, 1, 1, 0), (2, 1, 1, 1)]


def test_sixty_runs_read_one_small_file_each_and_render_quickly(tmp_path):
    """The step that writes the timelapse reads run_summary.json only, not the profiles."""
    store = CountingStore(root=str(tmp_path))
    prefix = "shop/events"
    big_profile = {"row_count": 1, "columns": [{"name": f"c{i}", "stats": list(range(200))} for i in range(300)]}
    for day in range(60):
        ts = f"2026-01-01T{day // 60:02d}:{day % 60:02d}:00.000000Z"
        store.write_json(prefix, ts, "profile.json", big_profile)
        store.write_json(prefix, ts, RUN_SUMMARY, RunSummary(
            timestamp=ts, rows=1000 + day, issue_ids=[f"i{k}" for k in range(day % 7)], health=80.0 + day % 10,
            pass_rate=0.5 + (day % 5) / 10, cells=day % 9, tokens=day * 100))
    log = [review(f"i{k}", "dismiss", f"2026-01-01T00:{10 * k:02d}:30+00:00") for k in range(5)]
    store._reads.clear()
    started = time.perf_counter()
    rows = timelapse_rows(run_summaries(store, prefix), log)
    html = render_timelapse(database="shop", table="events", rows=rows, reviews=log)
    elapsed = time.perf_counter() - started
    assert len(rows) == 60 and html.count('<tr class="run"') == 60
    assert {key.rsplit("/", 1)[1] for key in store._reads} == {RUN_SUMMARY} and len(store._reads) == 60
    assert elapsed < 2.0, f"60 runs took {elapsed:.2f}s"
    print(f"timelapse of 60 runs: {elapsed * 1000:.0f} ms, {len(html) // 1024} KiB")


def test_recent_summaries_are_the_last_complete_runs_before_this_one(tmp_path):
    from cataloger_dagster.core.history.timelapse import recent_summaries
    from cataloger_dagster.core.layout import RUN_SUMMARY
    from cataloger_dagster.resources.store import store_from_url

    store = store_from_url(str(tmp_path / "store"))
    stamps = [f"2026-01-0{d}T00:00:00.000000Z" for d in range(1, 7)]
    for n, ts in enumerate(stamps):
        if n == 3:   # a run that stopped before its issues: a profile only
            store.write_json("db/t", ts, "profile.json", profile_of(1))
            continue
        store.write_json("db/t", ts, RUN_SUMMARY, {"timestamp": ts, "rows": 100 + n})
    found = recent_summaries(store, "db/t", before=stamps[5], limit=3)
    assert [s.timestamp for s in found] == [stamps[1], stamps[2], stamps[4]]   # oldest first, the 4th left out
    assert [s.rows for s in found] == [101, 102, 104]
    assert recent_summaries(store, "db/t", before=stamps[0], limit=3) == []
