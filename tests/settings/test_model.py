"""settings/model.py: one object holds every setting, read once from the environment and `.env`,
with errors that name the variable and what to set."""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest
from click.testing import CliRunner

from cataloger_dagster.cli import main
from cataloger_dagster.resources.database.resource import DEFAULT_DATABASE_URL
from cataloger_dagster.resources.sandbox import image as sandbox_image
from cataloger_dagster.settings.model import DATABASE_VARIABLE, CatalogerSettings, SettingsError, load_settings
from tests.conftest import service_unavailable


def test_every_setting_has_a_default_and_a_description(clean_env):
    settings = load_settings()
    assert not settings.model_fields_set
    for field, info in CatalogerSettings.model_fields.items():
        assert info.description and len(info.description) > 20, field
        assert getattr(settings, field) == info.default, field
    assert settings.database == DEFAULT_DATABASE_URL and settings.store == "catalog"
    assert settings.agent == "heuristic" and settings.sandbox == "local"


def test_a_dotenv_file_is_read_and_the_environment_wins(clean_env, tmp_path):
    (tmp_path / ".env").write_text(
        "CATALOGER_STORE=from-the-file\nCATALOGER_SENSOR_INTERVAL_S=42\nCATALOGER_AGENT=ANTHROPIC\n"
        "CATALOGER_REFRESH_CRON=15 1 * * 1\nCATALOGER_TEST_SOMETHING_ELSE=1\nOTHER_PROGRAM=x\n")
    clean_env.setenv("CATALOGER_STORE", "from-the-environment")
    clean_env.setenv("CATALOGER_AGENT", "heuristic")
    settings = load_settings()
    assert settings.store == "from-the-environment"
    assert settings.agent == "heuristic"
    assert settings.sensor_interval_s == 42
    assert settings.refresh_cron == "15 1 * * 1"
    # a blank variable is the default, as before the settings object, even over the file
    clean_env.setenv("CATALOGER_SENSOR_INTERVAL_S", " ")
    assert load_settings().sensor_interval_s == 300
    # values given in code (the command line's options) win over both
    assert load_settings(store="given", agent=None).store == "given"


def test_invalid_values_name_the_variable_and_what_to_set(clean_env):
    cases = {
        "CATALOGER_SENSOR_INTERVAL_S": ("5m", "CATALOGER_SENSOR_INTERVAL_S='5m' is not a whole number: set it "
                                              "to a number of seconds, e.g. 300"),
        "CATALOGER_RELEARN_COOLDOWN_S": ("-1", "CATALOGER_RELEARN_COOLDOWN_S=-1 must be at least 0"),
        "CATALOGER_PASS_RATE_THRESHOLD": ("1.5", "CATALOGER_PASS_RATE_THRESHOLD=1.5 must be between 0.0 and 1.0"),
        "CATALOGER_ANTHROPIC_TIMEOUT_S": ("soon", "CATALOGER_ANTHROPIC_TIMEOUT_S='soon' is not a number: set it "
                                                  "to a number of seconds"),
        "CATALOGER_AGENT": ("gpt", "unknown CATALOGER_AGENT 'gpt': use 'heuristic' or 'anthropic'"),
        "CATALOGER_SANDBOX": ("vm", "unknown CATALOGER_SANDBOX 'vm': use 'local' or 'docker'"),
        "CATALOGER_SANDBOX_ISOLATION": ("gvisor", "unknown CATALOGER_SANDBOX_ISOLATION 'gvisor': use 'bwrap' or 'none'"),
    }
    for name, (value, message) in cases.items():
        clean_env.setenv(name, value)
        with pytest.raises(SettingsError) as err:
            load_settings()
        assert message in str(err.value), str(err.value)
        clean_env.delenv(name)
    # every problem at once, not the first only
    clean_env.setenv("CATALOGER_SENSOR_INTERVAL_S", "0")
    clean_env.setenv("CATALOGER_RELEARN_MAX_ATTEMPTS", "twice")
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert "CATALOGER_SENSOR_INTERVAL_S=0 must be at least 1" in str(err.value)
    assert "CATALOGER_RELEARN_MAX_ATTEMPTS='twice' is not a whole number" in str(err.value)


def test_sandbox_prestart_is_off_only_when_said(clean_env):
    for value, expected in (("0", False), ("false", False), ("No", False), ("1", True), ("yes", True), ("", True)):
        clean_env.setenv("CATALOGER_SANDBOX_PRESTART", value)
        assert load_settings().sandbox_prestart is expected, value


def test_the_cli_reports_invalid_settings_and_reads_dotenv(clean_env, tmp_path):
    clean_env.setenv("CATALOGER_SENSOR_INTERVAL_S", "5m")
    out = CliRunner().invoke(main, ["run", "--store", str(tmp_path / "store")])
    assert out.exit_code == 1
    assert "CATALOGER_SENSOR_INTERVAL_S='5m' is not a whole number" in out.output
    assert "Traceback" not in out.output
    clean_env.delenv("CATALOGER_SENSOR_INTERVAL_S")

    out = CliRunner().invoke(main, ["profile", "--table", "t"])
    assert out.exit_code == 2 and "--database" in out.output and "CATALOGER_DATABASE" in out.output

    db = tmp_path / "one.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT range AS id FROM range(7)")
    (tmp_path / ".env").write_text(f"CATALOGER_DATABASE=duckdb://{db}\n")
    clean_env.setenv(DATABASE_VARIABLE, "")  # the CLI loads .env into the environment: undone afterwards
    clean_env.delenv(DATABASE_VARIABLE)
    out = CliRunner().invoke(main, ["profile", "--table", "t", "--json"])
    assert out.exit_code == 0, out.output
    assert '"row_count": 7' in out.output


@pytest.mark.docker
def test_build_image_takes_the_recipe_from_the_settings(clean_env, tmp_path):
    try:
        present = sandbox_image.image_present(sandbox_image.DEFAULT_TAG)
    except sandbox_image.SandboxImageError as exc:
        service_unavailable(f"Docker engine ({exc}; bash .ci/sandbox.sh starts one)")
    if not present:
        service_unavailable(f"the sandbox image {sandbox_image.DEFAULT_TAG} (bash .ci/sandbox.sh builds it)")
    # a base that does not exist: a build would fail at once, naming it
    args = ["sandbox", "build-image", "--if-missing", "--json", "--base", "cataloger-no-such-base:0"]
    shipped = CliRunner().invoke(main, args)
    assert shipped.exit_code == 0, shipped.output
    assert json.loads(shipped.stdout)["built"] is False  # up to date with the shipped recipe

    recipe = tmp_path / "recipe"
    shutil.copytree(sandbox_image.recipe_dir(), recipe)
    with (recipe / "Dockerfile").open("a") as fh:
        fh.write("# another recipe\n")
    clean_env.setenv("CATALOGER_SANDBOX_RECIPE", str(recipe))
    changed = CliRunner().invoke(main, args)
    assert changed.exit_code == 1  # not up to date with this recipe: it tried to build
    assert "cataloger-no-such-base:0" in changed.output
