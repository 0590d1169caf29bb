"""Docker backend: the supervisor as a locked-down container, spoken to over its attach socket.

The supervisor is the container's PID 1 (no docker init): an init would hold the
attach stream's fds as the cells' uid and be dumpable, so a cell could write to
the host channel through ``/proc/1/fd``.  The non-dumpable supervisor reaps orphans itself.
"""

from __future__ import annotations

import os
import select
import struct
import time
import uuid
from typing import Any, Optional

from cataloger_dagster.resources.extras import missing_extra

from .base import Channel, SandboxError, host_identity, pid_alive, sandbox_env
from .datadir import container_user
from .local import rlimits
from .protocol import BOOT, bootstrap_payload

LABEL = "cataloger.sandbox"
OWNER_LABEL = "cataloger.sandbox.owner"  # "<host_identity>:<pid>" of the host process
API_TIMEOUT_S = 15
_MUX = struct.Struct(">BxxxI")


def _docker():
    """The Docker SDK, or a SandboxError naming the extra that brings it."""
    try:
        import docker
    except ImportError:
        raise SandboxError(str(missing_extra("docker", "the docker sandbox"))) from None
    return docker


def _client():
    docker = _docker()
    try:
        return docker.from_env(timeout=API_TIMEOUT_S)
    except docker.errors.DockerException as exc:
        raise SandboxError(f"the docker sandbox needs a running Docker engine: {exc}") from exc


def _owner() -> str:
    return f"{host_identity()}:{os.getpid()}"


def reap_orphans(client=None) -> list[str]:
    """Remove sandbox containers whose host process on this machine is gone."""
    client = client or _client()
    removed = []
    host = host_identity()
    # the list's own fields, no inspect per container: another session's container may be
    # removed between the listing and an inspect, and that must not fail this session's start
    for summary in client.api.containers(all=True, filters={"label": LABEL}):
        owner = (summary.get("Labels") or {}).get(OWNER_LABEL, "")
        name, _, pid = owner.rpartition(":")
        if name != host or not pid.isdigit() or pid_alive(int(pid)):
            continue
        try:
            client.api.remove_container(summary["Id"], force=True)
            removed.append(summary["Id"])
        except Exception:  # already gone, or being removed by someone else
            pass
    return removed


class DockerChannel(Channel):
    def __init__(self, client, container, bootstrap: bytes) -> None:
        self.client = client
        self.container = container
        self._sock: Any = None  # the attach socket (the Docker SDK's, untyped)
        self._mux = bytearray()
        self._diag = bytearray()
        self._eof = False
        try:
            attached = container.attach_socket(params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            self._sock = getattr(attached, "_sock", attached)
            self._attached = attached
            self._sock.setblocking(False)
            container.start()
            self.send(bootstrap, time.monotonic() + 10)
        except Exception:
            self.kill()
            raise

    def send(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxError("timed out writing to the sandbox container")
            _, writable, _ = select.select([], [self._sock], [], remaining)
            if writable:
                try:
                    view = view[self._sock.send(view) :]
                except BlockingIOError:
                    continue

    def recv(self, timeout: float) -> Optional[bytes]:
        end = time.monotonic() + max(timeout, 0)
        while True:
            out = self._demux()
            if out:
                return out
            if self._eof:
                return b""
            remaining = end - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self._sock], [], [], remaining)
            if ready:
                try:
                    chunk = self._sock.recv(1 << 20)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    self._eof = True
                self._mux += chunk

    def _demux(self) -> bytes:
        """Docker prefixes each stdout/stderr chunk with an 8-byte header."""
        out = bytearray()
        while len(self._mux) >= _MUX.size:
            stream, size = _MUX.unpack_from(self._mux)
            if len(self._mux) < _MUX.size + size:
                break
            payload = self._mux[_MUX.size : _MUX.size + size]
            del self._mux[: _MUX.size + size]
            if stream == 1:
                out += payload
            else:
                self._diag += payload
                del self._diag[:-4096]
        return bytes(out)

    def diagnostics(self) -> str:
        return self._diag.decode("utf-8", "replace")[-2000:]

    def kill(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
        try:
            self.container.remove(force=True)
        except Exception as exc:  # already removed is fine; anything else the reaper retries
            if "No such container" not in str(exc) and "already in progress" not in str(exc):
                pass


def start_docker(
    *,
    data_dir: str,
    env: dict[str, str],
    image: str,
    memory_mb: int,
    pids: int,
    cpus: float,
    timeout_s: float,
    tmp_size_mb: int,
    output_cap_bytes: int,
    warmup: str = "",
    zygote: bool = False,
) -> DockerChannel:
    docker = _docker()

    data = os.path.realpath(data_dir)
    if not os.path.isdir(data):
        raise SandboxError(f"data_dir {data} is not a directory")
    client = _client()
    reap_orphans(client)
    config = {
        "boot": BOOT,
        "warmup": warmup,
        "pidns": True,
        "zygote": zygote,
        "cap": output_cap_bytes,
        "cwd": "/tmp",
        "rlimits": {k: v for k, v in rlimits(memory_mb, pids, timeout_s, tmp_size_mb).items() if k != "RLIMIT_NPROC"},
    }  # pids are the cgroup's job here
    try:
        # detach=False makes docker-py set AttachStdin and StdinOnce: the host's end of
        # the attach closing (the host died) is then EOF on the supervisor's stdin
        host_config = client.api.create_host_config(
            network_mode="none",
            read_only=True,
            tmpfs={"/tmp": f"rw,nosuid,nodev,size={tmp_size_mb}m,mode=1777"},
            binds={data: {"bind": "/data", "mode": "ro"}},
            cap_drop=["ALL"],
            security_opt=["no-new-privileges=true"],
            mem_limit=f"{memory_mb}m",
            memswap_limit=f"{memory_mb}m",
            pids_limit=pids,
            nano_cpus=int(cpus * 1e9),
            init=False,
            ipc_mode="none",
        )
        created = client.api.create_container(
            image,
            command=["python3", "-I", "-u", "-c", BOOT, "0"],
            name=f"cataloger-sandbox-{uuid.uuid4().hex[:12]}",
            stdin_open=True,
            tty=False,
            detach=False,
            environment=sandbox_env(env),
            working_dir="/tmp",
            user=container_user(),
            host_config=host_config,
            labels={LABEL: "1", OWNER_LABEL: _owner()},
        )
        container = client.containers.get(created["Id"])
    except docker.errors.ImageNotFound as exc:
        raise SandboxError(f"sandbox image {image!r} not found: build it with `cataloger sandbox build-image`") from exc
    except docker.errors.DockerException as exc:
        raise SandboxError(f"could not create the sandbox container: {exc}") from exc
    return DockerChannel(client, container, bootstrap_payload(config))
