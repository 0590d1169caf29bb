"""A session's private data folder: for the sandbox's user only, and nothing of a killed run left behind."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys

import duckdb

from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.sandbox import SandboxResource
from cataloger_dagster.resources.sandbox.datadir import data_owner
from cataloger_dagster.resources.sandbox.local import SANDBOX_UID

ENV = {"DB_CONNECTION_STRING": "duckdb:///data/snapshot.duckdb?read_only=true"}
ROOT = os.geteuid() == 0


def test_the_snapshot_is_for_the_sandbox_only(backend, tmp_path):
    source = tmp_path / "shop.duckdb"
    with duckdb.connect(str(source)) as con:
        con.execute("CREATE TABLE orders AS SELECT range AS id FROM range(12)")
    db = DatabaseResource(url=f"duckdb://{source}")
    with SandboxResource(backend=backend, timeout_s=20).session(env=ENV) as rt:
        folder = rt.data_dir
        snap = db.write_snapshot("orders", folder)
        folder_st, file_st = os.stat(folder), os.stat(snap.path)
        assert stat.S_IMODE(folder_st.st_mode) == 0o2700
        assert (folder_st.st_uid, folder_st.st_gid) == data_owner()
        assert data_owner() == ((SANDBOX_UID, SANDBOX_UID) if ROOT else (os.geteuid(), os.getegid()))
        assert stat.S_IMODE(file_st.st_mode) == 0o440 and file_st.st_gid == data_owner()[1]
        r = rt.execute("import duckdb\nduckdb.connect('/data/snapshot.duckdb', read_only=True)"
                       ".execute('select count(*) from orders').fetchone()[0]")
        assert r.ok and r.result == "12", r.error
        if ROOT:  # any other local user is kept out (only root can be another user)
            for argv in (["ls", folder], ["cat", snap.path]):
                other = subprocess.run(argv, user=65534, group=65534, capture_output=True, text=True)
                assert other.returncode != 0 and "Permission denied" in other.stderr, argv
    db.close()
    assert not os.path.exists(folder)


MAKE = """
import os, sys
from cataloger_dagster.resources.sandbox.datadir import make_private_dir
path = make_private_dir()
open(os.path.join(path, "left.txt"), "w").write("x")
print(path, flush=True)
sys.stdin.read()
"""


def _holder() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-c", MAKE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def test_a_killed_runs_folder_goes_at_the_next_start(local_sandbox, data_dir):
    killed, stale = _holder()
    live, kept = _holder()
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(10)
        assert os.path.isfile(os.path.join(stale, "left.txt"))  # what a killed run leaves
        with SandboxResource(backend=local_sandbox).session(str(data_dir)) as rt:
            assert rt.execute("1").ok
        assert not os.path.exists(stale)
        assert os.path.isfile(os.path.join(kept, "left.txt"))  # its process still runs
    finally:
        live.kill()
        live.wait(10)
        killed.stdout.close()
        live.stdout.close()
        live.stdin.close()
        killed.stdin.close()
    with SandboxResource(backend=local_sandbox).session() as rt:
        assert rt.execute("1").ok
    assert not os.path.exists(kept)
