"""`learning`: which earlier script a run starts from (ranking, exploration, transfer), over a
real local store filled with runs as the assets write them."""

from __future__ import annotations

import uuid

import pytest

from cataloger_dagster.core.investigate.learning import (
    MIN_SIMILARITY,
    WINDOW,
    choose_previous_script,
    ranking_context,
    should_explore,
    similar_table_script,
)
from cataloger_dagster.core.layout import ISSUES, PROFILE, SCRIPT, table_prefix
from cataloger_dagster.core.models import ColumnProfile, Fingerprint, TableProfile
from cataloger_dagster.resources.store.database_log import table_facts
from cataloger_dagster.resources.store.local import LocalStore
from store_folders import count_requests

DB = "shop"


def profile(table: str, columns: list[tuple[str, str]], schema_hash: str = "s1") -> TableProfile:
    return TableProfile(
        database=DB, table=table, row_count=10, column_count=len(columns),
        columns=[ColumnProfile(name=n, dtype="x", kind=k, count=10, nulls=0, null_fraction=0.0)
                 for n, k in columns],
        sample_rows=[], fingerprint=Fingerprint(schema_hash=schema_hash, row_count=10, value="v"),
    )


EVENTS = [("event_id", "integer"), ("customer_id", "integer"), ("page", "string"), ("status", "string")]


def add_run(store, table, *, columns=EVENTS, issues=None, script=None, metrics=None,
            schema_hash="s1", with_profile=True) -> str:
    """One run folder as the assets leave it; returns its timestamp."""
    prefix = table_prefix(DB, table)
    ts = store.open_run(prefix, uuid.uuid4().hex, table)
    if with_profile:
        store.write_json(prefix, ts, PROFILE, profile(table, columns, schema_hash))
    if issues is not None:
        store.write_json(prefix, ts, ISSUES, {"issues": [
            {"id": i, "type": "t", "severity": "low", "description": "", "affectedColumns": [],
             "suggestedAction": "", "category": "quick_fixes"} for i in issues], "summary": "", "completedAt": ""})
    if script is not None:
        store.write_script_with_metrics(prefix, ts, SCRIPT, script, metrics or {})
    return ts


@pytest.fixture
def store(tmp_path):
    return LocalStore(root=str(tmp_path / "store"))


def choose(store, table="events", columns=EVENTS, current_ids=frozenset(), **kw):
    options = {"explore": False, "exploration_rate": 0.0, "exploration_seed": 7, **kw}
    return choose_previous_script(store, DB, profile(table, columns), set(current_ids), **options)


# --------------------------------------------------------------------------
# exploration
# --------------------------------------------------------------------------


def test_should_explore_is_seeded_and_follows_the_rate():
    assert not any(should_explore(0.0, 1, "events", n) for n in range(200))
    assert not any(should_explore(-1.0, 1, "events", n) for n in range(200))
    assert all(should_explore(1.0, 1, "events", n) for n in range(200))
    draws = [should_explore(0.3, 1, "events", n) for n in range(1000)]
    # the same table's n-th run decides the same way every time
    assert draws == [should_explore(0.3, 1, "events", n) for n in range(1000)]
    assert 0.22 < sum(draws) / len(draws) < 0.38
    # and each seed and table has its own sequence
    assert draws != [should_explore(0.3, 2, "events", n) for n in range(1000)]
    assert draws != [should_explore(0.3, 1, "orders", n) for n in range(1000)]


def test_explore_requested_or_drawn_ignores_every_earlier_script(store):
    add_run(store, "events", issues=["a"], script="x = 1\n", metrics={"pass_rate": 1.0})
    assert choose(store, explore=True) == (None, "explore requested: earlier scripts ignored (relearning)")
    assert choose(store, exploration_rate=1.0) == (None, "exploration run (rate 1)")


# --------------------------------------------------------------------------
# the table's own scripts
# --------------------------------------------------------------------------


