"""A failed table in one plain line, and its full traceback in a log file the line names.

The log file is local, whatever the store: the traceback is for the person who ran the
command (it names this machine's paths and code), one `less` away, while the store is the
catalog other people read, and may be a bucket.  It goes to ``$DAGSTER_HOME/logs/``, beside
the records of the Dagster runs it is about, when DAGSTER_HOME is set (as `make run` sets it),
else to the system's temporary folder (``cataloger-logs/``), as the runs themselves are then
kept nowhere.  One file per `cataloger run`, made only when a table fails; every secret of
the database URL and of the environment is blanked out first.
"""

from __future__ import annotations

import builtins
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Optional

import dagster as dg

from cataloger_dagster.core.layout import new_timestamp, store_name
from cataloger_dagster.core.redaction import Redactor
from cataloger_dagster.settings.environment import dagster_home, secret_values

# what each step does to a table, for "failed while ..."
STEP_DOING = {
    "table_profile": "profiling it",
    "table_understanding": "describing it",
    "quality_issues": "checking its quality",
    "investigations": "investigating its issues",
    "recent_summary": "summarizing its history",
    "catalog_page": "writing its catalog page",
}


def step_failure(result: dg.ExecuteInProcessResult) -> Optional[tuple[str, Any]]:
    """The first failed step of the run and its error, if a step failed."""
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data and event.step_failure_data.error:
            return event.step_key or "", event.step_failure_data.error
    return None


def plain_message(error) -> str:
    """The user-level error's message, without the class names of the code that raised it
    (a Python builtin's stays: "ZeroDivisionError: division by zero" says more than its message)."""
    inner = error
    while inner.cause is not None and inner.cls_name and inner.cls_name.startswith("Dagster"):
        inner = inner.cause  # Dagster's wrapper ("Error occurred while executing op...") around ours
    message = (inner.message or "").strip()
    name = inner.cls_name or ""
    if name and not hasattr(builtins, name):  # "StoreError: ..." or "package.module.StoreError: ..."
        message = re.sub(rf"^(?:[\w.]+\.)?{re.escape(name)}: ", "", message)
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return " ".join(lines) or name or "unknown error"


def failure_line(step: str, error) -> str:
    """ "<what went wrong> (while <what the step does>)": a failed table's error, one line."""
    doing = f"while {STEP_DOING[step]}" if step in STEP_DOING else f"in step {step}" if step else ""
    return plain_message(error) + (f" ({doing})" if doing else "")


class RunLog:
    """The log file of one `cataloger run`, made at the first traceback written to it."""

    def __init__(self, database: str, url: str) -> None:
        home = dagster_home()
        folder = Path(home) / "logs" if home else Path(tempfile.gettempdir()) / "cataloger-logs"
        self.path = folder / f"run-{new_timestamp().replace(':', '')}-{store_name(database)}.log"
        self._url = url

    def write(self, table: str, traceback: str) -> str:
        """Appends the table's traceback; the file's path."""
        text = Redactor(self._url, secret_values()).text(traceback)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as log:
            os.chmod(self.path, 0o600)
            log.write(f"=== {table}\n{text.rstrip()}\n\n")
        return str(self.path)
