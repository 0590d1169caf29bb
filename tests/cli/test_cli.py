"""cli/__init__.py: the package gives `main` lazily, so the console script finds it and a verb
module run with `python -m` is not imported twice."""

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

import cataloger_dagster.cli as cli

ROOT = Path(__file__).resolve().parents[2]
CATALOGER = str(Path(sys.executable).parent / "cataloger")


def python(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ})


def test_main_is_the_apps_command_group():
    from cataloger_dagster.cli.app import main

    assert cli.main is main and isinstance(main, click.Group)
    assert "main" in cli.__all__


def test_other_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="'cataloger_dagster.cli' has no attribute 'nothing_here'"):
        cli.nothing_here  # noqa: B018
    assert not hasattr(cli, "app_main")


def test_importing_the_package_does_not_load_the_app():
    out = python("-c", "import sys, cataloger_dagster.cli as c; a = 'cataloger_dagster.cli.app' in sys.modules; "
                       "c.main; print(a, 'cataloger_dagster.cli.app' in sys.modules)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_a_verb_module_runs_once_as_main():
    # were it imported through `main` first, runpy would warn that it is already in sys.modules
    out = python("-W", "error::RuntimeWarning", "-m", "cataloger_dagster.cli.sandbox", "--help")
    assert out.returncode == 0, out.stderr
    assert "RuntimeWarning" not in out.stderr and "build-image" in out.stdout


@pytest.mark.slow
def test_the_console_script_reaches_every_verb_group():
    out = subprocess.run([CATALOGER, "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for verb in ("demo-db", "run", "profile", "sandbox", "scripts"):
        assert f"  {verb} " in out.stdout, verb
