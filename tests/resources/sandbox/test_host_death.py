"""A host that dies (kill -9) takes its sandbox with it: nothing runs on without a master."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from cataloger_dagster.resources.sandbox.base import host_identity
from cataloger_dagster.resources.sandbox.docker import LABEL, OWNER_LABEL, reap_orphans

HOST = """
import sys
from cataloger_dagster.resources.sandbox import SandboxResource
runtime = SandboxResource(backend=sys.argv[1], timeout_s=600).open_session(sys.argv[2])
assert runtime.execute("import time").ok
print("READY", flush=True)
runtime.execute("time.sleep(600)")
"""


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat", "rb").read()
            except OSError:
                continue
            if int(stat[stat.rfind(b")") + 2:].split()[1]) == pid:
                found.append(int(entry))
    return found


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            out.append(child)
            todo.append(child)
    return out


def _alive(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat", "rb").read()
    except OSError:
        return False
    return state[state.rfind(b")") + 2:].split()[0] != b"Z"


def _containers_of(pid: int, running_only: bool = True) -> list:
    import docker

    client = docker.from_env(timeout=10)
    owner = f"{host_identity()}:{pid}"
    return [c for c in client.containers.list(all=not running_only, filters={"label": LABEL})
            if c.labels.get(OWNER_LABEL) == owner]


def test_killing_the_host_ends_the_sandbox_within_a_second(backend, data_dir):
    host = subprocess.Popen([sys.executable, "-c", HOST, backend, str(data_dir)],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert host.stdout.readline().strip() == "READY"
        sandbox = _tree(host.pid) if backend == "local" else []
        if backend == "local":
            assert sandbox, "the sandbox's processes were not found under the host"
        else:
            assert len(_containers_of(host.pid)) == 1
        host.kill()
        host.wait(timeout=10)
        killed_at = time.monotonic()
        while time.monotonic() - killed_at < 5:
            left = ([p for p in sandbox if _alive(p)] if backend == "local"
                    else _containers_of(host.pid))
            if not left:
                break
            time.sleep(0.02)
        took = time.monotonic() - killed_at
        assert not left, f"still running {took:.1f}s after the host died: {left}"
        assert took < 1.0, f"the sandbox outlived its host by {took:.2f}s"
    finally:
        if host.poll() is None:
            host.kill()
        if backend == "docker":
            reap_orphans()  # the stopped container of a dead host is removed by the next session's reaper
            assert _containers_of(host.pid, running_only=False) == []
