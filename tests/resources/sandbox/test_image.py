"""The Docker sandbox image: recipe, build, and what runs inside it."""

from __future__ import annotations

import json
import os
import shutil
from importlib.metadata import version as installed_version

import docker
import pytest
from click.testing import CliRunner

from cataloger_dagster.cli.sandbox import sandbox as sandbox_cli
from cataloger_dagster.resources.sandbox import image as sandbox_image
from cataloger_dagster.resources.sandbox.base import SANDBOX_UID
from tests.conftest import service_unavailable


def _pins() -> dict[str, str]:
    pins = {}
    for line in (sandbox_image.recipe_dir() / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, pinned = line.partition("==")
            pins[name.split("[", 1)[0]] = pinned
    return pins


def test_requirements_pin_the_host_versions():
    # Session scripts are exported from the sandbox and run on the host; the
    # same code must see the same library versions on both sides.
    pins = _pins()
    for name in ("ibis-framework", "duckdb", "sqlglot", "pandas", "numpy", "pyarrow", "phonenumbers", "python-stdnum"):
        assert name in pins, f"{name} is not pinned in sandbox/requirements.txt"
    drift = {n: (v, installed_version(n)) for n, v in pins.items() if installed_version(n) != v}
    assert not drift, f"sandbox pins differ from the host venv (pin, host): {drift}"


def test_recipe_hash_follows_the_recipe_files(tmp_path):
    copy = tmp_path / "recipe"
    shutil.copytree(sandbox_image.recipe_dir(), copy)
    original = sandbox_image.recipe_hash()
    assert sandbox_image.recipe_hash(copy) == original  # CATALOGER_SANDBOX_RECIPE's, from the settings
    with (copy / "requirements.txt").open("a") as fh:
        fh.write("rich==15.0.0\n")
    assert sandbox_image.recipe_hash(copy) != original


def test_unreachable_engine_says_how_to_start_it(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with pytest.raises(sandbox_image.SandboxImageError, match="not reachable") as info:
        sandbox_image.docker_client()
    assert "dockerd" in str(info.value) and "sandbox.sh" in str(info.value)


@pytest.fixture(scope="module")
def engine():
    try:
        client = sandbox_image.docker_client()
    except sandbox_image.SandboxImageError:
        where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        service_unavailable(f"Docker engine at {where} (bash .ci/sandbox.sh starts one)")
    yield client
    client.close()


@pytest.fixture(scope="module")
def built(engine):
    """Builds the default image (a cache hit when .ci/sandbox.sh already did)."""
    try:
        engine.api.inspect_image(sandbox_image.DEFAULT_BASE)
    except docker.errors.ImageNotFound:
        try:
            sandbox_image.make_debootstrap_base()
        except sandbox_image.SandboxImageError as exc:
            service_unavailable(f"sandbox base image {sandbox_image.DEFAULT_BASE} ({exc})")
    image_id = sandbox_image.build_image()
    return image_id


def _run(engine, command: list[str], user: str | None = None) -> str:
    out = engine.containers.run(
        sandbox_image.DEFAULT_TAG, command, network_mode="none", remove=True,
        user=user, labels={"org.cataloger.sandbox.test": "1"},
    )
    return out.decode()


@pytest.mark.docker
def test_build_tags_the_image_with_recipe_labels(engine, built):
    attrs = engine.api.inspect_image(sandbox_image.DEFAULT_TAG)
    assert attrs["Id"] == built
    labels = attrs["Config"]["Labels"]
    assert labels[sandbox_image.LABEL] == "1"
    assert labels[sandbox_image.HASH_LABEL] == sandbox_image.recipe_hash()
    assert labels[sandbox_image.BASE_LABEL] == sandbox_image.DEFAULT_BASE
    assert sandbox_image.image_present(sandbox_image.DEFAULT_TAG)
    assert not sandbox_image.image_present("cataloger-sandbox:no-such-tag", current=False)


@pytest.mark.docker
def test_image_runs_as_the_sandbox_user(engine, built):
    out = _run(engine, ["python3", "-c",
                        "import os, pwd; print(os.getuid(), os.getgid(), "
                        "pwd.getpwuid(os.getuid()).pw_name, os.getcwd())"])
    assert out.split() == [str(SANDBOX_UID), str(SANDBOX_UID),
                           "sandbox", "/home/sandbox"]


@pytest.mark.docker
def test_both_python_paths_work(engine, built):
    for exe in ("/usr/bin/python3", "/usr/local/bin/python3"):
        out = _run(engine, [exe, "-c", "import sys; print(sys.version_info[:2])"])
        assert out.strip() == "(3, 11)", exe


@pytest.mark.docker
def test_libraries_import_offline_at_host_versions(engine, built):
    # -I: the runtime may start the interpreter isolated; the packages must
    # still be found (they come through a .pth file, not PYTHONPATH).
    code = (
        "import json, ibis, duckdb, pandas, numpy, pyarrow, sqlglot\n"
        "t = ibis.memtable({'a': [1, 2, 3, None]})\n"
        "total = ibis.duckdb.connect().execute(t.a.sum())\n"
        "print(json.dumps({'total': int(total), 'versions': {\n"
        "  'ibis-framework': ibis.__version__, 'duckdb': duckdb.__version__,\n"
        "  'pandas': pandas.__version__, 'numpy': numpy.__version__,\n"
        "  'pyarrow': pyarrow.__version__, 'sqlglot': sqlglot.__version__}}))\n"
    )
    report = json.loads(_run(engine, ["python3", "-I", "-c", code]))
    assert report["total"] == 6
    host = {name: installed_version(name) for name in report["versions"]}
    assert report["versions"] == host


@pytest.mark.docker
def test_cli_build_image_json(engine, built):
    runner = CliRunner()
    result = runner.invoke(sandbox_cli, ["build-image", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["image"] == sandbox_image.DEFAULT_TAG
    assert payload["base"] == sandbox_image.DEFAULT_BASE
    assert payload["id"] == engine.api.inspect_image(sandbox_image.DEFAULT_TAG)["Id"]
    assert payload["built"] is True
    assert "Step" in result.stderr  # build progress goes to stderr, not into the JSON

    again = runner.invoke(sandbox_cli, ["build-image", "--json", "--if-missing"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) | {"built": True} == payload
    assert json.loads(again.stdout)["built"] is False


@pytest.mark.docker
def test_missing_base_says_how_to_get_one(engine):
    runner = CliRunner()
    result = runner.invoke(
        sandbox_cli, ["build-image", "--base", "cataloger-no-such-base:none",
                      "--tag", "cataloger-sandbox:never-built", "--json"],
    )
    assert result.exit_code != 0
    assert "cataloger-no-such-base:none" in result.stderr
    assert "docker pull" in result.stderr and "--debootstrap-base" in result.stderr
    assert result.stdout == ""
    with pytest.raises(docker.errors.ImageNotFound):
        engine.api.inspect_image("cataloger-sandbox:never-built")
