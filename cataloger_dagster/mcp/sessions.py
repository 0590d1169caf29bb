"""execute_python: one persistent sandbox session per table, and save_script.

A session is what a catalog run's investigations get (assets/investigations.py): the same
SandboxResource and limits, an environment holding DB_CONNECTION_STRING alone (no credential
of the host gets in), over a read-only snapshot of the table (and of the key columns its
orphan checks read).  State survives from one call to the next, as in a notebook.

`save` stores the session's script in a run folder of its own, marked `origin: "mcp"` with the
session id (in its metrics and in a comment under the script's first line), with the metrics a
catalog run measures for its own (`outcome.script_metrics`): the issues of the latest run its
`record(...)` lines decided, over all of them.  Those verdicts are what the client's code
printed, so they are its claim, not the catalog's finding: the ranking (`ranking.rank_scripts`)
never ranks such a script, and no catalog run starts from it or runs its code.
"""

from __future__ import annotations

import threading
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from cataloger_dagster.core.investigate.code import parse_records, referenced_tables
from cataloger_dagster.core.investigate.codegen import comment_text
from cataloger_dagster.core.investigate.outcome import VERDICTS
from cataloger_dagster.core.investigate.ranking import MCP
from cataloger_dagster.core.layout import SCRIPT
from cataloger_dagster.resources.database.snapshots import SNAPSHOT_URL

if TYPE_CHECKING:
    from cataloger_dagster.core.redaction import Redactor
    from cataloger_dagster.mcp.catalog import Catalog
    from cataloger_dagster.mcp.sensitive_results import SensitiveResults
    from cataloger_dagster.resources.database.resource import DatabaseResource
    from cataloger_dagster.resources.sandbox import SandboxResource, SandboxRuntime

DECIDED = ("confirmed", "refuted")


@dataclass
class _Session:
    stack: ExitStack
    runtime: SandboxRuntime
    snapshot: dict[str, Any]
    outputs: list[str] = field(default_factory=list)  # stdout of the cells that succeeded


def origin_header(script: str, session_id: str) -> str:
    """The script with who wrote it said under its first line (which stays the format header)."""
    first, _, rest = script.partition("\n")
    note = [
        f"# Written by an MCP client (session {comment_text(session_id)}) through save_script, not by",
        "# the catalog: the catalog never ranks it nor runs it. Read it before running it, and run",
        "# it only in a sandbox over a read-only copy of the data, never with plain python on a host.",
    ]
    return "\n".join([first, *note, rest])


class PythonSessions:
    """The sandbox sessions of one MCP client, by table; `close` ends them all."""

    def __init__(
        self,
        sandbox: SandboxResource,
        database: DatabaseResource,
        catalog: Catalog,
        redactor: Redactor,
        db_lock: threading.Lock,
        sensitive: Optional[SensitiveResults] = None,
    ):
        """``sensitive``: what scrubs the values of the table's sensitive columns from the output."""
        self.sandbox, self.database, self.catalog, self.redactor = sandbox, database, catalog, redactor
        self.sensitive = sensitive
        self.db_lock = db_lock
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()

    def _issues(self, table: str) -> list:
        if table not in self.catalog.tables():
            return []
        found = self.catalog.results(table)
        return found.issues.issues if found and found.issues else []

    def _open(self, table: str) -> _Session:
        stack = ExitStack()
        try:
            runtime = stack.enter_context(self.sandbox.session(env={"DB_CONNECTION_STRING": SNAPSHOT_URL}))
            with self.db_lock:
                snapshot = self.database.write_snapshot(
                    table, runtime.data_folder, references=referenced_tables(self._issues(table))
                )
        except BaseException:
            stack.close()
            raise
        return _Session(
            stack,
            runtime,
            {"table": table, "rows": snapshot.rows, "source_rows": snapshot.source_rows, "sampled": snapshot.sampled},
        )

    def session(self, table: str) -> _Session:
        with self._lock:
            if table not in self._sessions:
                self._sessions[table] = self._open(table)
            return self._sessions[table]

    def execute(self, table: str, code: str) -> dict[str, Any]:
        session = self.session(table)
        result = session.runtime.execute(code)
        if result.ok:
            session.outputs.append(result.stdout)
        sensitive = self.sensitive

        def text(value: str) -> str:
            return self.redactor.text(sensitive.text(table, value) if sensitive else value)

        return {
            "ok": result.ok,
            "cell": len(session.runtime.cells),
            "stdout": text(result.stdout),
            "stderr": text(result.stderr),
            "result": text(result.result) if result.result is not None else None,
            "error": {
                "type": result.error.type,
                "message": text(result.error.message),
                "traceback": text(result.error.traceback),
            }
            if result.error
            else None,
            "timed_out": result.timed_out,
            "restarted": result.restarted,
            "truncated": result.truncated,
            "duration_ms": round(result.duration_ms, 1),
            "snapshot": session.snapshot,
        }

    def metrics(self, table: str, session: _Session, session_id: str) -> dict[str, Any]:
        """The session judged as a catalog run judges its script: the latest run's issues that
        its `record(...)` lines decided, over all of them."""
        issues = self._issues(table)
        records: dict[str, dict] = {}
        for out in session.outputs:
            records.update(parse_records(out))
        current = [i.id for i in issues]
        ok = {i: r for i, r in records.items() if i in current and not r.get("error")}
        answered = [i for i in current if ok.get(i, {}).get("verdict")]
        passed = [i for i in answered if ok[i]["verdict"] in DECIDED]
        cells = [c for c in session.runtime.cells if c.ok]
        with self.db_lock:
            fingerprint = self.database.fingerprint(table)
        return {
            "cells": len(cells),
            "seconds": round(sum(c.duration_ms for c in cells) / 1000, 3),
            "cell_seconds": [round(c.duration_ms / 1000, 3) for c in cells],
            "pass_rate": len(passed) / len(current) if current else 1.0,
            "investigations": len(current),
            "answered": answered,
            "coverage": len(answered) / len(current) if current else 1.0,
            "verdicts": {v: sum(1 for i in answered if ok[i]["verdict"] == v) for v in VERDICTS},
            "explored": True,
            "based_on": None,
            "based_on_table": None,
            "reused": [],
            "relearned": [],
            "refreshed": [],
            "why": f"saved from MCP session {session_id}",
            "schema_hash": fingerprint.schema_hash,
            "fingerprint": fingerprint.value,
            "agent": MCP,
            "source": MCP,
            "origin": MCP,
            "session": session_id,
            "backend": self.sandbox.backend,
        }

    def save(self, table: str, session_id: str) -> dict[str, Any]:
        with self._lock:
            session = self._sessions.get(table)
        if session is None or not any(c.ok for c in session.runtime.cells):
            raise LookupError(
                f"no execute_python session over {table!r} has run a cell yet: run code with "
                f"execute_python(code, table={table!r}) first"
            )
        store, prefix = self.catalog.store, self.catalog.prefix(table)
        metrics = self.metrics(table, session, session_id)
        script = origin_header(self.redactor.text(session.runtime.get_session_script()), session_id)
        timestamp = store.open_run(prefix, f"mcp-{session_id}-{uuid.uuid4().hex[:8]}", table=table)
        uri = store.write_script_with_metrics(prefix, timestamp, SCRIPT, script, metrics)
        return {"table": table, "timestamp": timestamp, "uri": uri, "metrics": metrics}

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.stack.close()

    @property
    def open_tables(self) -> list[str]:
        return sorted(self._sessions)
