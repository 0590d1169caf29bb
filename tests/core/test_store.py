"""`store`: the one protocol through which the core reads and writes the store."""

from __future__ import annotations

import ast
from pathlib import Path

import cataloger_dagster
from cataloger_dagster.core.store import Store
from cataloger_dagster.resources.store import LocalStore


def test_the_stores_of_the_resources_are_the_cores_store(tmp_path):
    assert isinstance(LocalStore(root=str(tmp_path)), Store)


def test_the_core_declares_the_store_once():
    core = Path(cataloger_dagster.__file__).resolve().parent / "core"
    protocols = [f"{p.relative_to(core)}:{node.name}" for p in core.rglob("*.py")
                 for node in ast.walk(ast.parse(p.read_text()))
                 if isinstance(node, ast.ClassDef) and "Store" in node.name
                 and any(getattr(b, "id", "") == "Protocol" for b in node.bases)]
    assert protocols == ["store.py:Store"]
