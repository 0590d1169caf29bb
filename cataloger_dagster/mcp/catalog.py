"""What the MCP server reads from the store: the tables, one table's results, its scripts.

Every answer comes from the latest run folder that holds a catalog page (the run that
finished), as the index does (`catalog_index.index_entry`), and every script choice goes
through the store's one ranking, so that the server, the index and `cataloger scripts`
never disagree.
"""

from __future__ import annotations

from typing import Any, Optional

from cataloger_dagster.assets.catalog_index import index_entry
from cataloger_dagster.core.investigate.learning import ranking_context
from cataloger_dagster.core.investigate.ranking import script_origin
from cataloger_dagster.core.layout import (
    CATALOG_PAGE,
    SCRIPT,
    normalize_timestamp,
    table_prefix,
)
from cataloger_dagster.core.results import StoredRun, load_metrics, load_run
from cataloger_dagster.resources.store import CatalogStore

ISSUE_FIELDS = {
    "id",
    "type",
    "severity",
    "category",
    "description",
    "affectedColumns",
    "affectedRows",
    "suggestedAction",
}
PROFILE_FIELDS = (
    "name",
    "dtype",
    "kind",
    "nulls",
    "null_fraction",
    "distinct",
    "min",
    "max",
    "mean",
    "semantic_type",
    # the classes of personal or secret data, with their evidence (its examples masked)
    "sensitive",
)


class CatalogError(LookupError):
    """A table, run or script the catalog does not hold; the message says what it holds."""


class Catalog:
    """The store's view of one database."""

    def __init__(self, store: CatalogStore, database: str):
        self.store, self.database = store, database

    def prefix(self, table: str) -> str:
        return table_prefix(self.database, table)

    def tables(self) -> list[str]:
        return self.store.list_tables(self.database)

    def _known(self, table: str) -> str:
        if not isinstance(table, str) or table not in self.tables():
            shown = ", ".join(self.tables()[:30]) or "none yet: run `cataloger run` first"
            raise CatalogError(f"table {table!r} is not in the catalog of {self.database}; tables: {shown}")
        return self.prefix(table)

    def latest_run(self, table: str) -> Optional[str]:
        prefix = self._known(table)
        for timestamp in reversed(self.store.list_runs(prefix)):
            if self.store.read_artifact(prefix, timestamp, CATALOG_PAGE) is not None:
                return timestamp
        return None

    def summary(self) -> list[dict[str, Any]]:
        """Every table with its rows, health and open issues (as the index shows them)."""
        found = []
        for table in self.tables():
            entry = index_entry(self.store, self.database, table, None)
            found.append(
                {
                    "table": table,
                    "rows": entry.row_count,
                    "columns": entry.column_count,
                    "health": entry.health,
                    "open_issues": sum(entry.issues_by_severity.values()),
                    "issues_by_severity": entry.issues_by_severity,
                    "pass_rate": entry.pass_rate,
                    "updated": entry.updated or None,
                    "status": entry.status,
                }
            )
        return found

    def results(self, table: str) -> Optional[StoredRun]:
        """The results of the table's latest finished run; None when it has none."""
        prefix = self._known(table)
        run = self.latest_run(table)
        return load_run(self.store, prefix, run) if run else None

    def table(self, table: str) -> dict[str, Any]:
        """One table: understanding, profile summary, issues with evidence and verdicts, reviews, links."""
        prefix = self._known(table)
        found = self.results(table)
        if found is None:
            raise CatalogError(f"table {table!r} has no finished run yet: run `cataloger run --table {table}`")
        run, profile = found.timestamp, found.profile
        checked = {i.issue_id: i for i in (found.investigations.investigations if found.investigations else [])}
        issues = []
        for issue in found.issues.issues if found.issues else []:
            inv = checked.get(issue.id)
            issues.append(
                {
                    **issue.model_dump(mode="json", include=ISSUE_FIELDS),
                    "verdict": inv.verdict if inv else None,
                    "evidence": (inv.evidence if inv else None) or {},
                    "reason": inv.reason if inv else None,
                    "hypothesis": inv.hypothesis if inv else None,
                    "error": inv.error if inv else None,
                }
            )
        try:
            best = self.script(table, "best")
        except CatalogError:  # only scripts from outside the catalog: none is the best
            best = None
        return {
            "table": table,
            "run": run,
            "understanding": found.understanding.model_dump(mode="json") if found.understanding else None,
            "profile": {
                "rows": profile.row_count if profile else None,
                "column_count": profile.column_count if profile else None,
                "fingerprint": profile.fingerprint.value if profile else None,
                "columns": [c.model_dump(mode="json", include=set(PROFILE_FIELDS)) for c in profile.columns]
                if profile
                else [],
            },
            "issues": issues,
            "pass_rate": found.investigations.pass_rate if found.investigations else None,
            "reviews": [r.model_dump(mode="json") for r in self.store.read_reviews(prefix)],
            "links": {
                "page": self.store.uri(prefix, run, CATALOG_PAGE),
                "index": self.store.index_uri(self.database),
                "best_script": best["uri"] if best else None,
                "resources": {
                    "page": f"catalog://tables/{_quoted(table)}/page",
                    "script": f"catalog://tables/{_quoted(table)}/script",
                },
            },
        }

    def script(self, table: str, which: str = "best") -> Optional[dict[str, Any]]:
        """A stored script: the best (the ranking the next run uses), the latest, or the one of a
        run timestamp, with its origin (who wrote it).  None when the table has none."""
        prefix = self._known(table)
        if which == "best":
            ids, schema_hash = ranking_context(self.store, prefix)
            record = self.store.best_script(prefix, SCRIPT, current_ids=ids, schema_hash=schema_hash)
            if record is None and self.store.list_scripts(prefix, SCRIPT, limit=1):
                raise CatalogError(
                    f"table {table!r} has no script of the catalog's own yet (scripts saved "
                    "through MCP are never ranked); ask for which='latest' or a timestamp"
                )
        elif which == "latest":
            records = self.store.list_scripts(prefix, SCRIPT, limit=1)
            record = records[0] if records else None
        else:
            try:
                timestamp = normalize_timestamp(which)
            except ValueError as exc:
                raise CatalogError(f"which={which!r}: give best, latest or a run timestamp ({exc})") from None
            code = self.store.read_script(prefix, timestamp, SCRIPT)
            if code is None:
                runs = [r.timestamp for r in self.store.list_scripts(prefix, SCRIPT)]
                raise CatalogError(f"table {table!r} has no script at {timestamp}; scripts at: {', '.join(runs)}")
            found = load_metrics(self.store, prefix, timestamp)
            # handed on as stored: the keys the script's run wrote, no more
            metrics = found.model_dump(mode="json", exclude_unset=True) if found else None
            return {
                "timestamp": timestamp,
                "code": code,
                "metrics": metrics,
                "origin": script_origin(metrics),
                "uri": self.store.uri(prefix, timestamp, SCRIPT),
            }
        return None if record is None else {**record.model_dump(), "origin": script_origin(record.metrics)}

    def page(self, table: str) -> Optional[str]:
        prefix = self._known(table)
        run = self.latest_run(table)
        data = self.store.read_artifact(prefix, run, CATALOG_PAGE) if run else None
        return None if data is None else data.decode("utf-8")

    def index(self) -> Optional[str]:
        return self.store.read_index(self.database)


def _quoted(table: str) -> str:
    from urllib.parse import quote

    return quote(table, safe="")
