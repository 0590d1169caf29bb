"""`CatalogStore` (store/base.py): the store's logic over its storage primitives, every test on
both backends (a local folder and S3 on moto's server): timestamped scripts, runs claimed one folder
per Dagster run, artifacts never overwritten, the index and its history, listing and ranking."""

from __future__ import annotations

import json
import threading
import uuid
from datetime import date, datetime, time, timezone
from decimal import Decimal
from pathlib import Path, PurePosixPath

import dagster as dg
import pytest

from cataloger_dagster.core.layout import _TS_RE
from cataloger_dagster.resources import store as ss
from cataloger_dagster.resources.store import base as store_base
from cataloger_dagster.resources.store import (
    ArtifactExistsError,
    LocalStore,
    CatalogStore,
    StoreError,
    metrics_filename,
    store_name,
    table_prefix,
)

PREFIX = "shop/orders"
SCRIPT = "catalog_script.py"


def stamp(i: int) -> str:
    """The i-th of a series of distinct, ascending run timestamps."""
    return f"2026-01-01T00:00:{i // 1000:02d}.{i % 1000:06d}Z"


# ---------------------------------------------------------------- scripts


def test_write_and_read_script(store, raw_object):
    code = "import ibis\n\nconn = ibis.connect('duckdb://x')  # é\n"
    uri = store.write_script(PREFIX, stamp(1), SCRIPT, code)
    assert uri == store.uri(PREFIX, stamp(1), SCRIPT)
    assert uri.endswith(f"shop/orders/{stamp(1)}/{SCRIPT}")
    assert raw_object(store, uri) == code.encode("utf-8")
    assert store.read_script(PREFIX, stamp(1), SCRIPT) == code
    assert store.read_script(PREFIX, stamp(1), "summary_script.py") is None
    assert store.read_script(PREFIX, stamp(2), SCRIPT) is None
    assert store.list_runs(PREFIX) == [stamp(1)]


def test_seed_style_timestamps_are_normalized(store):
    store.write_script("customer-123/orders", "2024-01-15T10:00:00Z", SCRIPT, "a = 1")
    store.write_script("customer-123/orders", "2024-01-15T11:00:00+00:00", SCRIPT, "a = 2")
    assert store.list_runs("customer-123/orders") == [
        "2024-01-15T10:00:00.000000Z", "2024-01-15T11:00:00.000000Z"]
    assert store.get_latest_script("customer-123/orders", SCRIPT) == (
        "2024-01-15T11:00:00.000000Z", "a = 2")
    with pytest.raises(ValueError, match="time zone"):
        store.write_script(PREFIX, "2024-01-15T10:00:00", SCRIPT, "x")
    with pytest.raises(ValueError, match="'..'"):
        store.write_script("shop/..", stamp(1), SCRIPT, "x")


def test_get_latest_script_searches_the_last_10_runs_newest_first(store):
    store.write_script(PREFIX, stamp(0), SCRIPT, "oldest")
    for i in range(1, 11):  # ten newer runs without the script
        store.write_artifact(PREFIX, stamp(i), "profile.json", "{}")
    assert store.get_latest_script(PREFIX, SCRIPT) is None  # the 11th is out of reach

    store.write_script(PREFIX, stamp(3), SCRIPT, "third")
    store.write_script(PREFIX, stamp(5), SCRIPT, "fifth")
    assert store.get_latest_script(PREFIX, SCRIPT) == (stamp(5), "fifth")
    assert store.get_latest_script("shop/customers", SCRIPT) is None


def test_write_script_with_metrics_writes_the_metrics_beside(store):
    metrics = {"pass_rate": 0.75, "cells": 4, "seconds": 1.5, "verdicts": {"confirmed": 3}}
    uri = store.write_script_with_metrics(PREFIX, stamp(1), SCRIPT, "x = 1", metrics)
    assert metrics_filename(SCRIPT) == "catalog_script.metrics.json"
    assert uri == store.uri(PREFIX, stamp(1), SCRIPT)
    raw = store.read_artifact(PREFIX, stamp(1), "catalog_script.metrics.json")
    assert json.loads(raw) == metrics
    assert store.read_metrics(PREFIX, stamp(1), SCRIPT) == metrics
    assert store.read_script(PREFIX, stamp(1), SCRIPT) == "x = 1"


