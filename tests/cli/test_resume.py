"""cli/resume.py: the database-run log, and which tables a resumed run need not run again.

On a real local folder and on S3 (moto over HTTP); the fingerprints are given as a function,
as the runner gives the database's.
"""

import pytest

from cataloger_dagster.cli.resume import (
    finish_database_run, finished_run, interrupted_run, plan_resume, start_database_run,
)
from cataloger_dagster.core.layout import DATABASE_RUNS, RUN_SUMMARY, store_name, table_prefix
from cataloger_dagster.resources.store import LocalStore, S3Store

DB = "shop"


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path):
    if request.param == "local":
        return LocalStore(root=str(tmp_path / "store"))
    return S3Store(bucket=request.getfixturevalue("s3_bucket"), s3=request.getfixturevalue("s3_resource"))


def finish_table(store, table, fingerprint, run_id="r", status="ok"):
    """A table's run that got as far as its summary (what catalog_page writes last)."""
    prefix = table_prefix(DB, table)
    ts = store.open_run(prefix, f"{run_id}-{table}-{fingerprint}", table=table)
    store.write_json(prefix, ts, RUN_SUMMARY, {"timestamp": ts, "status": status, "fingerprint": fingerprint,
                                               "cells": 3, "issue_ids": []})
    return ts


def test_a_run_that_finished_leaves_nothing_to_resume(store):
    assert interrupted_run(store, DB) is None                 # no run ever
    run_id = start_database_run(store, DB, ["a", "b"])
    started = interrupted_run(store, DB)
    assert started["id"] == run_id and started["tables"] == ["a", "b"]
    finish_database_run(store, DB, run_id, failed=[])
    assert interrupted_run(store, DB) is None
    # a second run that is killed is the one found, not the first one's end
    second = start_database_run(store, DB, ["a"])
    assert interrupted_run(store, DB)["id"] == second


def test_after_an_interrupted_run_only_tables_finished_for_their_current_data_are_kept(store):
    start_database_run(store, DB, ["done", "changed", "half", "never", "broken"])
    done = finish_table(store, "done", "fp-done")
    finish_table(store, "changed", "fp-old")
    finish_table(store, "half", "fp-half")
    # a later run of "half" was killed before its summary: the earlier finished run still counts
    store.open_run(table_prefix(DB, "half"), "killed", table="half")
    finish_table(store, "broken", "fp-broken")
    current = {"done": "fp-done", "changed": "fp-new", "half": "fp-half", "never": "fp-never"}

    def fingerprint(table):
        if table == "broken":
            raise RuntimeError("permission denied for table broken")
        return current[table]

    plan = plan_resume(store, DB, list(current) + ["broken"], fingerprint)
    assert plan.interrupted is not None
    assert sorted(plan.done) == ["done", "half"] and plan.done["done"].timestamp == done
    assert "broken" in plan.unreadable and "permission denied" in plan.unreadable["broken"]
    # the killed run's folder is still there: nothing is deleted
    assert len(store.list_runs(table_prefix(DB, "half"))) == 2


def test_without_an_interrupted_run_every_table_runs_unless_forced(store):
    finish_table(store, "done", "fp")
    run_id = start_database_run(store, DB, ["done"])
    finish_database_run(store, DB, run_id, failed=[])
    assert plan_resume(store, DB, ["done"], lambda t: "fp").done == {}
    assert list(plan_resume(store, DB, ["done"], lambda t: "fp", force=True).done) == ["done"]


def test_a_summary_from_before_fingerprints_were_kept_is_not_trusted(store):
    prefix = table_prefix(DB, "old")
    ts = store.open_run(prefix, "old-run", table="old")
    store.write_json(prefix, ts, RUN_SUMMARY, {"timestamp": ts, "status": "ok"})
    assert finished_run(store, DB, "old").fingerprint is None
    assert plan_resume(store, DB, ["old"], lambda t: "fp", force=True).done == {}


def test_a_damaged_log_entry_resumes_nothing(tmp_path):
    store = LocalStore(root=str(tmp_path))
    store.append_entry(f"{store_name(DB)}/{DATABASE_RUNS}", b"{not json")
    assert interrupted_run(store, DB) is None
    # the log's folder is no table
    assert DATABASE_RUNS not in store.list_tables(DB)
