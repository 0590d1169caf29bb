"""What a table's own documentation already says: its database comments and a dbt project's
``manifest.json`` (descriptions of models and sources, and their tests).  It is context for the
understanding and the issues agents, and a dbt test makes the catalog's pin of the same check
redundant: that pin is left out of the guardrail suite, named as covered by dbt.

Only the manifest's stable keys are read: ``nodes`` and ``sources``, each with
``resource_type``, ``name``/``alias``/``identifier``, ``description``, ``columns``; a test's
``test_metadata`` (``name``, ``kwargs.column_name``), ``column_name`` and ``attached_node`` (or
``depends_on.nodes``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, TypeVar

from pydantic import BaseModel, Field

from cataloger_dagster.core.models import DatasetUnderstandingModel

M = TypeVar("M", bound=DatasetUnderstandingModel)

# dbt's generic tests and the guardrail kind each makes redundant
DBT_TEST_KINDS = {
    "not_null": "null_rate",
    "unique": "unique",
    "accepted_values": "accepted_values",
    "relationships": "reference",
}


class DocumentationError(ValueError):
    """A manifest that cannot be read; the message names the file and what to do."""


class DbtTest(BaseModel):
    name: str  # the test node's name, as dbt reports it
    test: str  # the generic test: not_null, unique, accepted_values, relationships...
    column: Optional[str] = None


class Documented(BaseModel):
    """A table's existing documentation: its description and its columns', each from the
    database's comments or dbt (dbt's first where both have one), and dbt's tests of it."""

    description: Optional[str] = None
    columns: dict[str, str] = Field(default_factory=dict)
    dbt_tests: list[DbtTest] = Field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.description or self.columns or self.dbt_tests)

    def for_prompt(self) -> dict[str, Any]:
        return self.model_dump(exclude_defaults=True)


def _text(value: Any) -> Optional[str]:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _names(node: dict) -> set[str]:
    return {n.casefold() for n in (node.get("alias"), node.get("identifier"), node.get("name")) if isinstance(n, str)}


def read_manifest(path: str | Path) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DocumentationError(f"cannot read the dbt manifest {path}: {exc}; check CATALOGER_DBT_MANIFEST") from None
    if not isinstance(data, dict) or not isinstance(data.get("nodes", {}), dict):
        raise DocumentationError(f"{path} is not a dbt manifest.json (no nodes); check CATALOGER_DBT_MANIFEST")
    return data


def from_manifest(manifest: dict, table: str) -> Documented:
    """What the manifest says of ``table`` (a model or source whose alias, identifier or name
    is the table's, compared case-insensitively)."""
    nodes = {**(manifest.get("sources") or {}), **(manifest.get("nodes") or {})}
    matched = {
        key: node
        for key, node in nodes.items()
        if isinstance(node, dict)
        and node.get("resource_type") in ("model", "source", "seed", "snapshot")
        and table.casefold() in _names(node)
    }
    documented = Documented()
    for node in matched.values():
        documented.description = documented.description or _text(node.get("description"))
        for name, column in (node.get("columns") or {}).items():
            text = _text(column.get("description")) if isinstance(column, dict) else None
            if text:
                documented.columns.setdefault(column.get("name") or name, text)
    for node in nodes.values():
        if not isinstance(node, dict) or node.get("resource_type") != "test":
            continue
        attached = node.get("attached_node") or next(iter((node.get("depends_on") or {}).get("nodes") or []), None)
        metadata = node.get("test_metadata") or {}
        if attached in matched and isinstance(metadata.get("name"), str):
            column = node.get("column_name") or (metadata.get("kwargs") or {}).get("column_name")
            documented.dbt_tests.append(
                DbtTest(
                    name=str(node.get("name", "")),
                    test=metadata["name"],
                    column=column if isinstance(column, str) else None,
                )
            )
    return documented


def with_comments(
    documented: Documented, table_comment: Optional[str], column_comments: dict[str, Optional[str]]
) -> Documented:
    """``documented`` with the database's comments where it has no description."""
    columns = {name: text for name, c in column_comments.items() if (text := _text(c))}
    return documented.model_copy(
        update={
            "description": documented.description or _text(table_comment),
            "columns": {**columns, **documented.columns},
        }
    )


def covered_by_dbt(kind: str, columns: list[str], tests: list[DbtTest]) -> Optional[str]:
    """The dbt test that already checks what a guardrail of ``kind`` on ``columns`` would, if any."""
    for test in tests:
        if DBT_TEST_KINDS.get(test.test) == kind and test.column is not None and columns == [test.column]:
            return test.name
    return None


def with_documentation(understanding: M, documented: Optional[Documented]) -> M:
    """``understanding`` with the table's own descriptions where it has them: what its owners
    wrote is kept over a description the catalog guessed from names and statistics."""
    if not documented:
        return understanding
    summary = understanding.summary.model_copy(
        update={"description": documented.description or understanding.summary.description}
    )
    columns = [
        c.model_copy(update={"description": documented.columns.get(c.name, c.description)})
        for c in understanding.columns
    ]
    return understanding.model_copy(update={"summary": summary, "columns": columns})
