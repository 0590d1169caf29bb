"""Which comments a writeback changes: for each object (the table, each column), the comment it
holds, the description the understanding gives it, and what becomes of it; the diff a person
reads before anything is written.

A comment "a person wrote" is a comment that is neither empty nor one the catalog wrote itself
(the ledger's texts for that object, ledger.py): it is kept unless the writeback is told to
overwrite it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, Optional

from cataloger_dagster.core.models import DatasetUnderstandingModel
from cataloger_dagster.core.shown import visible

Action = Literal["write", "unchanged", "kept"]


@dataclass(frozen=True)
class CommentChange:
    """The comment of ``column`` of ``table`` (of the table itself when None): the one it holds
    (``old``, None for none), the catalog's description (``new``) and what the writeback does."""

    table: str
    column: Optional[str]
    old: Optional[str]
    new: str
    action: Action

    @property
    def label(self) -> str:
        """The object as a person reads it: ``orders`` or ``orders.status``, names as data."""
        return visible(self.table if self.column is None else f"{self.table}.{self.column}")


def plan_comments(
    table: str,
    understanding: DatasetUnderstandingModel,
    current: Mapping[Optional[str], Optional[str]],
    ours: Mapping[Optional[str], Iterable[str]],
    *,
    overwrite: bool = False,
) -> list[CommentChange]:
    """The changes for ``table``: its description, then its columns' in the understanding's
    order.  ``current``: {None: the table's comment, column: its comment} as the database holds
    them now (a column absent from it is no longer in the table and is left out); ``ours``: the
    texts the catalog wrote before, per object."""
    wanted: list[tuple[Optional[str], str]] = [(None, understanding.summary.description)]
    wanted += [(c.name, c.description) for c in understanding.columns if c.name in current]
    changes = []
    for column, description in wanted:
        new = description.strip()
        if not new:
            continue
        old = current.get(column) or None
        if old == new:
            action: Action = "unchanged"
        elif old is not None and not overwrite and old not in set(ours.get(column, ())):
            action = "kept"
        else:
            action = "write"
        changes.append(CommentChange(table, column, old, new, action))
    return changes


def comment_diff(changes: Iterable[CommentChange]) -> str:
    """A unified diff, old comment to new, of every change that writes; each kept comment a
    person wrote named on a line of its own."""
    out: list[str] = []
    for change in changes:
        if change.action == "write":
            out += difflib.unified_diff(
                [] if change.old is None else [visible(line) for line in change.old.splitlines()],
                [visible(line) for line in change.new.splitlines()],
                fromfile=f"{change.label} (comment in the database)",
                tofile=f"{change.label} (catalog)",
                lineterm="",
            )
        elif change.action == "kept":
            out.append(f"# kept: {change.label} has a comment a person wrote (--overwrite replaces it)")
    return "\n".join(out)
