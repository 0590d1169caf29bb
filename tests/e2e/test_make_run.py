"""`make run` on a fresh DAGSTER_HOME: the instance is deploy/dagster.yaml, and stderr carries the
catalog's own lines only, no Dagster notice (no dagster.yaml warning, no telemetry banner)
in the middle of the progress bar.

The real Makefile target, on a tiny DuckDB database instead of the demo one (DEMO, STORE and
DAGSTER_HOME are its variables); `-o` keeps make from reinstalling the venv whatever the
timestamps of pyproject.toml say.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from tests.conftest import sandbox_problem, service_unavailable

pytestmark = [pytest.mark.slow, pytest.mark.bwrap]

REPO = Path(__file__).resolve().parents[2]
# what Dagster prints on its own: the missing-dagster.yaml warning, the telemetry banner, log lines
DAGSTER_NOISE = re.compile(r"dagster|telemetry|warning|welcome", re.IGNORECASE)


def test_make_run_uses_the_deploy_instance_and_prints_no_dagster_notice(tmp_path):
    problem = sandbox_problem("local") or (None if shutil.which("make") else "make is not installed")
    if problem:
        service_unavailable(problem)
    database = tmp_path / "tiny.duckdb"
    with duckdb.connect(str(database)) as con:
        con.execute("CREATE TABLE tiny AS SELECT range AS id, range % 3 AS grp FROM range(20)")
    home = tmp_path / "dagster_home"   # fresh: make creates it
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER_", "CATALOGER_"))}
    out = subprocess.run(
        ["make", "-o", ".venv/bin/cataloger", "run", f"DEMO={database}", f"STORE={tmp_path / 'store'}",
         f"DAGSTER_HOME={home}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr

    assert (home / "dagster.yaml").read_text() == (REPO / "deploy" / "dagster.yaml").read_text()
    assert (tmp_path / "store" / "tiny.duckdb" / "index.html").is_file()
    assert "cataloged 1/1 tables" in out.stdout
    # a progress bar redraws its line with \r: every fragment is a line of its own
    lines = [line for line in re.split(r"[\r\n]", out.stderr) if line.strip()]
    noise = [line for line in lines if DAGSTER_NOISE.search(line)]
    assert not noise, "Dagster printed on stderr:\n" + "\n".join(noise)
