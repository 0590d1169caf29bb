"""cli/sandbox.py: `cataloger sandbox build-image`, against the real Docker engine and the image
`cataloger-sandbox:latest` that CI builds from the shipped recipe.

Only `--if-missing` over the current image is run (a real build takes many minutes and a
registry); the errors are checked without a build: a bad setting, no engine.
"""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cataloger_dagster.cli.app import main
from cataloger_dagster.cli.sandbox import sandbox
from cataloger_dagster.resources.sandbox import image as sandbox_image
from tests.conftest import service_unavailable

ROOT = Path(__file__).resolve().parents[2]


def invoke(*args, env=None):
    env = {"CATALOGER_SANDBOX_RECIPE": None, "CATALOGER_AGENT": None, **(env or {})}
    return CliRunner().invoke(sandbox, ["build-image", *args], env=env, catch_exceptions=False)


@pytest.fixture
def engine(docker_sandbox):
    import docker

    client = docker.from_env()
    try:
        yield client
    finally:
        client.close()


def test_if_missing_leaves_the_current_image_alone_json(engine):
    before = engine.images.get(sandbox_image.DEFAULT_TAG).id
    out = invoke("--if-missing", "--json")
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result == {"image": sandbox_image.DEFAULT_TAG, "id": before, "base": sandbox_image.DEFAULT_BASE,
                      "built": False, "recipe_hash": sandbox_image.recipe_hash()}
    assert engine.images.get(sandbox_image.DEFAULT_TAG).id == before


def test_if_missing_text_says_up_to_date(engine):
    image_id = engine.images.get(sandbox_image.DEFAULT_TAG).id
    out = invoke("--if-missing")
    assert out.exit_code == 0, out.output
    assert out.stdout.strip() == f"{sandbox_image.DEFAULT_TAG} {image_id} (up to date, base {sandbox_image.DEFAULT_BASE})"


def test_the_recipe_setting_is_the_recipe_used(engine, tmp_path):
    # an identical copy of the shipped recipe hashes the same, so the image is current for it
    recipe = tmp_path / "recipe"
    shutil.copytree(ROOT / "cataloger_dagster" / "sandbox_recipe", recipe)
    out = invoke("--if-missing", "--json", env={"CATALOGER_SANDBOX_RECIPE": str(recipe)})
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["recipe_hash"] == sandbox_image.recipe_hash(recipe) == sandbox_image.recipe_hash()


def test_an_engine_that_is_not_there_is_a_clear_error(tmp_path):
    out = invoke("--if-missing", env={"DOCKER_HOST": f"unix://{tmp_path / 'no-engine.sock'}"})
    assert out.exit_code == 1
    assert "Docker engine not reachable" in out.output and "no-engine.sock" in out.output
    assert "Traceback" not in out.output


def test_a_bad_setting_is_a_clear_error():
    out = invoke("--if-missing", env={"CATALOGER_AGENT": "bogus"})
    assert out.exit_code == 1 and "unknown CATALOGER_AGENT 'bogus'" in out.output


def test_the_verb_group_is_part_of_the_cataloger_command():
    out = CliRunner().invoke(main, ["sandbox", "build-image", "--help"], terminal_width=200)
    assert out.exit_code == 0
    for option in ("--base", "--tag", "--debootstrap-base", "--if-missing", "--json"):
        assert option in out.output
    assert sandbox_image.DEFAULT_TAG in out.output and sandbox_image.DEFAULT_BASE in out.output


def test_build_run_image_if_missing_leaves_the_current_run_image_alone(engine):
    from cataloger_dagster.cli import run_image

    if not run_image.run_image_present():
        service_unavailable(f"{run_image.DEFAULT_RUN_TAG} built from these sources (.ci/run_image.sh)")
    before = engine.images.get(run_image.DEFAULT_RUN_TAG).id
    out = CliRunner().invoke(sandbox, ["build-run-image", "--if-missing", "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout) == {"image": run_image.DEFAULT_RUN_TAG, "id": before, "base": sandbox_image.DEFAULT_BASE,
                                      "built": False, "source_hash": run_image.source_hash()}
    assert engine.images.get(run_image.DEFAULT_RUN_TAG).id == before
