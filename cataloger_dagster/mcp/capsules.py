"""Run capsules: one record per MCP tool call, appended to the store (an audit trail of the session).

A capsule holds the tool, its input, a summary of its result, its duration and the policy's
decision, under ``<database>/mcp_capsules/<session>/`` as the store's append-only logs are
kept (one object per entry, created exclusively).  Every text passes through the `Redactor`
(core/redaction.py) first: no capsule (and no tool result) carries a password of the database
URL or the value of a secret-looking variable of the server's environment.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any, Optional

from pydantic import BaseModel, Field

from cataloger_dagster.core.layout import CAPSULES, new_timestamp, store_name
from cataloger_dagster.core.redaction import Redactor

if TYPE_CHECKING:
    from cataloger_dagster.resources.store import CatalogStore

MAX_INPUT = 4000  # characters of a tool's input a capsule keeps
SESSION_RE = re.compile(r"[0-9a-f]{32}\Z")


class Capsule(BaseModel):
    session: str
    tool: str
    started: str
    seconds: float
    input: dict[str, Any] = Field(default_factory=dict)
    table: Optional[str] = None
    ok: bool = True
    summary: str = ""
    error: Optional[str] = None
    # the SQL policy's decision for run_sql: {"allowed", "reason", "dialect"}
    policy: Optional[dict[str, Any]] = None


def _clip(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_INPUT:
        return value[:MAX_INPUT] + f"…({len(value) - MAX_INPUT} more characters)"
    return value


class CapsuleLog:
    """The capsules of one database in one store."""

    def __init__(self, store: CatalogStore, database: str, redactor: Redactor):
        self.store, self.database, self.redactor = store, database, redactor

    def _folder(self, session: str) -> str:
        if not SESSION_RE.match(session):
            raise ValueError(
                f"invalid session id {session!r}: a session id is 32 hexadecimal digits "
                "(get_capsules shows the current one)"
            )
        return f"{store_name(self.database)}/{CAPSULES}/{session}"

    def record(
        self,
        session: str,
        tool: str,
        *,
        started: float,
        arguments: dict[str, Any],
        summary: str,
        ok: bool = True,
        error: Optional[str] = None,
        table: Optional[str] = None,
        policy: Optional[dict[str, Any]] = None,
    ) -> Capsule:
        capsule = Capsule(
            session=session,
            tool=tool,
            started=new_timestamp(),
            seconds=round(time.monotonic() - started, 3),
            input=self.redactor.value({k: _clip(v) for k, v in arguments.items()}),
            table=table,
            ok=ok,
            summary=self.redactor.text(summary),
            error=self.redactor.text(error) if error else None,
            policy=self.redactor.value(policy) if policy else None,
        )
        self.store.append_entry(
            self._folder(session), capsule.model_dump_json(indent=2).encode("utf-8"), "a run capsule"
        )
        return capsule

    def read(self, *, session: Optional[str] = None, table: Optional[str] = None) -> list[Capsule]:
        """The capsules of a session, or of every session that touched `table`, oldest first."""
        if session is not None:
            sessions = [session]
        else:
            folders = self.store.list_logs(f"{store_name(self.database)}/{CAPSULES}")
            sessions = [f for f in folders if SESSION_RE.match(f)]
        found = []
        for one in sessions:
            for _, data in self.store.read_entries(self._folder(one)):
                try:
                    capsule = Capsule.model_validate(json.loads(data))
                except ValueError:
                    continue  # a hand-edited or foreign file is not a capsule
                if table is None or capsule.table == table:
                    found.append(capsule)
        return sorted(found, key=lambda c: c.started)
