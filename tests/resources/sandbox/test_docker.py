"""docker.py: the supervisor as a locked-down container, spoken to over its attach socket.

Checked against the real engine: the container's settings as the engine reports them, what a
process inside can do, the attach stream's demultiplexing (stdout is the channel, stderr the
diagnostics), removal, the reaping of containers whose host process is gone, and the errors
that say what to do.
"""

from __future__ import annotations

import os
import threading
import time

import docker
import pytest

from cataloger_dagster.resources.sandbox import DEFAULT_IMAGE, SandboxError, SandboxResource
from cataloger_dagster.resources.sandbox.base import ENV_ALLOWLIST, SANDBOX_UID, host_identity
from cataloger_dagster.resources.sandbox.datadir import container_user
from cataloger_dagster.resources.sandbox.docker import (LABEL, OWNER_LABEL, DockerChannel, _owner, reap_orphans,
                                                         start_docker)
from cataloger_dagster.resources.sandbox.protocol import BOOT


@pytest.fixture
def engine(docker_sandbox):
    client = docker.from_env(timeout=30)
    yield client
    client.close()


def _ours(client) -> list:
    return [c for c in client.containers.list(filters={"label": LABEL}) if c.labels.get(OWNER_LABEL) == _owner()]


def test_the_container_is_locked_down(engine, data_dir, monkeypatch):
    monkeypatch.setenv("CATALOGER_TEST_SECRET", "hunter2")
    sandbox = SandboxResource(backend="docker", memory_mb=384, pids=40, cpus=0.5, tmp_size_mb=16)
    with sandbox.session(str(data_dir), env={"DB_CONNECTION_STRING": "duckdb:///data/x.duckdb"}):
        [container] = _ours(engine)
        attrs = engine.api.inspect_container(container.id)
    host, config = attrs["HostConfig"], attrs["Config"]
    assert host["NetworkMode"] == "none" and host["IpcMode"] == "none"
    assert host["ReadonlyRootfs"] is True and host["CapDrop"] == ["ALL"] and not host["CapAdd"]
    assert host["SecurityOpt"] == ["no-new-privileges=true"] and not host["Privileged"]
    assert host["Memory"] == host["MemorySwap"] == 384 << 20  # no swapping past the cap
    assert host["PidsLimit"] == 40 and host["NanoCpus"] == 500_000_000
    assert not host["Init"]  # the supervisor is PID 1 itself (see the module's docstring)
    assert host["Tmpfs"] == {"/tmp": "rw,nosuid,nodev,size=16m,mode=1777"}
    assert host["Binds"] == [f"{os.path.realpath(data_dir)}:/data:ro"]
    assert config["Image"] == DEFAULT_IMAGE and config["User"] == container_user()
    assert config["Labels"][LABEL] == "1" and config["Labels"][OWNER_LABEL] == f"{host_identity()}:{os.getpid()}"
    env = dict(item.split("=", 1) for item in config["Env"])
    assert env["DB_CONNECTION_STRING"] == "duckdb:///data/x.duckdb" and env["PATH"] == ENV_ALLOWLIST["PATH"]
    assert "CATALOGER_TEST_SECRET" not in env


def test_the_cells_run_unprivileged_with_few_processes(engine, data_dir):
    with SandboxResource(backend="docker", pids=24, timeout_s=30).session(str(data_dir)) as rt:
        r = rt.execute("import os\nstatus = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)\n"
                       "{k: status[k].strip() for k in ('Uid', 'CapEff', 'CapBnd', 'NoNewPrivs')}")
        assert r.ok, r.error
        status = eval(r.result)
        assert status["Uid"].split() == [str(SANDBOX_UID)] * 4
        assert int(status["CapEff"], 16) == 0 and int(status["CapBnd"], 16) == 0 and status["NoNewPrivs"] == "1"
        r = rt.execute("import subprocess\nkids = []\n"
                       "while len(kids) < 100:\n"
                       "    try:\n        kids.append(subprocess.Popen(['sleep', '60']))\n"
                       "    except OSError:\n        break\n"
                       "len(kids)", timeout_s=30)
        # 24 in all: the supervisor, the worker and what the cell started
        assert r.ok and 10 <= int(r.result) <= 22, r


