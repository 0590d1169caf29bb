"""search_catalog's index: SQLite FTS5 (in the standard library, so it needs no download)
over the store's latest results of every table.

One row per table, column and issue: names, descriptions, the issue's text, the evidence and
reason of its investigation.  The index is built in memory and rebuilt when the store changes
(a table's newest run folder moves, or a table comes or goes), checked on each search.
A query is words, never FTS syntax: each word becomes a quoted prefix term, so nothing a caller
types can reach the index as an operator.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cataloger_dagster.mcp.catalog import Catalog

MAX_RESULTS = 50
_WORD = re.compile(r"\w+", re.UNICODE)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)


class SearchIndex:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._signature: tuple | None = None
        self.builds = 0

    def signature(self) -> tuple:
        store, catalog = self.catalog.store, self.catalog
        return tuple((t, tuple(store.list_runs(catalog.prefix(t))[-1:])) for t in catalog.tables())

    def _documents(self):
        for table in self.catalog.tables():
            found = self.catalog.results(table)
            if found is None:
                yield table, "table", table, table, ""
                continue
            understanding = found.understanding
            summary = understanding.summary if understanding else None
            yield (
                table,
                "table",
                table,
                table,
                " ".join(
                    [
                        _text(summary.description if summary else None),
                        *map(_text, summary.observations if summary else []),
                        _text(understanding.suggested_context if understanding else None),
                    ]
                ),
            )
            described = {c.name: c.description for c in understanding.columns} if understanding else {}
            for column in found.profile.columns if found.profile else []:
                yield (
                    table,
                    "column",
                    f"{table}.{column.name}",
                    column.name,
                    " ".join([_text(described.get(column.name)), _text(column.semantic_type), _text(column.dtype)]),
                )
            checked = {i.issue_id: i for i in (found.investigations.investigations if found.investigations else [])}
            for issue in found.issues.issues if found.issues else []:
                inv = checked.get(issue.id)
                yield (
                    table,
                    "issue",
                    issue.id,
                    " ".join([_text(issue.id), _text(issue.type), *map(_text, issue.affectedColumns)]),
                    " ".join(
                        [
                            _text(issue.description),
                            _text(issue.suggestedAction),
                            _text(inv.verdict if inv else None),
                            _text(inv.reason if inv else None),
                            _text(inv.evidence if inv else None),
                        ]
                    ),
                )

    def _build(self) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(tbl UNINDEXED, kind UNINDEXED, ref UNINDEXED, "
            "name, body, tokenize = 'unicode61')"
        )
        db.executemany("INSERT INTO docs VALUES (?, ?, ?, ?, ?)", self._documents())
        db.commit()
        self.builds += 1
        return db

    def _current(self) -> sqlite3.Connection:
        signature = self.signature()
        if self._db is None or signature != self._signature:
            if self._db is not None:
                self._db.close()
            self._db, self._signature = self._build(), signature
        return self._db

    def search(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        words = _WORD.findall(query or "")
        if not words:
            return []
        # every word must match (a prefix of a token); quotes make each a literal term
        match = " ".join('"' + w.replace('"', '""') + '"*' for w in words)
        with self._lock:
            rows = (
                self._current()
                .execute(
                    "SELECT tbl, kind, ref, snippet(docs, 4, '[', ']', '…', 12), bm25(docs, 5.0, 1.0) AS score "
                    "FROM docs WHERE docs MATCH ? ORDER BY score LIMIT ?",
                    (match, max(1, min(limit, MAX_RESULTS))),
                )
                .fetchall()
            )
        return [
            {"table": t, "kind": k, "ref": r, "snippet": s, "score": round(-score, 4)} for t, k, r, s, score in rows
        ]
