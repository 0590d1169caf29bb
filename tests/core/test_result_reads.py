"""`core.results` is the one reader of a table's stored results: every other module gets them as
their pydantic models from it.  A module that reads a result file of the store itself, or reads a
result's fields out of a raw dict (``profile.get("row_count")``), fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import cataloger_dagster
from cataloger_dagster.core import layout, results

PACKAGE = Path(cataloger_dagster.__file__).resolve().parent
LOADER = PACKAGE / "core" / "results.py"

# the stored results, by the names the layout gives their files
RESULT_FILES = {"PROFILE", "UNDERSTANDING", "ISSUES", "INVESTIGATIONS", "RUN_SUMMARY", "KEYS"}

# the fields of a stored result (profile, understanding, issues, investigations, the script's metrics)
RESULT_FIELDS = (
    "row_count", "column_count", "fingerprint", "schema_hash", "pass_rate", "cells", "explored", "cache_key",
    "issues", "investigations", "affectedColumns", "affectedRows", "issue_id", "completedAt", "suggested_context",
    "severity", "based_on", "based_on_table", "degradations", "null_patterns", "sample_rows",
)
RAW_READ = re.compile(r"""\.get\(\s*["'](%s)["']""" % "|".join(RESULT_FIELDS))

# `.get` of these names in these modules reads something else than a stored result, named here
NOT_RESULTS = {
    "assets/checks.py": "the records the rerun script printed",
    "core/investigate/investigator.py": "a sandbox cell's outcome",
    "mcp/sessions.py": "the outcomes of the session's own cells",
    "core/render/pages.py": "the run facts the catalog_page asset hands the page",
    "resources/sandbox/": "the sandbox's protocol messages",
    "resources/agent/": "the agent API's messages",
}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != LOADER:
            yield path, path.relative_to(PACKAGE).as_posix()


def _exempt(name: str) -> bool:
    return any(name == e or (e.endswith("/") and name.startswith(e)) for e in NOT_RESULTS)


def test_the_files_named_are_the_stores_result_files():
    assert {layout.PROFILE, layout.UNDERSTANDING, layout.ISSUES, layout.INVESTIGATIONS} == set(results.RESULT_MODELS)
    assert all(hasattr(layout, name) for name in RESULT_FILES)


def test_no_module_but_the_loader_reads_a_result_file_of_the_store():
    found = []
    for path, name in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr == "read_metrics":
                found.append(f"{name}:{node.lineno}: read_metrics")
            elif node.func.attr in ("read_json", "read_artifact"):
                named = {a.id for a in node.args if isinstance(a, ast.Name)}
                named |= {a.attr for a in node.args if isinstance(a, ast.Attribute)}
                texts = {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
                if named & RESULT_FILES or any(t.endswith((".json",)) and t != layout.RUN_FILE for t in texts):
                    found.append(f"{name}:{node.lineno}: {node.func.attr} of {sorted(named | texts)}")
    # the store itself: its listing of scripts hands each script's metrics on, as they are stored
    found = [f for f in found if not f.startswith("resources/store/base.py:")]
    assert found == [], "read the results through cataloger_dagster.core.results:\n" + "\n".join(found)


def test_no_module_reads_a_results_fields_out_of_a_raw_dict():
    found = [
        f"{name}:{n}: {line.strip()}"
        for path, name in _modules()
        if not _exempt(name)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if RAW_READ.search(line)
    ]
    assert found == [], "read the results as their models (cataloger_dagster.core.results):\n" + "\n".join(found)


@pytest.mark.parametrize("line", [
    'rows = profile.get("row_count")',
    "rate = (metrics or {}).get('pass_rate')",
    'found = run.get( "issues")',
])
def test_the_check_catches_a_raw_read(line):
    assert RAW_READ.search(line)
