"""CatalogerSettings: one object holds every setting, read once, documented from its fields.

With CATALOGER_UPDATE_DOCS=1 the settings table of docs/settings.md and `.env.example` are rewritten
from the settings (then the test checks the rewritten files, so it still fails on nothing).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from click.testing import CliRunner

from cataloger_dagster.cli import main
from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.resources.database import DEFAULT_DATABASE_URL
from cataloger_dagster.resources.sandbox import image as sandbox_image
from cataloger_dagster.settings import (
    DATABASE_VARIABLE,
    OTHER_VARIABLES,
    CatalogerSettings,
    SettingsError,
    env_example,
    load_settings,
    resources,
    settings_table,
    variable,
)
from tests.conftest import service_unavailable

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "cataloger_dagster"
SETTINGS_PAGE = ROOT / "docs" / "settings.md"
ENV_EXAMPLE = ROOT / ".env.example"
TABLE_START = "<!-- generated from CatalogerSettings"
TABLE_END = "<!-- end of the generated settings table -->"

# Where the package may read the environment other than settings.py, and why.
ALLOWED_READS = {
    # the system's scratch folder, the convention tempfile itself follows; the debootstrap
    # rootfs goes to /var/tmp otherwise (a tmpfs /tmp is often too small and nodev)
    "resources/sandbox/image.py": {"TMPDIR"},
    # runs inside the sandbox, never on the host: a digest of its own process's environment, so
    # that a reused sandbox proves the environment its next worker inherits unchanged
    "resources/sandbox/supervisor.py": {None},
    # the session script's setup block, run in the sandbox (or by hand against the real
    # database): the one variable that says which database it reads
    "core/investigate/checks/setup.py": {"DB_CONNECTION_STRING"},
}
# settings.py also reads, besides CATALOGER_*: DAGSTER_HOME (Dagster's own, read where
# DagsterInstance.get() reads it) and ANTHROPIC_API_KEY (only whether it is set: its value
# reaches Dagster as dg.EnvVar).  DOCKER_HOST is read by the docker SDK alone (image.py asks
# the SDK for the address it uses).  Code the sandbox runs is no read of the package's.


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No CATALOGER_* variable and no .env: the embedded defaults."""
    for name in list(os.environ):
        # CATALOGER_UPDATE_DOCS is this file's own switch (regenerate the docs), not a setting
        if name.startswith("CATALOGER_") and not name.startswith("CATALOGER_TEST_") and name != "CATALOGER_UPDATE_DOCS":
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def generated_table(readme: str) -> str:
    start = readme.index(TABLE_START)
    start = readme.index("\n", start) + 1
    return readme[start:readme.index(TABLE_END)]


def test_every_setting_has_a_default_and_a_description(clean_env):
    settings = load_settings()
    assert not settings.model_fields_set
    for field, info in CatalogerSettings.model_fields.items():
        assert info.description and len(info.description) > 20, field
        assert getattr(settings, field) == info.default, field
    assert settings.database == DEFAULT_DATABASE_URL and settings.store == "catalog"
    assert settings.agent == "heuristic" and settings.sandbox == "local"


def test_readme_and_env_example_are_the_settings(clean_env):
    if os.environ.get("CATALOGER_UPDATE_DOCS"):
        readme = SETTINGS_PAGE.read_text()
        SETTINGS_PAGE.write_text(readme.replace(generated_table(readme), settings_table()))
        ENV_EXAMPLE.write_text(env_example())
    readme_table = generated_table(SETTINGS_PAGE.read_text())
    example = ENV_EXAMPLE.read_text()
    hint = "run CATALOGER_UPDATE_DOCS=1 pytest tests/test_settings.py to regenerate it"
    assert readme_table == settings_table(), f"docs/settings.md's settings table is stale: {hint}"
    assert example == env_example(), f".env.example is stale: {hint}"

    # and what they say: every setting with its default, nothing else
    fields = CatalogerSettings.model_fields
    row_names = set(re.findall(r"^\| `([A-Z_]+)` \|", readme_table, re.M))
    assert row_names == {variable(f) for f in fields} | set(OTHER_VARIABLES)
    assigned = set(re.findall(r"^# ([A-Z_]+)=", example, re.M))
    assert assigned == {variable(f) for f in fields} | set(OTHER_VARIABLES)
    for field, info in fields.items():
        shown = "" if info.default is None else str(info.default)
        if isinstance(info.default, bool):
            shown = "1" if info.default else "0"
        assert f"| `{variable(field)}` | {f'`{shown}`' if shown else ''} |" in readme_table, field
        assert f"\n# {variable(field)}={shown}\n" in example, field
    # a CATALOGER_ variable that is no setting would be read by nothing
    mentioned = set(re.findall(r"CATALOGER_[A-Z_]+[A-Z]", readme_table + example))
    assert mentioned <= {variable(f) for f in fields}, mentioned - {variable(f) for f in fields}


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