def test_the_best_of_the_tables_scripts_is_fed_forward(store):
    good = add_run(store, "events", script="good\n", metrics={"pass_rate": 1.0, "answered": ["a"]})
    add_run(store, "events", script="worse\n", metrics={"pass_rate": 0.5, "answered": ["a"]})
    add_run(store, "events")        # a run that stopped before its script: takes no place
    script, why = choose(store, current_ids={"a"})
    assert (script.timestamp, script.code, script.table) == (good, "good\n", "events")
    assert why == f"best of the last 2 scripts: {good}"


def test_the_current_issues_and_schema_decide_between_equal_pass_rates(store):
    covers_a = add_run(store, "events", script="a\n", metrics={"pass_rate": 1.0, "answered": ["a"]})
    covers_b = add_run(store, "events", script="b\n", metrics={"pass_rate": 1.0, "answered": ["b"]})
    assert choose(store, current_ids={"a"})[0].timestamp == covers_a
    assert choose(store, current_ids={"b"})[0].timestamp == covers_b
    same_schema = add_run(store, "events", script="c\n",
                          metrics={"pass_rate": 1.0, "answered": ["a"], "schema_hash": "s1"})
    other_schema = add_run(store, "events", script="d\n",
                           metrics={"pass_rate": 1.0, "answered": ["a"], "schema_hash": "old"})
    # the profile's schema hash is s1: the script written for it wins over a newer one's equal
    assert choose(store, current_ids={"a"})[0].timestamp == same_schema != other_schema


def test_only_the_last_window_of_scripts_count(store):
    best_but_old = add_run(store, "events", script="old\n", metrics={"pass_rate": 1.0})
    for n in range(WINDOW):
        add_run(store, "events", script=f"s{n}\n", metrics={"pass_rate": 0.1})
    script, why = choose(store)
    assert script.timestamp != best_but_old and script.code.startswith("s")
    assert why.startswith(f"best of the last {WINDOW} scripts")


def test_no_history_and_nothing_similar_means_exploring(store):
    add_run(store, "weather", columns=[("day", "date"), ("rain_mm", "float")], script="w\n",
            metrics={"pass_rate": 1.0})
    assert choose(store) == (None, "no earlier script: exploring")


# --------------------------------------------------------------------------
# transfer from a similar table
# --------------------------------------------------------------------------


def test_a_new_table_starts_from_the_most_similar_tables_best_script(store):
    # 3 of events' 4 columns, and one of its own: 3/5 similar
    near = [("EVENT_ID", "integer"), ("customer_id", "integer"), ("page", "string"), ("ref", "string")]
    add_run(store, "clicks", columns=near, script="near-bad\n", metrics={"pass_rate": 0.2})
    best = add_run(store, "clicks", columns=near, script="near-good\n", metrics={"pass_rate": 0.9})
    add_run(store, "clicks", columns=near, script="near-newest\n", metrics={"pass_rate": 0.5})
    # 2 of 4 alike (status has another kind here): 2/6, less similar
    far = [("event_id", "integer"), ("customer_id", "integer"), ("page", "integer"), ("status", "boolean")]
    add_run(store, "visits", columns=far, script="far\n", metrics={"pass_rate": 1.0})

    script, score = similar_table_script(store, DB, profile("events", EVENTS))
    assert (script.table, script.code, script.timestamp) == ("clicks", "near-good\n", best)
    assert score == pytest.approx(3 / 5)
    script, why = choose(store)
    assert script.table == "clicks" and why == "no history: starting from clicks's script (60% similar)"


