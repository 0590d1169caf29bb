"""Fixtures for both sandbox backends; each skips only when its service is absent."""

from __future__ import annotations

import os

import pytest

from cataloger_dagster.resources.sandbox import SandboxResource


@pytest.fixture
def backend(sandbox_backend) -> str:
    return sandbox_backend


@pytest.fixture
def data_dir(tmp_path):
    d = tmp_path / "snapshot"
    d.mkdir()
    (d / "table.csv").write_text("id,name\n1,a\n2,b\n")
    return d


@pytest.fixture
def sandbox(backend) -> SandboxResource:
    return SandboxResource(backend=backend, timeout_s=5, memory_mb=512, pids=64, tmp_size_mb=16)


@pytest.fixture
def runtime(sandbox, data_dir):
    with sandbox.session(str(data_dir), env={"DB_CONNECTION_STRING": "duckdb:///data/db.duckdb"}) as rt:
        yield rt


def _descendants() -> list[int]:
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2:].split()
        if int(fields[1]) == me and fields[0] != b"Z":
            found.append(int(entry))
    return found


def _our_containers() -> list:
    try:
        import docker

        from cataloger_dagster.resources.sandbox.docker import LABEL, _owner

        client = docker.from_env(timeout=10)
        return [c for c in client.containers.list(all=True, filters={"label": LABEL})
                if c.labels.get("cataloger.sandbox.owner") == _owner()]
    except Exception:
        return []


@pytest.fixture(autouse=True)
def nothing_left_behind():
    before = set(_descendants())
    yield
    assert set(_descendants()) <= before, "a sandbox process outlived its session"
    assert _our_containers() == [], "a sandbox container outlived its session"


# ---------------------------------------------------------------- the host's view of a local sandbox
def _tree_below(root: int) -> list[int]:
    parent = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        parent[int(entry)] = int(data[data.rfind(b")") + 2:].split()[1])
    found, frontier = [], [root]
    while frontier:
        kids = [pid for pid, ppid in parent.items() if ppid in frontier]
        found += kids
        frontier = kids
    return found


def _host_status(ns_pid: int) -> dict[str, str]:
    """/proc/<pid>/status, read on the host, of our sandboxed process whose pid inside is ns_pid."""
    for pid in _tree_below(os.getpid()):
        try:
            with open(f"/proc/{pid}/status") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        status = dict(line.split(":", 1) for line in lines if ":" in line)
        status = {k: v.strip() for k, v in status.items()}
        nspids = status.get("NSpid", "").split()
        if len(nspids) > 1 and nspids[-1] == str(ns_pid):
            return status
    raise AssertionError(f"no process of ours has pid {ns_pid} in a pid namespace")


def _sandbox_cgroups(host_pid: int) -> list:
    """The cgroup folders (v1 or v2) the host sees `host_pid` in."""
    from pathlib import Path

    from cataloger_dagster.resources.sandbox import cgroup

    found = []
    with open(f"/proc/{host_pid}/cgroup") as f:
        lines = f.read().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if cgroup.PREFIX in path:
            for controller in controllers.split(",") if controllers else [""]:
                found.append(Path("/sys/fs/cgroup", controller, path.lstrip("/")))
    return found


@pytest.fixture
def host_status():
    """host_status(ns_pid): the host's /proc status of the sandboxed process with that pid inside."""
    return _host_status


@pytest.fixture
def sandbox_cgroups():
    """sandbox_cgroups(host_pid): the sandbox cgroup folders the host process is in."""
    return _sandbox_cgroups