def test_the_definitions_pass_the_settings_on(clean_env):
    clean_env.setenv("CATALOGER_SENSOR_INTERVAL_S", "42")
    clean_env.setenv("CATALOGER_REFRESH_CRON", "30 2 * * 0")
    clean_env.setenv("CATALOGER_SANDBOX_IMAGE", "my-sandbox:1")
    clean_env.setenv("CATALOGER_STORE", "elsewhere")
    defs = build_definitions(load_settings())
    assert defs.resolve_sensor_def("database_change_sensor").minimum_interval_seconds == 42
    assert defs.resolve_sensor_def("pass_rate_sensor").minimum_interval_seconds == 42
    assert defs.resolve_schedule_def("refresh_schedule").cron_schedule == "30 2 * * 0"
    assert defs.resources["sandbox"].image == "my-sandbox:1"
    assert defs.resources["store"].describe().endswith("/elsewhere")


def test_a_database_url_from_dotenv_reaches_dagster_only_by_name(clean_env, tmp_path):
    url = "postgres://u:pw-secret@db.example/prod"
    (tmp_path / ".env").write_text(f"CATALOGER_DATABASE={url}\n")
    clean_env.setenv(DATABASE_VARIABLE, "")  # so that the variable set below is removed afterwards
    clean_env.delenv(DATABASE_VARIABLE)
    settings = load_settings()
    assert settings.database == url  # for listing the tables
    assert "pw-secret" not in repr(settings)
    database = resources(settings)["database"]
    # what Dagster keeps in the job snapshot: the variable's name
    assert isinstance(database.url, dg.EnvVar) and database.url.env_var_name == DATABASE_VARIABLE
    with dg.build_resources({"database": database}) as built:  # a run resolves it from the environment
        assert built.database.url == url
    # nothing set: the demo database, no variable to read
    clean_env.delenv(DATABASE_VARIABLE)
    (tmp_path / ".env").unlink()
    assert resources(load_settings())["database"].url == DEFAULT_DATABASE_URL


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


# ---------------------------------------------------------------- nothing else reads the environment


def environment_reads(source: str) -> list[tuple[int, str | None]]:
    """(line, variable) of every read of os.environ / os.getenv; variable None when not a literal."""
    tree = ast.parse(source)
    named: dict[int, str | None] = {}

    def literal(node):
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            for alias in node.names:
                if alias.name in ("environ", "getenv", "environb", "getenvb"):
                    named[id(node)] = (node.lineno, None)
        elif isinstance(node, ast.Subscript) and _is_environ(node.value):
            named[id(node.value)] = (node.lineno, literal(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if _is_environ(node.func.value) and node.args:
                named[id(node.func.value)] = (node.lineno, literal(node.args[0]))
            elif node.func.attr in ("getenv", "getenvb") and node.args:
                named[id(node.func)] = (node.lineno, literal(node.args[0]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv", "getenvb"):
            named.setdefault(id(node), (node.lineno, None))  # os.environ passed around, copied, ...
    return sorted(named.values(), key=lambda r: r[0])


def _is_environ(node) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in ("environ", "environb")


def test_the_scan_sees_every_kind_of_read():
    source = ("import os\nfrom os import environ\na = os.environ['A']\nb = os.environ.get('B')\n"
              "c = os.getenv('C')\nd = dict(os.environ)\ne = os.environ.get(name)\n")
    assert environment_reads(source) == [(2, None), (3, "A"), (4, "B"), (5, "C"), (6, None), (7, None)]
    assert environment_reads("code = '''os.environ[\"DB\"]'''\n") == []


def test_only_settings_reads_the_environment():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module == "settings.py":
            continue
        allowed = ALLOWED_READS.get(module, set())
        bad = [(line, name) for line, name in environment_reads(path.read_text()) if name not in allowed]
        if bad:
            found[module] = bad
    assert not found, (f"the environment is read outside settings.py: {found}; add a field to "
                       "CatalogerSettings and pass the settings on")
