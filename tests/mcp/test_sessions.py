"""execute_python's sessions and save_script: state across calls, honest metrics, and the next
catalog run starting from a saved session."""

from __future__ import annotations

import duckdb
import pytest
from mcp_support import TABLE, catalog, make_database

from cataloger_dagster.core.layout import INVESTIGATIONS, SCRIPT, table_prefix
from cataloger_dagster.mcp.server import Service
from cataloger_dagster.mcp.sessions import PythonSessions
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.sandbox import SandboxResource
from cataloger_dagster.resources.store import LocalStore


def _service(database, store) -> Service:
    return Service(database=DatabaseResource(url=f"duckdb://{database}"), store=LocalStore(root=str(store)),
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


OTHER = "visits"


def _fake_verdicts(issue_ids: list[str]) -> str:
    """A cell that decides nothing and prints a "confirmed" record line for every issue, under a
    setup marker, as a client gaming the ranking would."""
    return ("# block: setup\nimport json\nTABLE = " + repr(TABLE) + "\n"
            + "".join(f"print(json.dumps({{'issue': {i!r}, 'verdict': 'confirmed', 'evidence': {{}}}}))\n"
                      for i in issue_ids))


@pytest.mark.slow
def test_a_script_saved_through_mcp_is_marked_and_never_starts_a_run(tmp_path, local_sandbox):
    """A client saves a script whose output claims every issue confirmed: the script and its
    metrics say it came from that MCP session, and the next catalog run neither starts from it
    nor takes its claimed pass rate; the untouched table of the same run is investigated as before."""
    database, store = make_database(tmp_path / "club.duckdb"), tmp_path / "store"
    with duckdb.connect(str(database)) as con:
        con.execute(f"CREATE TABLE {OTHER} AS SELECT i AS id, CASE WHEN i % 5 = 0 THEN NULL "
                    "ELSE 'page ' || i END AS page FROM range(50) t(i)")
    first = catalog(database, store)
    service = _service(database, store)
    sessions = _sessions(service)
    session_id = "2" * 32
    try:
        catalog_best = service.catalog.script(TABLE, "best")
        assert catalog_best["origin"] == "catalog" and catalog_best["metrics"]["origin"] == "catalog"
        issue_ids = [i["id"] for i in service.catalog.table(TABLE)["issues"]]
        assert sessions.execute(TABLE, _fake_verdicts(issue_ids))["ok"]
        saved = sessions.save(TABLE, session_id)
        stored = service.catalog.script(TABLE, saved["timestamp"])
        # it did claim everything: that claim is what must not count
        assert saved["metrics"]["pass_rate"] == 1.0 and saved["metrics"]["coverage"] == 1.0
        assert saved["metrics"]["origin"] == "mcp" and saved["metrics"]["session"] == session_id
        assert stored["origin"] == "mcp"
        header = stored["code"].splitlines()[:3]
        assert f"MCP client (session {session_id})" in header[1], header
        # the best the next run starts from is still the catalog's
        assert service.catalog.script(TABLE, "best")["timestamp"] == catalog_best["timestamp"]
    finally:
        sessions.close()
        service.close()

    prefix, other_prefix = table_prefix(service.name, TABLE), table_prefix(service.name, OTHER)
    runs_before = {t.table: t.run for t in first.tables}
    # both tables in one Dagster run, as `cataloger run --batch 2` runs them
    report = catalog(database, store, exploration_rate=0.0, resume=False, batch=2)
    reader = LocalStore(root=str(store))
    runs = {t.table: t.run for t in report.tables}
    assert not any(t.resumed for t in report.tables)
    run = reader.read_json(prefix, runs[TABLE], INVESTIGATIONS)
    assert run["based_on"] == catalog_best["timestamp"] != saved["timestamp"]
    before = reader.read_json(prefix, runs_before[TABLE], INVESTIGATIONS)
    assert {i["issue_id"]: i["verdict"] for i in run["investigations"]} == \
        {i["issue_id"]: i["verdict"] for i in before["investigations"]}
    assert run["pass_rate"] == before["pass_rate"]
    # the untouched table: started from its own catalog script, with the same verdicts
    other_before = reader.read_json(other_prefix, runs_before[OTHER], INVESTIGATIONS)
    other = reader.read_json(other_prefix, runs[OTHER], INVESTIGATIONS)
    assert other["based_on"] == runs_before[OTHER]
    assert [(i["issue_id"], i["verdict"], i["success"]) for i in other["investigations"]] == \
        [(i["issue_id"], i["verdict"], i["success"]) for i in other_before["investigations"]]
    assert all(i["success"] for i in other["investigations"]) and other["investigations"]
