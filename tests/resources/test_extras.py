"""resources/extras.py: a base install (no anthropic, docker or mcp extra) catalogs, and each optional
part used without its extra stops with one line that names the extra and how to install it.

The extras are installed here (the dev extra brings them all), so their absence is made: a folder
put first on PYTHONPATH holds a package of each name whose import fails as a missing module's
does.  The processes a command starts inherit it, so a `cataloger run`'s workers miss them too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from cataloger_dagster.resources.agent.anthropic.agent import AnthropicAgent
from cataloger_dagster.resources.extras import EXTRAS, MissingExtra, missing_extra, require
from cataloger_dagster.resources.sandbox import SandboxError
from cataloger_dagster.resources.sandbox.docker import start_docker

CATALOGER = Path(sys.executable).with_name("cataloger")


@pytest.fixture
def without_extras(tmp_path) -> dict[str, str]:
    """The environment of a process in which no extra's module imports."""
    shadow = tmp_path / "no_extras"
    for module in EXTRAS.values():
        (shadow / module).mkdir(parents=True)
        (shadow / module / "__init__.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{module}'\", name={module!r})\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CATALOGER_", "DAGSTER_", "ANTHROPIC_"))}
    return {**env, "PYTHONPATH": str(shadow), "DAGSTER_HOME": str(tmp_path / "dagster_home")}


def cataloger(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(CATALOGER), *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def tiny_database(folder: Path) -> str:
    path = folder / "tiny.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE tiny AS SELECT range AS id, range % 3 AS grp FROM range(20)")
    return f"duckdb://{path}"


def test_the_shadow_hides_each_extra(without_extras, tmp_path):
    code = "import importlib\nfor m in ('anthropic', 'docker', 'mcp'):\n" \
           "    try:\n        importlib.import_module(m)\n    except ImportError:\n        print(m)\n"
    out = subprocess.run([sys.executable, "-c", code], env=without_extras, capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == ["anthropic", "docker", "mcp"], out.stderr


def test_the_error_names_the_extra_and_its_install_command():
    assert str(missing_extra("mcp", "`cataloger mcp`")) == (
        "`cataloger mcp` needs the 'mcp' extra: pip install 'cataloger-dagster[mcp]'")


def test_require_passes_where_the_extra_is_installed_and_says_which_where_not(monkeypatch):
    require("docker", "the docker sandbox")
    monkeypatch.setitem(sys.modules, "docker", None)   # the import of a module set to None fails
    with pytest.raises(MissingExtra, match=r"^the docker sandbox needs the 'docker' extra: "
                                           r"pip install 'cataloger-dagster\[docker\]'$"):
        require("docker", "the docker sandbox")


def test_the_docker_sandbox_without_its_extra_is_a_sandbox_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "docker", None)
    with pytest.raises(SandboxError, match=r"^the docker sandbox needs the 'docker' extra: pip install "):
        start_docker(data_dir=str(tmp_path), env={}, image="cataloger-sandbox:latest", memory_mb=256, pids=64,
                     cpus=1.0, timeout_s=5.0, tmp_size_mb=16, output_cap_bytes=1024)


def test_the_anthropic_agent_without_its_extra_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(MissingExtra, match=r"^the anthropic agent needs the 'anthropic' extra: pip install "):
        AnthropicAgent(api_key="sk-test").client()


def test_the_package_and_its_default_resources_load_without_any_extra(without_extras, tmp_path):
    code = ("import cataloger_dagster.definitions, cataloger_dagster.cli.app\n"
            "from cataloger_dagster.settings.factories import resources\n"
            "print(sorted(resources()))\n")
    out = subprocess.run([sys.executable, "-c", code], env=without_extras, cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert {"agent", "sandbox", "store"} <= set(eval(out.stdout))


@pytest.mark.parametrize("args, env, expected", [
    (["mcp", "--database", "duckdb://x.duckdb"], {},
     "`cataloger mcp` needs the 'mcp' extra: pip install 'cataloger-dagster[mcp]'"),
    (["sandbox", "build-image"], {},
     "building the Docker images needs the 'docker' extra: pip install 'cataloger-dagster[docker]'"),
    (["sandbox", "build-run-image"], {},
     "building the Docker images needs the 'docker' extra: pip install 'cataloger-dagster[docker]'"),
    (["run", "--database", "duckdb://x.duckdb", "--agent", "anthropic"], {"ANTHROPIC_API_KEY": "sk-test"},
     "CATALOGER_AGENT=anthropic needs the 'anthropic' extra: pip install 'cataloger-dagster[anthropic]'"),
    (["run", "--database", "duckdb://x.duckdb", "--sandbox", "docker"], {},
     "CATALOGER_SANDBOX=docker needs the 'docker' extra: pip install 'cataloger-dagster[docker]'"),
], ids=["mcp", "build-image", "build-run-image", "anthropic-agent", "docker-sandbox"])
def test_a_command_without_its_extra_says_so_in_one_line(without_extras, tmp_path, args, env, expected):
    out = cataloger({**without_extras, **env}, *args, cwd=tmp_path)
    assert out.returncode == 1
    assert out.stderr.strip() == f"Error: {expected}"
    assert not (tmp_path / "x.duckdb").exists()   # stopped before it opened anything


@pytest.mark.slow
def test_cataloger_run_catalogs_without_any_extra(without_extras, tmp_path):
    database = tiny_database(tmp_path)
    env = {**without_extras, "CATALOGER_SANDBOX_ISOLATION": "none"}   # bubblewrap is not what is shown here
    out = cataloger(env, "run", "--database", database, "--store", str(tmp_path / "store"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "cataloged 1/1 tables" in out.stdout
    assert (tmp_path / "store" / "tiny.duckdb" / "index.html").is_file()
