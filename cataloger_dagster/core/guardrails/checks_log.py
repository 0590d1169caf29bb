"""Each run of a table's suite, kept in the table's log in the store (``guardrail_checks/``):
what every guardrail measured and the band it was held to.  The values stay in the store, never
in Dagster's event log; the failing rows' keys are kept masked like every value that leaves."""

from __future__ import annotations

from typing import Optional

from cataloger_dagster.core.guardrails.model import GuardrailCheck, GuardrailResult, GuardrailSuite
from cataloger_dagster.core.layout import GUARDRAIL_CHECKS, GUARDRAILS, new_timestamp, table_prefix
from cataloger_dagster.core.sensitive.masking import scrub
from cataloger_dagster.core.store import Store


def load_suite(store: Store, prefix: str, timestamp: str) -> Optional[GuardrailSuite]:
    """The suite a run stored (`guardrails.json`), or None when it wrote none; a ValueError
    naming the file when it is not one."""
    stored = store.read_json(prefix, timestamp, GUARDRAILS)
    if stored is None:
        return None
    try:
        return GuardrailSuite.model_validate(stored)
    except ValueError as e:
        raise ValueError(
            f"{prefix}/{timestamp}/{GUARDRAILS} in {store.describe()} is not a guardrail suite: {e}"
        ) from None


def log_folder(database: str, table: str) -> str:
    return f"{table_prefix(database, table)}/{GUARDRAIL_CHECKS}"


def record_check(
    store: Store,
    database: str,
    suite: GuardrailSuite,
    results: list[GuardrailResult],
    *,
    dagster_run_id: str = "",
) -> tuple[GuardrailCheck, str]:
    """Add one run of `suite` (of the catalog `database`) to its table's log: (the entry, where it is)."""
    check = GuardrailCheck(
        database=database,
        table=suite.table,
        checked_at=new_timestamp(),
        dagster_run_id=dagster_run_id,
        suite_version=suite.version,
        built_at=suite.built_at,
        results=[r.model_copy(update={"failing_keys": [scrub(k) for k in r.failing_keys]}) for r in results],
    )
    data = check.model_dump_json(indent=2).encode("utf-8")
    return check, store.append_entry(log_folder(database, suite.table), data, "a guardrail check")


def read_checks(store: Store, database: str, table: str, *, since: Optional[str] = None) -> list[GuardrailCheck]:
    """The table's guardrail checks, oldest first; with `since`, only those run after it."""
    found = []
    for uri, data in store.read_entries(log_folder(database, table)):
        try:
            check = GuardrailCheck.model_validate_json(data)
        except ValueError as e:
            raise ValueError(f"{uri} is not a guardrail check: {e}") from None
        if since is None or check.checked_at > since:
            found.append(check)
    return found


def check_of_run(store: Store, database: str, table: str, dagster_run_id: str) -> Optional[tuple[GuardrailCheck, str]]:
    """The check the Dagster run `dagster_run_id` made of the table, and where it is stored."""
    for uri, data in reversed(store.read_entries(log_folder(database, table))):
        check = GuardrailCheck.model_validate_json(data)
        if check.dagster_run_id == dagster_run_id:
            return check, uri
    return None


def finding_history(store: Store, database: str, table: str, finding: str) -> list[tuple[str, str]]:
    """(when, what happened) to a finding through its guardrail, oldest first: each failure of the
    guardrail guarding it, and what the catalog run after it concluded."""
    prefix = table_prefix(database, table)
    events: list[tuple[str, str]] = []
    for ts in store.list_runs(prefix):
        stored = load_suite(store, prefix, ts)
        for f in stored.followed_up if stored else []:
            if f.guards != finding:
                continue
            events.append((f.failed_at, f"guardrail {f.guardrail} failed: measured {f.measured:g}"))
            verdict = "confirmed it" if f.outcome == "confirmed" else "refuted it; the guardrail's band was relearned"
            events.append((ts, f"the catalog run's investigation {verdict}"))
    return events
