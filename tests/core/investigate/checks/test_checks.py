"""The checks are real Python files: each issue type has one, each file's block is what the
session script carries, and every name a block uses is imported above it, so a linter reads it."""

from __future__ import annotations

import ast
import builtins
import importlib
from importlib import resources

import pytest

from cataloger_dagster.core.investigate import checks
from cataloger_dagster.core.models import HISTORY_ISSUE_TYPES, ISSUE_TYPES, TABLE_STATE_ISSUE_TYPES


def _files() -> list[str]:
    return sorted(e.name for e in resources.files(checks.__package__).iterdir() if e.name.endswith(".py"))


def _free_names(code: str) -> set[str]:
    """The names `code` reads and neither defines nor imports (a small pyflakes)."""
    defined, read = set(dir(builtins)), set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            defined.add(node.name)
        elif isinstance(node, ast.Name):
            (defined if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
    return read - defined


def test_every_issue_type_a_scan_finds_has_a_check_of_its_own():
    # history findings are judged from stored runs, not by a check on the snapshot
    assert set(ISSUE_TYPES) | set(TABLE_STATE_ISSUE_TYPES) <= set(checks.CHECKS)
    assert not set(HISTORY_ISSUE_TYPES) & set(checks.CHECKS)
    assert "generic" in checks.CHECKS


def test_a_check_file_names_its_function_after_the_type():
    for kind, block in checks.CHECKS.items():
        functions = [n.name for n in ast.parse(block).body if isinstance(n, ast.FunctionDef)]
        assert f"check_{kind}" in functions, f"{kind}.py defines {functions}"


@pytest.mark.parametrize("file", _files())
def test_each_file_imports_every_name_its_block_uses(file):
    text = resources.files(checks.__package__).joinpath(file).read_text()
    if file in ("__init__.py", "session.py"):
        assert checks.BLOCK_START not in text
        return
    # the whole file, prelude and block, reads no name it does not define or import
    assert not _free_names(text), f"{file} reads names it does not import: {sorted(_free_names(text))}"
    # and the block alone reads only what the session script defines before it
    session = {n.target.id for n in ast.parse(resources.files(checks.__package__).joinpath("session.py").read_text()).body
               if isinstance(n, ast.AnnAssign)} | {"ibis"}
    helpers = _free_names(checks.HELPERS) | {n.name for n in ast.parse(checks.HELPERS).body
                                             if isinstance(n, ast.FunctionDef)} | {"LIMIT"}
    block = checks.block_of(file)
    heads = {"setup.py": {"json", "os"}}      # what a block's head imports before its code
    # what a module shipped before the check defines (checks.SHIPPED_BEFORE: the classes' rules)
    shipped = checks.SHIPPED_BEFORE.get(file.removesuffix(".py"))
    if shipped:
        package, module = shipped
        heads[file] = {n.name for n in ast.parse(checks.block_of(module, package)).body
                       if isinstance(n, ast.FunctionDef)} | {
            t.id for n in ast.parse(checks.block_of(module, package)).body if isinstance(n, (ast.Assign, ast.AnnAssign))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
    allowed = session | heads.get(file, set()) | (set() if file in ("helpers.py", "setup.py") else helpers)
    assert _free_names(block) <= allowed, f"{file}: {sorted(_free_names(block) - allowed)}"
    if file in checks.SCRIPT_FILES:   # top-level code that reads the table: a script, not a module
        compile(text, file, "exec")
    else:
        importlib.import_module(f"{checks.__package__}.{file.removesuffix('.py')}")


def test_the_architecture_tests_know_which_files_are_scripts():
    from tests.test_architecture import SCRIPTS
    assert SCRIPTS == {f"{checks.__package__}.{f.removesuffix('.py')}" for f in checks.SCRIPT_FILES}


def test_a_file_without_the_block_line_is_refused():
    with pytest.raises(ValueError, match="session.py has no"):
        checks.block_of("session.py")
