"""The database's logs (store/database_log.py), on both backends (a local folder and S3 on
moto's server): nothing lost by concurrent writers, a read in a few requests however many entries,
entries that land late, a broken digest or entry, and the review log's one-time copy of older stores."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from store_folders import count_requests

from cataloger_dagster.core.layout import (
    REVIEW_LOG, TABLE_FACTS, format_timestamp, new_timestamp, parse_timestamp, table_prefix,
)
from cataloger_dagster.core.reviews.model import Review
from cataloger_dagster.resources.store import LocalStore, StoreError, database_log
from cataloger_dagster.resources.store.database_log import DIGEST, FOLD_AT, MIGRATED, SETTLE, DatabaseLog

DB = "shop"


def facts(table: str, run: int) -> dict:
    return {"table": table, "run": f"r{run}", "columns": [["id", "integer"]], "keys": {}}


@pytest.fixture
def counted(store, monkeypatch):
    """The store's requests, by primitive."""
    return count_requests(monkeypatch, type(store), ("_read", "_list", "_list_after", "_write_new", "_replace"))


def test_concurrent_writers_lose_nothing_and_each_table_reads_as_its_latest(store):
    def write(worker: int) -> None:
        for run in range(6):
            store.append_table_facts(DB, facts(f"t{worker}", run))
    threads = [threading.Thread(target=write, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    read = store.read_table_facts(DB)
    assert sorted(read) == [f"t{w}" for w in range(6)]
    assert {t: f["run"] for t, f in read.items()} == {f"t{w}": "r5" for w in range(6)}
    # 36 entries read beyond an empty digest: folded, and the next read says the same
    assert store._read(f"{DB}/{TABLE_FACTS}/{DIGEST}") is not None
    assert store.read_table_facts(DB) == read


@pytest.mark.parametrize("tables", [FOLD_AT, 10 * FOLD_AT])
def test_a_read_costs_the_same_requests_however_many_tables(store, counted, tables):
    for i in range(tables):
        store.append_table_facts(DB, facts(f"t{i:04d}", 1))
    store.read_table_facts(DB)          # folds them all into the digest
    store.append_table_facts(DB, facts("new", 1))
    counted.clear()
    read = store.read_table_facts(DB)
    assert len(read) == tables + 1 and read["new"]["run"] == "r1"
    # the digest, one listing from where it ends, and the one entry written since
    assert (counted["_read"], counted["_list_after"]) == (2, 1)
    assert counted["_list"] == (1 if isinstance(store, LocalStore) else 0)   # the folder's, filtered


def test_an_entry_that_lands_late_is_read_and_never_undoes_a_newer_one(store):
    log = database_log.facts_log(store, DB)
    for i in range(FOLD_AT):
        log.append(facts(f"t{i}", 2))
    log.read()
    through = json.loads(store._read(f"{log.folder}/{DIGEST}"))["through"]
    late = format_timestamp(parse_timestamp(through[:27]) - SETTLE / 2)
    # written, with its writer's earlier stamp, after the digest folded the newer ones
    store._write_new(f"{log.folder}/{late}-aaaaaaaaaaaa.json", json.dumps(facts("t0", 1)).encode())
    store._write_new(f"{log.folder}/{late}-bbbbbbbbbbbb.json", json.dumps(facts("latecomer", 1)).encode())
    read = log.read()
    assert read["latecomer"]["run"] == "r1"
    assert read["t0"]["run"] == "r2"       # the late entry of t0 is older than the one folded


def test_a_broken_digest_or_entry_costs_a_slower_read_never_a_wrong_one(store):
    log = database_log.facts_log(store, DB)
    for i in range(FOLD_AT + 2):
        log.append(facts(f"t{i}", 1))
    expected = log.read()
    store._replace(f"{log.folder}/{DIGEST}", b"{broken")
    assert log.read() == expected
    store._write_new(f"{log.folder}/{new_timestamp()}-cccccccccccc.json", b"[1, 2]")
    assert log.read() == expected
    assert len(log.problems) == 1 and "not a JSON object" in log.problems[0]


def test_entries_keyed_by_name_are_all_kept_in_the_order_written(store):
    log = DatabaseLog(store, f"{DB}/{REVIEW_LOG}")
    for i in range(FOLD_AT + 3):
        log.append({"i": i})
    assert [e["i"] for e in log.read().values()] == list(range(FOLD_AT + 3))
    assert [e["i"] for e in log.read().values()] == list(range(FOLD_AT + 3))   # from the digest


def review(table: str, issue: str, verdict: str = "dismiss") -> Review:
    return Review(table=table, issue_id=issue, verdict=verdict, reviewer="ana")


def test_reviews_land_in_the_tables_log_and_the_databases(store):
    store.append_review(table_prefix(DB, "orders"), review("orders", "a"))
    store.append_review(table_prefix(DB, "a/b"), review("a/b", "b", "accept"))
    logs, problems = store.read_database_reviews(DB)
    assert problems == []
    assert {t: [(r.issue_id, r.verdict) for r in log] for t, log in logs.items()} == {
        "orders": [("a", "dismiss")], "a/b": [("b", "accept")]}
    assert [r.issue_id for r in store.read_reviews(table_prefix(DB, "a/b"))] == ["b"]


def test_a_store_written_before_the_review_log_is_copied_in_once(store, counted):
    # as the code before the log wrote them: in each table's own log only
    for i, table in enumerate(("orders", "refunds", "orders")):
        folder = f"{table_prefix(DB, table)}/reviews"
        store.append_entry(folder, review(table, f"issue{i}").model_dump_json().encode())
    store.append_entry(f"{table_prefix(DB, 'refunds')}/reviews", b"{not json")
    logs, problems = store.read_database_reviews(DB)
    assert {t: [r.issue_id for r in log] for t, log in logs.items()} == {
        "orders": ["issue0", "issue2"], "refunds": ["issue1"]}
    assert len(problems) == 1 and "is not valid JSON" in problems[0]
    assert store._read(f"{DB}/{REVIEW_LOG}/{MIGRATED}") is not None
    # copied once: the tables' logs are not listed again
    counted.clear()
    assert store.read_database_reviews(DB)[0] == logs
    assert counted["_list"] == (counted["_list_after"] if isinstance(store, LocalStore) else 0)


def test_a_copy_stopped_halfway_and_done_again_adds_no_entry_twice(store):
    for table in ("orders", "refunds"):
        store.append_entry(f"{table_prefix(DB, table)}/reviews", review(table, "x").model_dump_json().encode())
    # hand-made names too: a name no writer of ours made gets the same derived name each time
    store._write_new(f"{table_prefix(DB, 'orders')}/reviews/by-hand.json", review("orders", "y").model_dump_json().encode())
    database_log.database_reviews(store, DB)
    entries = sorted(n for n in store._list(f"{DB}/{REVIEW_LOG}")[1] if not n.startswith("."))
    assert len(entries) == 3
    _delete_marker(store)   # as if the first copy had stopped before its end
    logs, _ = database_log.database_reviews(store, DB)
    assert sorted(n for n in store._list(f"{DB}/{REVIEW_LOG}")[1] if not n.startswith(".")) == entries
    assert sorted(r.issue_id for r in logs["orders"]) == ["x", "y"]


def _delete_marker(store) -> None:
    key = f"{DB}/{REVIEW_LOG}/{MIGRATED}"
    if hasattr(store, "root"):
        (store._path(key)).unlink()
    else:
        store.s3_resource().get_client().delete_object(Bucket=store.bucket, Key=store._full(key))
    assert store._read(key) is None


def test_entries_of_a_long_log_are_listed_from_where_the_digest_ends(store):
    """On S3 the listing starts after the digest's newest name less SETTLE (StartAfter): the same
    names as the local folder's filtered listing, never a dot name."""
    folder = f"{DB}/{REVIEW_LOG}"
    names = [f"2026-01-01T00:00:{i:02d}.000000Z-{i:012x}.json" for i in range(30)]
    for name in names:
        store._write_new(f"{folder}/{name}", b"{}")
    store._replace(f"{folder}/{DIGEST}", b"{}")
    after = format_timestamp(parse_timestamp(names[20][:27]) - timedelta(microseconds=1))
    assert store._list_after(folder, after) == names[20:]
    assert store._list_after(folder, "") == names


def test_a_reader_that_cannot_write_the_digest_still_reads_every_entry(store, monkeypatch):
    log = database_log.facts_log(store, DB)
    for i in range(FOLD_AT):
        log.append(facts(f"t{i}", 1))

    def refused(self, key, data):
        raise StoreError(f"cannot write {key}: read-only")
    monkeypatch.setattr(type(store), "_replace", refused)
    assert sorted(log.read()) == sorted(f"t{i}" for i in range(FOLD_AT))
    assert len(log.problems) == 1 and "was not updated" in log.problems[0]
