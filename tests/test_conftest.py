"""tests/conftest.py: a test that needs a server or an optional driver skips where it is absent,
saying what is missing and how to get it, and fails instead under CATALOGER_REQUIRE_SERVICES.

Each case runs pytest in a subprocess, with the suite's own conftest.py as a plugin, on a small
generated test file that loads a table through tests/support/backends.py as the suite does.  The
MySQL driver is made unimportable in that process (as where the `mysql` extra is not installed),
whatever this virtualenv holds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

GENERATED = '''
import sys

sys.modules["MySQLdb"] = None  # `import MySQLdb` raises ImportError: no `mysql` extra

import pyarrow as pa
from backends import load_tables


def test_a_mysql_table(scratch):
    load_tables("mysql", {"t": pa.table({"a": [1, 2]})}, scratch)


def test_a_postgres_table(scratch):
    load_tables("postgres", {"t": pa.table({"a": [1, 2]})}, scratch)
'''


def run_generated(tmp_path: Path, **env: str) -> tuple[int, dict[str, tuple[str, str]]]:
    """(pytest's exit code, {test: (outcome, message)}) of the generated file run with `env`."""
    (tmp_path / "test_generated.py").write_text(GENERATED)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    # this run's own options (PYTEST_ADDOPTS) are not the generated file's
    clean = {k: v for k, v in os.environ.items() if k not in (
        "CATALOGER_TEST_POSTGRES_URL", "CATALOGER_TEST_MYSQL_URL", "CATALOGER_REQUIRE_SERVICES", "PYTEST_ADDOPTS")}
    clean["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(TESTS / "support"), str(TESTS.parent)])
    report = tmp_path / "report.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider",
         "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), f"--junitxml={report}",
         str(tmp_path / "test_generated.py")],
        cwd=tmp_path, env={**clean, **env}, capture_output=True, text=True, timeout=300)
    assert report.exists(), done.stdout + done.stderr
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        found = [(child.tag, child.get("message", "")) for child in case
                 if child.tag in ("skipped", "failure", "error")]
        outcomes[case.get("name")] = found[0] if found else ("passed", "")
    return done.returncode, outcomes


def test_without_urls_each_server_test_skips_naming_the_variable_to_set(tmp_path):
    code, outcomes = run_generated(tmp_path)
    assert code == 0
    outcome, reason = outcomes["test_a_mysql_table"]
    assert outcome == "skipped" and "CATALOGER_TEST_MYSQL_URL" in reason and ".ci/mariadb.sh" in reason
    outcome, reason = outcomes["test_a_postgres_table"]
    assert outcome == "skipped" and "CATALOGER_TEST_POSTGRES_URL" in reason and ".ci/postgres.sh" in reason


def test_a_server_without_its_driver_skips_naming_the_extra_and_one_not_there_without_its_password(tmp_path):
    # ports where nothing listens: the MySQL driver is missed before any connection is tried
    code, outcomes = run_generated(tmp_path, CATALOGER_TEST_MYSQL_URL="mysql://u:secret@127.0.0.1:9/db",
                                   CATALOGER_TEST_POSTGRES_URL="postgres://u:secret@127.0.0.1:9/db")
    assert code == 0
    outcome, reason = outcomes["test_a_mysql_table"]
    assert outcome == "skipped" and "mysqlclient" in reason and "'.[dev,mysql]'" in reason
    outcome, reason = outcomes["test_a_postgres_table"]
    assert outcome == "skipped" and "PostgreSQL at postgres://u:***@127.0.0.1:9/db" in reason
    assert "secret" not in outcomes["test_a_mysql_table"][1] + reason


@pytest.mark.parametrize("url", [None, "mysql://u:secret@127.0.0.1:9/db"])
def test_under_require_services_each_absence_fails(tmp_path, url):
    env = {"CATALOGER_REQUIRE_SERVICES": "1", **({"CATALOGER_TEST_MYSQL_URL": url} if url else {})}
    code, outcomes = run_generated(tmp_path, **env)
    assert code == pytest.ExitCode.TESTS_FAILED
    for test in ("test_a_mysql_table", "test_a_postgres_table"):
        outcome, message = outcomes[test]
        assert outcome in ("failure", "error"), (test, outcome)   # a fixture's failure is an error
        assert "CATALOGER_REQUIRE_SERVICES is set" in message
    expected = "mysqlclient" if url else "CATALOGER_TEST_MYSQL_URL"
    assert expected in outcomes["test_a_mysql_table"][1]