def test_transfer_needs_enough_likeness_a_profile_and_a_script(store):
    # 1 of 4 + 3 columns alike: 1/7, under the threshold
    assert 1 / 7 < MIN_SIMILARITY
    add_run(store, "weak", columns=[("event_id", "integer"), ("a", "string"), ("b", "string"), ("c", "string")],
            script="weak\n", metrics={"pass_rate": 1.0})
    assert similar_table_script(store, DB, profile("events", EVENTS)) is None
    # identical columns, but no run that profiled the table: it is not compared at all
    add_run(store, "unprofiled", with_profile=False, script="u\n", metrics={"pass_rate": 1.0})
    assert similar_table_script(store, DB, profile("events", EVENTS)) is None
    # identical columns and a profile, but no script to start from
    add_run(store, "scriptless")
    assert similar_table_script(store, DB, profile("events", EVENTS)) is None
    # the table itself is never its own transfer source
    add_run(store, "events", script="mine\n", metrics={"pass_rate": 1.0})
    assert similar_table_script(store, DB, profile("events", EVENTS)) is None


def add_facts(store, table, ts, columns=EVENTS):
    """What quality_issues adds to the database's log of table facts."""
    store.append_table_facts(DB, table_facts(profile(table, columns), ts, profile(table, columns)))


def test_the_similar_table_is_found_in_the_databases_facts_without_reading_its_profile(store):
    near = [("EVENT_ID", "integer"), ("customer_id", "integer"), ("page", "string"), ("ref", "string")]
    ts = add_run(store, "clicks", columns=near, script="near\n", metrics={"pass_rate": 0.9}, with_profile=False)
    add_facts(store, "clicks", ts, near)
    script, score = similar_table_script(store, DB, profile("events", EVENTS))
    assert (script.table, script.code, score) == ("clicks", "near\n", pytest.approx(3 / 5))


def test_finding_the_similar_table_costs_the_same_requests_however_many_tables(tmp_path, monkeypatch):
    requests = count_requests(monkeypatch, LocalStore)
    cost = {}
    for tables in (20, 100):
        store = LocalStore(root=str(tmp_path / f"store-{tables}"))
        for i in range(tables):
            columns = [(f"c{i}_{j}", "string") for j in range(4)]   # like nothing else
            add_facts(store, f"t{i:03d}", add_run(store, f"t{i:03d}", columns=columns, script="s\n"), columns)
        add_facts(store, "clicks", add_run(store, "clicks", script="near\n", metrics={"pass_rate": 1.0}))
        store.read_table_facts(DB)   # as the runs before this one leave it: folded
        requests.clear()
        script, _ = similar_table_script(store, DB, profile("events", EVENTS))
        assert script.table == "clicks"
        cost[tables] = sum(requests.values())
    assert cost[20] == cost[100]


# --------------------------------------------------------------------------
# what the next run will rank against
# --------------------------------------------------------------------------


def test_ranking_context_is_the_latest_run_that_stored_its_issues(store):
    prefix = table_prefix(DB, "events")
    assert ranking_context(store, prefix) == (None, None)
    add_run(store, "events", issues=["old"], schema_hash="h1")
    add_run(store, "events", issues=["a", "b"], schema_hash="h2")
    # later runs that did not get as far as issues.json, or wrote something else there
    add_run(store, "events", schema_hash="h3")
    ts = add_run(store, "events", schema_hash="h4")
    store.write_json(prefix, ts, ISSUES, {"issues": "not a list"})
    assert ranking_context(store, prefix) == ({"a", "b"}, "h2")


def test_ranking_context_reads_odd_files_defensively(store):
    prefix = table_prefix(DB, "events")
    add_run(store, "events", with_profile=False, issues=["a"])
    # no profile: the issues are known, the schema is not
    assert ranking_context(store, prefix) == ({"a"}, None)
    # an issues.json its model cannot read ranks nothing: the run before it decides
    ts = add_run(store, "events", with_profile=False)
    store.write_json(prefix, ts, ISSUES, {"issues": [{"id": "a"}, {"id": 7}, "junk", {}]})
    assert ranking_context(store, prefix) == ({"a"}, None)
    # a damaged profile beside readable issues: the issues are known, the schema is not
    ts = add_run(store, "events", with_profile=False, issues=[])
    store.write_json(prefix, ts, PROFILE, {"fingerprint": {"schema_hash": 12}})
    assert ranking_context(store, prefix) == (set(), None)