# ---------------------------------------------------------------- the attach stream
def _container(client, owner: str | None = None):
    created = client.api.create_container(
        DEFAULT_IMAGE, command=["python3", "-I", "-u", "-c", BOOT, "0"], stdin_open=True, tty=False,
        detach=False, network_disabled=True, labels={LABEL: "1", OWNER_LABEL: owner or _owner()})
    return client.containers.get(created["Id"])


PROGRAM = b"""
import os, sys
def main():
    for _ in range(30):
        os.write(1, b'x' * 10000)
    sys.stderr.write('a complaint on stderr\\n')
    sys.stderr.flush()
"""


def test_stdout_is_the_channel_and_stderr_the_diagnostics(engine):
    container = _container(engine)
    channel = DockerChannel(engine, container, b"%d\n" % len(PROGRAM) + PROGRAM)
    try:
        received, end = bytearray(), time.monotonic() + 30
        while time.monotonic() < end:
            data = channel.recv(1.0)
            if data == b"":
                break
            received += data or b""
        assert data == b"", "no end of stream once the program exited"
        assert bytes(received) == b"x" * 300_000  # every chunk, without docker's 8-byte headers
        assert "a complaint on stderr" in channel.diagnostics()
    finally:
        channel.kill()
    with pytest.raises(docker.errors.NotFound):
        engine.containers.get(container.id)
    channel.kill()  # a second time: already gone is fine


# ---------------------------------------------------------------- orphans
def _gone_pid() -> int:
    import subprocess

    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_only_containers_whose_host_process_is_gone_are_reaped(engine):
    here, gone = host_identity(), _gone_pid()
    orphan = _container(engine, f"{here}:{gone}")
    kept = [_container(engine, f"{here}:{os.getpid()}"),  # its host process runs
            _container(engine, f"another-host:{gone}"),  # not ours to judge
            _container(engine, f"{here}:not-a-pid")]
    try:
        removed = reap_orphans(engine)
        with pytest.raises(docker.errors.NotFound):
            engine.containers.get(orphan.id)
        for container in kept:
            assert engine.containers.get(container.id).id not in removed
    finally:
        for container in [orphan, *kept]:
            try:
                container.remove(force=True)
            except docker.errors.NotFound:
                pass


# ---------------------------------------------------------------- errors that say what to do
def test_a_missing_image_says_how_to_build_one(engine, data_dir):
    with pytest.raises(SandboxError, match="sandbox image 'cataloger-no-such-image:0' not found.*build-image"):
        start_docker(data_dir=str(data_dir), env={}, image="cataloger-no-such-image:0", memory_mb=256, pids=16,
                     cpus=1, timeout_s=5, tmp_size_mb=8, output_cap_bytes=1024)


def test_no_engine_says_one_is_needed(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with pytest.raises(SandboxError, match="needs a running Docker engine"):
        SandboxResource(backend="docker").open_session(str(data_dir))


def test_a_container_removed_while_the_reaper_lists_does_not_fail_the_reaper(engine):
    """Sessions start and stop side by side (a pool's spares): a container that another
    session removes between the reaper's listing and its look at it is no error."""
    stop = threading.Event()

    def come_and_go():
        while not stop.is_set():
            _container(engine, f"{host_identity()}:{os.getpid()}").remove(force=True)

    churn = [threading.Thread(target=come_and_go) for _ in range(3)]
    for thread in churn:
        thread.start()
    try:
        for _ in range(100):
            assert reap_orphans(engine) == []  # every container listed is a live host's
    finally:
        stop.set()
        for thread in churn:
            thread.join()
