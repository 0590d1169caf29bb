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
