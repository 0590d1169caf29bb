"""Fixtures of the Anthropic agent's tests: the demo's web_events table (profile and detected issues),
the local stand-in of the Messages API (tests/support/anthropic_standin.py; never the paid API), and
a bubblewrap sandbox session holding the table's snapshot."""

from __future__ import annotations

import os

import pytest

from anthropic_standin import StandIn
from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.resources.database.snapshots import SNAPSHOT_URL
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.sandbox import SandboxResource

TABLE = "web_events"


@pytest.fixture(scope="module")
def table(demo_db):
    db = DatabaseResource(url=f"duckdb://{demo_db}")
    profile = compute_profile(db.table(TABLE), database=db.database_name, table_name=TABLE,
                              fingerprint=db.fingerprint(TABLE))
    issues = detect_issues(db.table(TABLE), profile, catalog=db.catalog())
    assert issues, "the demo's web_events has planted issues"
    return db, profile, issues


@pytest.fixture
def standin():
    with StandIn() as s:
        yield s


@pytest.fixture
def session(table, tmp_path, local_sandbox):
    db, profile, issues = table
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(data, 0o755)
    sandbox = SandboxResource(backend="local", isolation="bwrap")
    with sandbox.session(str(data), env={"DB_CONNECTION_STRING": SNAPSHOT_URL}) as rt:
        db.write_snapshot(TABLE, str(data))
        yield rt
