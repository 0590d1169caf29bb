"""local.py: the local (bubblewrap) backend without bubblewrap, and with the interpreter in awkward places.

What it guarantees inside the sandbox is in test_local_hardening.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import cataloger_dagster

HOST = """
import sys
from cataloger_dagster.resources.sandbox import SandboxResource
with SandboxResource(backend="local", timeout_s=20).session(sys.argv[1]) as runtime:
    r = runtime.execute("import sys, os; print(sys.prefix); print(sorted(os.listdir('/data')))")
    print(r.ok, r.stdout.split(), r.error)
"""


def test_a_virtualenv_under_tmp_is_visible_behind_the_private_tmp(local_sandbox, tmp_path):
    # A checkout under /tmp (CI clones, `git clone` into a temp dir) puts the venv under the
    # path the sandbox replaces with its own empty /tmp.
    top = Path(tempfile.mkdtemp(prefix="cataloger-venv-", dir="/tmp"))
    try:
        _run_from_a_venv_in(top / "venv", tmp_path)
    finally:
        shutil.rmtree(top)


def _run_from_a_venv_in(venv: Path, tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # the new venv finds the package and its dependencies through a .pth file
    site = next((venv / "lib").glob("python*/site-packages"))
    here = [p for p in sys.path if p.endswith("site-packages")]
    (site / "outer.pth").write_text("\n".join(here + [str(Path(cataloger_dagster.__file__).parents[1])]))
    data = tmp_path / "snapshot"
    data.mkdir()
    (data / "t.csv").write_text("a\n1\n")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", HOST, str(data)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[0] == "True", out.stdout
    assert str(venv) in out.stdout and "t.csv" in out.stdout


def test_local_refuses_without_bwrap_unless_none(data_dir, monkeypatch):
    from cataloger_dagster.resources.sandbox import SandboxError, SandboxResource

    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxError, match="bubblewrap"):
        SandboxResource(backend="local").open_session(str(data_dir))
    with pytest.warns(RuntimeWarning, match="isolation='none'"):
        with SandboxResource(backend="local", isolation="none").session(str(data_dir)) as rt:
            assert rt.execute("print(1 + 1)").stdout == "2\n"


def test_without_isolation_the_snapshot_url_names_the_host_folder(data_dir, monkeypatch):
    # nothing mounts the data folder at /data without isolation: the investigations' setup,
    # which opens DB_CONNECTION_STRING, must still find the snapshot
    import duckdb

    from cataloger_dagster.resources.database.snapshots import SNAPSHOT_FILE, SNAPSHOT_URL
    from cataloger_dagster.resources.sandbox import SandboxResource

    with duckdb.connect(str(Path(data_dir) / SNAPSHOT_FILE)) as con:
        con.execute("CREATE TABLE t AS SELECT range AS id FROM range(7)")
    monkeypatch.setenv("PATH", "/nonexistent")
    code = ("import os, ibis; con = ibis.connect(os.environ['DB_CONNECTION_STRING']); "
            "print(con.table('t').count().execute())")
    with pytest.warns(RuntimeWarning, match="isolation='none'"):
        with SandboxResource(backend="local", isolation="none").session(
                str(data_dir), env={"DB_CONNECTION_STRING": SNAPSHOT_URL}) as rt:
            result = rt.execute(code)
    assert result.ok and result.stdout == "7\n", result
