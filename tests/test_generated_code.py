"""The code the catalog generates is real Python that a linter and a type checker read: every file
whose code a session script, the sandbox or a summary script carries imports (or, for the blocks
that read a table as they load, compiles) and passes `ruff check` and `mypy` as pyproject.toml
configures them; so does a summary script as it is written."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import cataloger_dagster
from cataloger_dagster.core.history.recent_changes import summary_script
from cataloger_dagster.core.history.timelapse import RunSummary
from cataloger_dagster.core.models import TableProfile
from cataloger_dagster.core.investigate.checks import SCRIPT_FILES

PACKAGE = Path(cataloger_dagster.__file__).resolve().parent
ROOT = PACKAGE.parent
CHECKS = PACKAGE / "core" / "investigate" / "checks"
# the checks, the session script's setup, helpers and explore blocks and their declarations; the
# sandbox's supervisor; the summary script and the comparison it carries
GENERATED = sorted([
    *CHECKS.glob("*.py"),
    PACKAGE / "resources" / "sandbox" / "supervisor.py",
    PACKAGE / "core" / "history" / "summary_script.py",
    PACKAGE / "core" / "history" / "comparison.py",
])


def _tool(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def ruff(*files: Path) -> subprocess.CompletedProcess:
    return _tool("ruff", "check", "--no-cache", "--config", ROOT / "pyproject.toml", *files)


def mypy(*files: Path) -> subprocess.CompletedProcess:
    return _tool("mypy", "--config-file", ROOT / "pyproject.toml", *files)


def _said(run: subprocess.CompletedProcess) -> str:
    return f"{' '.join(run.args[2:4])} said:\n{run.stdout}{run.stderr}"


def test_every_generated_code_file_is_listed():
    assert len(GENERATED) > 20 and all(path.is_file() for path in GENERATED)


@pytest.mark.parametrize("path", GENERATED, ids=lambda p: p.name)
def test_a_generated_code_file_imports(path):
    if path.parent == CHECKS and path.name in SCRIPT_FILES:
        # top-level code that reads the table: the sandbox runs it, an import cannot
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
        return
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    assert importlib.import_module(module).__file__ == str(path)


def test_the_generated_code_files_pass_ruff():
    run = ruff(*GENERATED)
    assert run.returncode == 0, _said(run)


def test_the_generated_code_files_pass_mypy():
    run = mypy(*GENERATED)
    assert run.returncode == 0, _said(run)


def _a_summary_script(tmp_path: Path) -> Path:
    previous = TableProfile.model_validate({
        "database": "db", "table": "t", "row_count": 3, "column_count": 2, "sample_rows": [],
        "fingerprint": {"schema_hash": "", "row_count": 3, "value": ""}, "columns": [
            {"name": 'we"ird\nname', "dtype": "float64", "kind": "float", "count": 2, "nulls": 1,
             "null_fraction": 1 / 3, "mean": 2.5, "std": 0.5},
            {"name": "label", "dtype": "string", "kind": "string", "count": 3, "nulls": 0, "null_fraction": 0.0}]})
    trend = [RunSummary(timestamp="2026-01-01T00:00:00.000000Z", rows=3, issue_ids=["x"], health=80.0)]
    path = tmp_path / "summary_script.py"
    path.write_text(summary_script("t\u2028able", previous, previous_timestamp="T1", trend=trend), encoding="utf-8")
    return path


def test_a_written_summary_script_passes_ruff_and_mypy(tmp_path):
    script = _a_summary_script(tmp_path)
    for run in (ruff(script), mypy(script)):
        assert run.returncode == 0, _said(run)


def test_the_checkers_fail_on_a_file_with_a_fault(tmp_path):
    """What the tests above rely on: a lint error and a type error each fail their checker."""
    unlinted = tmp_path / "unlinted.py"
    unlinted.write_text(_a_summary_script(tmp_path).read_text(encoding="utf-8") + "\nprint(UNDEFINED_NAME)\n")
    mistyped = tmp_path / "mistyped.py"
    mistyped.write_text("def half(n: int) -> int:\n    return n / 2\n")
    assert ruff(unlinted).returncode != 0 and "F821" in ruff(unlinted).stdout
    assert mypy(mistyped).returncode != 0 and "Incompatible return value" in mypy(mistyped).stdout