# ---------------------------------------------------------------- ranking


def test_best_script_ranks_pass_rate_then_coverage_then_seconds(store):
    runs = [
        ("low pass rate, fast", {"pass_rate": 0.5, "coverage": 1.0, "seconds": 1}),
        ("good, slow", {"pass_rate": 0.9, "coverage": 0.8, "seconds": 30}),
        ("best", {"pass_rate": 0.9, "coverage": 0.8, "seconds": 20}),
        ("good, low coverage", {"pass_rate": 0.9, "coverage": 0.5, "seconds": 5}),
        ("no metrics", None),
    ]
    for i, (code, metrics) in enumerate(runs):
        if metrics is None:
            store.write_script(PREFIX, stamp(i), SCRIPT, code)
        else:
            store.write_script_with_metrics(PREFIX, stamp(i), SCRIPT, code, metrics)

    records = store.list_scripts(PREFIX, SCRIPT)
    assert [r.code for r in records] == [code for code, _ in reversed(runs)]
    assert records[0].metrics is None and records[1].metrics == runs[3][1]
    assert records[2].uri == store.uri(PREFIX, stamp(2), SCRIPT)

    best = store.best_script(PREFIX, SCRIPT)
    assert (best.code, best.timestamp) == ("best", stamp(2))
    fastest = store.best_script(PREFIX, SCRIPT, key=lambda r: -(r.metrics or {}).get("seconds", 1e9))
    assert fastest.code == "low pass rate, fast"
    # only the last `limit` runs compete
    assert store.best_script(PREFIX, SCRIPT, limit=2).code == "good, low coverage"
    assert store.best_script("shop/customers", SCRIPT) is None


def test_scripts_without_metrics_rank_last_and_ties_go_to_the_newest(store):
    store.write_script_with_metrics(PREFIX, stamp(1), SCRIPT, "older", {"pass_rate": 0.1})
    store.write_script(PREFIX, stamp(2), SCRIPT, "no metrics")
    assert store.best_script(PREFIX, SCRIPT).code == "older"
    store.write_script_with_metrics(PREFIX, stamp(3), SCRIPT, "newer", {"pass_rate": 0.1})
    assert store.best_script(PREFIX, SCRIPT).code == "newer"


# ---------------------------------------------------------------- runs


def test_open_run_gives_one_folder_per_run_id(store):
    first = store.open_run(PREFIX, "run-a")
    assert store.open_run(PREFIX, "run-a") == first
    second = store.open_run(PREFIX, "run-b")
    assert second != first and second > first
    assert store.list_runs(PREFIX) == [first, second]
    assert store.run_info(PREFIX, first)["run_id"] == "run-a"
    # a fresh instance (another Dagster step) finds the run from the store alone
    again = store.model_copy()
    again._runs_seen.clear()
    assert again.open_run(PREFIX, "run-a") == first
    assert store.open_run("shop/customers", "run-a") not in ("", None)
    assert store.list_tables("shop") == ["customers", "orders"]


def test_a_run_never_takes_or_overwrites_another_runs_folder(store, monkeypatch):
    frozen = "2026-03-01T12:00:00.000000Z"
    monkeypatch.setattr(store_base, "new_timestamp", lambda: frozen)
    # a folder written directly (no run claimed it), then a run at the same instant
    store.write_script(PREFIX, frozen, SCRIPT, "seed-style")
    run_a = store.open_run(PREFIX, "run-a")
    run_b = store.open_run(PREFIX, "run-b")
    assert len({frozen, run_a, run_b}) == 3
    assert store.read_artifact(PREFIX, frozen, "run.json") is None
    store.write_artifact(PREFIX, run_a, "catalog.html", "<p>a</p>")
    with pytest.raises(ArtifactExistsError):
        store.write_artifact(PREFIX, run_a, "catalog.html", "<p>b</p>")
    with pytest.raises(ArtifactExistsError):
        store.write_artifact(PREFIX, run_a, "run.json", json.dumps({"run_id": "run-b"}))
    assert store.read_artifact(PREFIX, run_a, "catalog.html") == b"<p>a</p>"
    assert store.run_info(PREFIX, run_a)["run_id"] == "run-a"
    assert store.read_script(PREFIX, frozen, SCRIPT) == "seed-style"


