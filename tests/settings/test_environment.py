"""settings/environment.py: the one module that reads the process's environment (besides the
settings object), what it reads and the one variable it sets."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from cataloger_dagster.settings.environment import (
    anthropic_key_set,
    dagster_home,
    python_environment,
    secret_values,
    use_database,
)
from cataloger_dagster.settings.model import DATABASE_VARIABLE

PACKAGE = Path(__file__).resolve().parents[2] / "cataloger_dagster"

# The one reader of the environment (pydantic-settings reads CATALOGER_* for the settings object,
# whose module names no variable itself).
ENVIRONMENT_READERS = {"settings/environment.py"}
# Where else the package may read the environment, and why.
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
    # the standalone summary script each run stores, run by hand against the real database
    "core/history/summary_script.py": {"DB_CONNECTION_STRING"},
    # the standalone Great Expectations checkpoint `cataloger export --to gx` writes, run by hand
    "core/guardrails/gx_checkpoint.py": {"GX_CONNECTION_STRING"},
}
# settings/environment.py reads, besides CATALOGER_*: DAGSTER_HOME (Dagster's own, read where
# DagsterInstance.get() reads it) and ANTHROPIC_API_KEY (only whether it is set: its value
# reaches Dagster as dg.EnvVar).  DOCKER_HOST is read by the docker SDK alone (image.py asks
# the SDK for the address it uses).  Code the sandbox runs is no read of the package's.


def test_the_variables_of_other_programs_are_read_as_they_are(monkeypatch, tmp_path):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    assert dagster_home() == str(tmp_path)
    monkeypatch.setenv("DAGSTER_HOME", "")
    assert dagster_home() is None   # set but empty: Dagster's default
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    child = python_environment("/checkout")
    assert child["PYTHONPATH"] == os.pathsep.join(["/checkout", "/elsewhere"]) and child["DAGSTER_HOME"] == ""
    monkeypatch.delenv("PYTHONPATH")
    assert python_environment("/checkout")["PYTHONPATH"] == "/checkout"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    assert not anthropic_key_set()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key")
    assert anthropic_key_set()
    assert "sk-test-key" in secret_values()   # its name says it is a secret


def test_a_database_url_becomes_the_processs_variable(monkeypatch):
    monkeypatch.setenv(DATABASE_VARIABLE, "duckdb://before.duckdb")
    use_database(None)   # none given: the variable stays
    assert os.environ[DATABASE_VARIABLE] == "duckdb://before.duckdb"
    use_database("postgres://u:pw@db.example/prod")
    assert os.environ[DATABASE_VARIABLE] == "postgres://u:pw@db.example/prod"


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


def test_only_the_environment_module_reads_the_environment():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module in ENVIRONMENT_READERS:
            continue
        allowed = ALLOWED_READS.get(module, set())
        bad = [(line, name) for line, name in environment_reads(path.read_text()) if name not in allowed]
        if bad:
            found[module] = bad
    assert not found, (f"the environment is read outside settings/environment.py: {found}; add a field to "
                       "CatalogerSettings and pass the settings on")
