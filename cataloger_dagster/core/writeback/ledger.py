"""What the catalog wrote as comments, per object: the ledger that tells the catalog's own
comments from those a person wrote.

Each writeback adds one entry to the table's log (``<table>/writeback/``, append-only like the
review log) holding the texts it put in its script, applied or not: a comment equal to one of
them is the catalog's, whoever ran the script.  Any other comment is a person's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Optional

from cataloger_dagster.core.layout import WRITEBACK_FOLDER
from cataloger_dagster.core.store import Store
from cataloger_dagster.core.writeback.plan import CommentChange


def _folder(prefix: str) -> str:
    return f"{prefix.strip('/')}/{WRITEBACK_FOLDER}"


def catalog_comments(store: Store, prefix: str) -> dict[Optional[str], set[str]]:
    """{None: the table's texts, column: its texts} the catalog has written for the table at
    ``prefix``; an entry that cannot be read adds nothing (its comments then count as a person's)."""
    found: dict[Optional[str], set[str]] = {}
    for _, data in store.read_entries(_folder(prefix)):
        try:
            entry = json.loads(data)
            comments = entry["comments"] if isinstance(entry, dict) else []
        except (ValueError, KeyError):
            continue
        for comment in comments if isinstance(comments, list) else []:
            if isinstance(comment, dict) and isinstance(comment.get("text"), str):
                column = comment.get("column")
                found.setdefault(column if isinstance(column, str) else None, set()).add(comment["text"])
    return found


def remember(store: Store, prefix: str, changes: Iterable[CommentChange], *, applied: bool) -> str | None:
    """Adds the texts ``changes`` write to the ledger; None when they write nothing."""
    written = [{"column": c.column, "text": c.new} for c in changes if c.action == "write"]
    if not written:
        return None
    data = json.dumps({"applied": applied, "comments": written}, ensure_ascii=False).encode("utf-8")
    return store.append_entry(_folder(prefix), data, "a writeback entry")