def _all_at_once(n: int, work) -> None:
    """``work(i)`` for i < n, in n threads released together; any thread's error fails the test."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            barrier.wait()
            work(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    workers = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert not errors, errors


@pytest.mark.parametrize("clock", ["real", "frozen"])
def test_eight_threads_writing_runs_at_once_lose_nothing(store, monkeypatch, clock):
    if clock == "frozen":  # every claim races for the same microsecond
        monkeypatch.setattr(store_base, "new_timestamp", lambda: "2026-03-01T12:00:00.000000Z")
    threads_n = 8
    opened: dict[int, str] = {}

    def one_run(i: int) -> None:
        ts = store.open_run(PREFIX, f"run-{i}")
        store.write_json(PREFIX, ts, "profile.json", {"run": i, "rows": i * 100})
        store.write_script_with_metrics(PREFIX, ts, SCRIPT, f"print({i})\n" * 50,
                                        {"pass_rate": i / 10})
        store.write_artifact(PREFIX, ts, "catalog.html", f"<h1>{i}</h1>" * 1000)
        assert store.open_run(PREFIX, f"run-{i}") == ts
        opened[i] = ts

    _all_at_once(threads_n, one_run)
    assert len(set(opened.values())) == threads_n
    assert store.list_runs(PREFIX) == sorted(opened.values())
    for i, ts in opened.items():
        assert store.run_info(PREFIX, ts)["run_id"] == f"run-{i}"
        assert store.read_json(PREFIX, ts, "profile.json") == {"run": i, "rows": i * 100}
        assert store.read_script(PREFIX, ts, SCRIPT) == f"print({i})\n" * 50
        assert store.read_metrics(PREFIX, ts, SCRIPT) == {"pass_rate": i / 10}
        assert store.read_artifact(PREFIX, ts, "catalog.html") == (f"<h1>{i}</h1>" * 1000).encode()
    assert store.best_script(PREFIX, SCRIPT).code == "print(7)\n" * 50


def test_concurrent_steps_of_one_run_share_one_folder(store):
    results: list[str] = []
    _all_at_once(6, lambda i: results.append(store.open_run(PREFIX, "the-run")))
    assert len(results) == 6 and len(set(results)) == 1
    assert store.list_runs(PREFIX) == results[:1]


# ---------------------------------------------------------------- artifacts


def test_write_artifact_refuses_to_overwrite(store, raw_object):
    uri = store.write_artifact(PREFIX, stamp(1), "catalog.html", "<p>first</p>")
    with pytest.raises(ArtifactExistsError) as info:
        store.write_artifact(PREFIX, stamp(1), "catalog.html", b"<p>second</p>")
    assert isinstance(info.value, FileExistsError)
    assert uri in str(info.value) and info.value.path == uri
    with pytest.raises(ArtifactExistsError):
        store.write_script(PREFIX, stamp(1), "catalog.html", "x")
    assert store.read_artifact(PREFIX, stamp(1), "catalog.html") == b"<p>first</p>"
    assert raw_object(store, uri) == b"<p>first</p>"


def test_json_artifacts_round_trip(store):
    from cataloger_dagster.core.models import ValueCount

    store.write_json(PREFIX, stamp(1), "issues.json", {"issues": [{"id": "i1", "n": 3}]})
    store.write_json(PREFIX, stamp(1), "top.json", ValueCount(value="é", count=2))
    assert store.read_json(PREFIX, stamp(1), "issues.json") == {"issues": [{"id": "i1", "n": 3}]}
    assert store.read_json(PREFIX, stamp(1), "top.json") == {"value": "é", "count": 2}
    assert store.read_json(PREFIX, stamp(1), "missing.json") is None
    store.write_artifact(PREFIX, stamp(1), "broken.json", "{not json")
    with pytest.raises(StoreError, match="broken.json"):
        store.read_json(PREFIX, stamp(1), "broken.json")


def test_write_index_replaces_index_and_keeps_every_version(store, raw_object):
    first = store.write_index("shop", "<h1>one</h1>")
    second = store.write_index("shop", "<h1>two</h1>")
    assert first == second == store.index_uri("shop")
    assert store.read_index("shop") == "<h1>two</h1>"
    assert raw_object(store, first) == b"<h1>two</h1>"
    folders, files = store._list("shop/index_history")
    assert sorted(store._read(f"shop/index_history/{f}") for f in files) == [
        b"<h1>one</h1>", b"<h1>two</h1>"]
    store.write_artifact(PREFIX, stamp(1), "catalog.html", "x")
    assert store.list_tables("shop") == ["orders"]  # the history folder is not a table


def test_table_prefix_makes_any_name_safe(store):
    prefix = table_prefix("my db", "weird/name..")
    assert prefix.count("/") == 1
    store.write_artifact(prefix, stamp(1), "catalog.html", "x")
    # list_tables takes the database's name, as table_prefix does, and gives names back
    assert store.list_tables("my db") == ["weird/name.."]
    assert table_prefix("db", "..") != "db/.."


def test_a_prefix_not_made_by_table_prefix_is_refused(store):
    for prefix in ("shop/index.html", "shop/..", "shop/a/b", "../shop", "shop/-rf", "shop/my table", "shop"):
        with pytest.raises(ValueError, match="table_prefix"):
            store.write_artifact(prefix, stamp(1), "catalog.html", "x")


# Names that used to break paths, with the plain names beside them
# (the same list as test_store.py, which checks the segments they map to).
HOSTILE = ["a/b", "a", "..", ".", "%", "50%25", "x" * 300, "x" * 301, "index.html", "INDEX.HTML",
           "index_history", "alerts", "database_runs", "mcp_capsules", "table_facts", "review_log", "-rf", ".hidden",
           "Orders", "orders", "line\nbreak", "my table", "a~2Fb",
           "#frag?q=1", "back\\slash", "café", "é" * 200]


def test_every_hostile_table_keeps_to_its_own_folder(store):
    database = "my db"
    store.write_index(database, "<h1>index</h1>")
    for i, name in enumerate(HOSTILE):
        prefix = table_prefix(database, name)
        timestamp = store.open_run(prefix, f"run-{i}", table=name)
        store.write_json(prefix, timestamp, "profile.json", {"table": name})
        uri = store.uri(prefix, timestamp, "profile.json")
        base = store.uri(prefix)
        # every file of the run sits in the table's folder, one level below the database's
        assert uri == f"{base}/{timestamp}/profile.json"
        assert base.rsplit("/", 1)[0] == store.index_uri(database).rsplit("/", 1)[0]
    assert store.read_index(database) == "<h1>index</h1>"
    # the database's own logs beside the tables named like them
    for log in ("alerts", "database_runs", "table_facts", "review_log"):
        store.append_entry(f"{ss.store_name(database)}/{log}", b"{}")
    for name in HOSTILE:
        prefix = table_prefix(database, name)
        [timestamp] = store.list_runs(prefix)
        assert store.read_json(prefix, timestamp, "profile.json") == {"table": name}
    # every name comes back, the hashed ones from the run.json that open_run wrote
    assert store.list_tables(database) == sorted(HOSTILE)
    if isinstance(store, LocalStore):
        root = Path(store.root)
        assert sorted(p.name for p in root.iterdir()) == ["my~20db"]
        assert {p.name for p in (root / "my~20db").iterdir()} == {
            "index.html", "index_history", "alerts", "database_runs", "table_facts", "review_log",
            *(ss.store_name(n) for n in HOSTILE)}
        assert (root / "my~20db" / "index.html").is_file()


def test_open_run_refuses_a_table_name_that_is_not_the_prefixs():
    store = LocalStore(root="/nonexistent-never-written")
    with pytest.raises(ValueError, match="does not live under"):
        store.open_run(table_prefix("shop", "a/b"), "run-1", table="a")


def test_describe_names_the_location_without_credentials(store, tmp_path):
    text = store.describe()
    if isinstance(store, LocalStore):
        assert str(tmp_path / "store") in text
    else:
        assert store.bucket in text and "testing" not in text


def test_store_works_as_a_dagster_resource(store):
    @dg.asset
    def wrote(store: CatalogStore) -> str:
        ts = store.open_run(PREFIX, "dagster-run")
        return store.write_script(PREFIX, ts, SCRIPT, "y = 2")

    result = dg.materialize([wrote], resources={"store": store})
    assert result.success
    (ts,) = store.list_runs(PREFIX)
    assert result.output_for_node("wrote") == store.uri(PREFIX, ts, SCRIPT)
    assert store.read_script(PREFIX, ts, SCRIPT) == "y = 2"


# ---------------------------------------------------------------- what nothing else covered


def test_write_json_writes_the_values_a_run_holds_and_nothing_it_cannot(store, raw_object):
    from cataloger_dagster.core.models import ValueCount

    data = {"when": datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc), "day": date(2026, 1, 2),
            "at": time(3, 4), "amount": Decimal("1.10"), "id": uuid.UUID(int=1),
            "path": PurePosixPath("a/b"), "kinds": frozenset({"x"}), "pair": ("a", 1),
            "nested": [ValueCount(value="é", count=2)]}
    uri = store.write_json(PREFIX, stamp(1), "values.json", data)
    assert store.read_json(PREFIX, stamp(1), "values.json") == {
        "when": "2026-01-02T03:04:05+00:00", "day": "2026-01-02", "at": "03:04:00",
        "amount": "1.10",  # as text: a float would lose the trailing digit a decimal keeps
        "id": "00000000-0000-0000-0000-000000000001", "path": "a/b", "kinds": ["x"], "pair": ["a", 1],
        "nested": [{"value": "é", "count": 2}]}
    # people open these files: UTF-8 text, not \u escapes
    assert "é".encode() in raw_object(store, uri) and b"\\u00e9" not in raw_object(store, uri)
    with pytest.raises(TypeError, match="object is not JSON serializable"):
        store.write_json(PREFIX, stamp(1), "bad.json", {"x": object()})
    # a value that cannot be written leaves no half-written artifact behind
    assert store.read_artifact(PREFIX, stamp(1), "bad.json") is None


def test_artifacts_are_text_as_utf8_or_bytes_as_given(store):
    store.write_artifact(PREFIX, stamp(1), "blob.bin", b"\xff\x00\xfe")
    store.write_artifact(PREFIX, stamp(1), "text.txt", "naïve ✓")
    assert store.read_artifact(PREFIX, stamp(1), "blob.bin") == b"\xff\x00\xfe"
    assert store.read_artifact(PREFIX, stamp(1), "text.txt") == "naïve ✓".encode("utf-8")
    with pytest.raises(TypeError, match="str or bytes, not int"):
        store.write_artifact(PREFIX, stamp(1), "number.txt", 42)
    assert store.read_artifact(PREFIX, stamp(1), "number.txt") is None


@pytest.mark.parametrize("filename", ["", ".hidden", "a/b", "a\\b", "nul\x00"])
def test_file_names_that_would_leave_the_run_folder_are_refused(store, filename):
    with pytest.raises(ValueError, match="invalid file name"):
        store.write_artifact(PREFIX, stamp(1), filename, "x")
    assert store.list_runs(PREFIX) == []  # refused before anything was written


def test_metrics_must_be_a_dict_and_are_checked_before_the_script_is_written(store):
    with pytest.raises(TypeError, match="metrics must be a dict, not list"):
        store.write_script_with_metrics(PREFIX, stamp(1), SCRIPT, "x = 1", [0.5])
    assert store.read_script(PREFIX, stamp(1), SCRIPT) is None
    # metrics that are not an object (written by something else) read as none
    store.write_script(PREFIX, stamp(2), SCRIPT, "x = 2")
    store.write_json(PREFIX, stamp(2), metrics_filename(SCRIPT), [1, 2])
    assert store.read_metrics(PREFIX, stamp(2), SCRIPT) is None
    assert store.read_metrics(PREFIX, stamp(3), SCRIPT) is None
    assert store.list_scripts(PREFIX, SCRIPT)[0].metrics is None


def test_list_runs_lists_only_timestamp_folders_oldest_first(store):
    store.write_artifact(PREFIX, stamp(2), "catalog.html", "b")
    store.write_artifact(PREFIX, stamp(1), "catalog.html", "a")
    # what no run wrote: a folder of another name, a loose file beside the runs
    store._write_new(f"{PREFIX}/notes/readme.txt", b"x")
    store._write_new(f"{PREFIX}/loose.txt", b"x")
    assert store.list_runs(PREFIX) == [stamp(1), stamp(2)]
    assert store.list_runs("shop/customers") == []


def test_list_scripts_limit_counts_scripts_not_runs(store):
    """The run asking (its folder holds no script yet) must not push a script out of the window."""
    store.write_script(PREFIX, stamp(1), SCRIPT, "one")
    store.write_script(PREFIX, stamp(2), SCRIPT, "two")
    for i in (3, 4, 5):
        store.write_artifact(PREFIX, stamp(i), "profile.json", "{}")
    assert [r.code for r in store.list_scripts(PREFIX, SCRIPT, limit=2)] == ["two", "one"]
    assert [r.timestamp for r in store.list_scripts(PREFIX, SCRIPT, limit=1)] == [stamp(2)]


def test_a_new_run_sorts_after_every_existing_folder_even_when_the_clock_is_behind(store):
    future = "2099-01-01T00:00:00.000000Z"
    store.write_artifact(PREFIX, future, "catalog.html", "from a clock far ahead")
    ts = store.open_run(PREFIX, "run-now")
    # one microsecond later, so "newest folder = latest run" holds
    assert ts == "2099-01-01T00:00:00.000001Z"
    assert store.list_runs(PREFIX)[-1] == ts


def test_open_run_records_the_run_and_checks_its_id(store):
    ts = store.open_run(PREFIX, "run-1", table="orders")
    info = store.run_info(PREFIX, ts)
    assert set(info) == {"run_id", "created", "table"}
    assert info["run_id"] == "run-1" and info["table"] == "orders" and _TS_RE.match(info["created"])
    for bad in ("", None, 7):
        with pytest.raises(ValueError, match="run_id must be a non-empty string"):
            store.open_run(PREFIX, bad)
    assert store.list_runs(PREFIX) == [ts]


def test_claim_is_exclusive_and_release_undoes_it(store):
    folder = f"{PREFIX}/{stamp(1)}"
    assert store._claim(folder, b'{"run_id": "a"}') is True
    assert store._claim(folder, b'{"run_id": "b"}') is False
    assert store.run_info(PREFIX, stamp(1)) == {"run_id": "a"}
    store._release(folder)
    assert store.list_runs(PREFIX) == [] and store.run_info(PREFIX, stamp(1)) is None
    assert store._claim(folder, b'{"run_id": "c"}') is True
    # a folder someone wrote into without claiming it is no free folder
    store.write_artifact(PREFIX, stamp(2), "catalog.html", "seed-style")
    assert store._claim(f"{PREFIX}/{stamp(2)}", b'{"run_id": "d"}') is False
    assert store.run_info(PREFIX, stamp(2)) is None


def test_two_claims_of_one_run_resolve_to_the_earliest(store):
    """What two processes of one run leave when both claimed: every step agrees on the earliest folder."""
    for i in (5, 3):
        assert store._claim(f"{PREFIX}/{stamp(i)}", json.dumps({"run_id": "the-run"}).encode())
    assert store.open_run(PREFIX, "the-run") == stamp(3)


def test_list_tables_leaves_out_folders_of_no_table(store):
    store.open_run(PREFIX, "run-1", table="orders")
    store._write_new("shop/not a table/x.txt", b"made by hand")
    # a hashed folder whose run.json names nothing, and one whose run.json names a table that
    # lives elsewhere: neither may pass for a table
    long = "y" * 300
    hashed = store_name(long)
    assert "~~" in hashed
    store.write_artifact(f"shop/{hashed}", stamp(1), "catalog.html", "x")
    forged = store_name("z" * 300)
    store._claim(f"shop/{forged}/{stamp(1)}", json.dumps({"run_id": "r", "table": "orders"}).encode())
    assert store.list_tables("shop") == ["orders"]
    # once a run records the long name, its folder is a table
    store.open_run(table_prefix("shop", long), "run-2", table=long)
    assert store.list_tables("shop") == sorted(["orders", long])
    assert store.list_tables("nowhere") == []


def test_a_database_without_an_index_has_none(store):
    assert store.read_index("shop") is None
    uri = store.write_index("my shop", "<h1>é</h1>")
    assert uri == store.index_uri("my shop") and store.read_index("my shop") == "<h1>é</h1>"
    assert store.read_index("shop") is None


# ---- the review log


def _review(i: int, verdict: str = "dismiss"):
    from cataloger_dagster.core.reviews import IssueSnapshot, Review

    return Review(table="orders", issue_id=f"orders_outliers_{i}", verdict=verdict, note=f"note {i}",
                  reviewer=f"person-{i}", run="2026-03-01T12:00:00.000000Z",
                  issue=IssueSnapshot(type="outliers", severity="low", affectedColumns=["amount"],
                                      affectedRows=i))


def test_reviews_are_appended_and_read_back_oldest_first(store, raw_object):
    assert store.read_reviews(PREFIX) == []
    first = store.append_review(PREFIX, _review(1))
    store.append_review(PREFIX, _review(2, "accept"))
    got = store.read_reviews(PREFIX)
    assert [(r.issue_id, r.verdict, r.reviewer) for r in got] == [
        ("orders_outliers_1", "dismiss", "person-1"), ("orders_outliers_2", "accept", "person-2")]
    assert json.loads(raw_object(store, first))["note"] == "note 1"
    # the log is no run: it never shows up as one
    assert store.list_runs(PREFIX) == []


@pytest.mark.parametrize("clock", ["real", "frozen"])
def test_parallel_reviewers_lose_no_entry(store, monkeypatch, clock):
    if clock == "frozen":  # every entry races for the same microsecond
        monkeypatch.setattr(store_base, "new_timestamp", lambda: "2026-03-01T12:00:00.000000Z")
    writers, each = 8, 5

    def reviewer(i: int) -> None:
        for j in range(each):
            store.append_review(PREFIX, _review(i * 100 + j))

    _all_at_once(writers, reviewer)
    got = sorted(r.issue.affectedRows for r in store.read_reviews(PREFIX))
    assert got == sorted(i * 100 + j for i in range(writers) for j in range(each))


def test_a_damaged_review_entry_is_named(store):
    store.append_review(PREFIX, _review(1))
    store._write_new(f"{PREFIX}/reviews/zz-broken.json", b"{not json")
    with pytest.raises(ss.StoreError, match="zz-broken.json is not a valid review"):
        store.read_reviews(PREFIX)


def test_the_timelapse_is_replaced_in_the_tables_folder_and_is_no_run(store, raw_object):
    prefix = table_prefix("shop", "orders")
    assert not store.has_timelapse(prefix)
    store.write_json(prefix, "2026-01-01T00:00:00.000000Z", "profile.json", {})
    first = store.write_timelapse(prefix, "<p>one</p>")
    second = store.write_timelapse(prefix, "<p>two</p>")
    assert first == second == store.timelapse_uri(prefix) and first.endswith("/shop/orders/timelapse.html")
    assert raw_object(store, second) == b"<p>two</p>" and store.has_timelapse(prefix)
    assert store.list_runs(prefix) == ["2026-01-01T00:00:00.000000Z"]   # beside the runs, not one of them


def test_the_history_digest_is_replaced_in_the_tables_folder_and_is_no_run(store, raw_object):
    prefix = table_prefix("shop", "orders")
    assert store.read_history(prefix) is None
    store.write_json(prefix, "2026-01-01T00:00:00.000000Z", "profile.json", {})
    store.write_history(prefix, b'{"points": []}')
    uri = store.write_history(prefix, b'{"points": [1]}')
    assert uri.endswith("/shop/orders/history.json") and raw_object(store, uri) == b'{"points": [1]}'
    assert store.read_history(prefix) == b'{"points": [1]}'
    assert store.list_runs(prefix) == ["2026-01-01T00:00:00.000000Z"]
    assert store.list_tables("shop") == ["orders"]
