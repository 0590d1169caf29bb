"""execute_python's sessions and save_script: state across calls, honest metrics, and the next
catalog run starting from a saved session."""

from __future__ import annotations

import duckdb
import pytest
from mcp_support import TABLE, catalog, make_database

from cataloger_dagster.core.layout import INVESTIGATIONS, SCRIPT, table_prefix
from cataloger_dagster.mcp.server import Service
from cataloger_dagster.mcp.sessions import PythonSessions
from cataloger_dagster.resources.database import DatabaseResource
from cataloger_dagster.resources.sandbox import SandboxResource
from cataloger_dagster.resources.script_store import LocalScriptStore


def _service(database, store) -> Service:
    return Service(database=DatabaseResource(url=f"duckdb://{database}"), store=LocalScriptStore(root=str(store)),
                   sandbox=SandboxResource(backend="local", timeout_s=20))


def _sessions(service: Service) -> PythonSessions:
    return PythonSessions(service.sandbox, service.database, service.catalog, service.redactor, service.db_lock)


def test_state_persists_and_a_session_that_decides_nothing_scores_nothing(small_catalog, tmp_path):
    import shutil

    import psutil

    shutil.copytree(small_catalog[1], tmp_path / "store")  # it saves a script: a store of its own
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    service = _service(small_catalog[0], tmp_path / "store")
    sessions = _sessions(service)
    try:
        first = sessions.execute(TABLE, "import os, ibis\nt = ibis.connect(os.environ['DB_CONNECTION_STRING'])"
                                        f".table({TABLE!r})\nn = int(t.count().execute())\nprint(n)")
        assert first["ok"], first
        rows = int(first["stdout"])
        assert rows == first["snapshot"]["rows"] == first["snapshot"]["source_rows"]
        second = sessions.execute(TABLE, "print(n + 1)")
        assert second["ok"] and int(second["stdout"]) == rows + 1 and second["cell"] == 2
        failed = sessions.execute(TABLE, "1 / 0")
        assert not failed["ok"] and failed["error"]["type"] == "ZeroDivisionError"
        saved = sessions.save(TABLE, "0" * 32)
        issues = service.catalog.table(TABLE)["issues"]
        assert saved["metrics"]["investigations"] == len(issues) > 0
        # it recorded no verdict: it answers none of the table's issues
        assert saved["metrics"]["pass_rate"] == 0.0 and saved["metrics"]["coverage"] == 0.0
        assert saved["metrics"]["cells"] == 2
        code = service.store.read_script(table_prefix(service.name, TABLE), saved["timestamp"], SCRIPT)
        assert "print(n + 1)" in code and "# 1 / 0" in code  # the failed cell only as a comment
        started = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
        assert started  # the sandbox's processes
    finally:
        sessions.close()
        service.close()
    _, alive = psutil.wait_procs(started, timeout=10)
    assert alive == []


def test_save_script_before_any_cell_says_what_to_do(small_catalog):
    service = _service(*small_catalog)
    try:
        with pytest.raises(LookupError, match="execute_python"):
            _sessions(service).save(TABLE, "0" * 32)
    finally:
        service.close()


@pytest.mark.slow
def test_the_next_run_starts_from_a_saved_session(tmp_path, local_sandbox):
    """A person replays the catalog's script after the table gained a column, adds a cell of
    their own, and saves: the saved script answers every issue on today's schema, so the
    ranking puts it first and the next run's investigations are based on it."""
    database, store = make_database(tmp_path / "club.duckdb"), tmp_path / "store"
    catalog(database, store)
    with duckdb.connect(str(database)) as con:
        con.execute(f"ALTER TABLE {TABLE} ADD COLUMN note VARCHAR")
        con.execute(f"UPDATE {TABLE} SET note = 'note ' || id")
    service = _service(database, store)
    sessions = _sessions(service)
    try:
        best = service.catalog.script(TABLE, "best")
        replay = sessions.execute(TABLE, best["code"])
        assert replay["ok"], replay["error"]
        assert sessions.execute(TABLE, "print(t.note.isnull().sum().execute())")["ok"]
        saved = sessions.save(TABLE, "1" * 32)
    finally:
        sessions.close()
        service.close()
    metrics = saved["metrics"]
    assert metrics["pass_rate"] == 1.0 and metrics["coverage"] == 1.0, metrics
    assert metrics["schema_hash"] != best["metrics"]["schema_hash"]  # it ran on today's table

    report = catalog(database, store, exploration_rate=0.0)
    prefix = table_prefix(database.stem, TABLE)
    run = LocalScriptStore(root=str(store)).read_json(prefix, report.tables[0].run, INVESTIGATIONS)
    assert run["based_on"] == saved["timestamp"]
    assert run["pass_rate"] == 1.0
