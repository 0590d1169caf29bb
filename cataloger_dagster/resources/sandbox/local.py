"""Local backend: the supervisor as a child process, inside bubblewrap when present."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
import uuid
import warnings
from pathlib import Path
from typing import Optional

from .base import Channel, SandboxError, sandbox_env
from .protocol import BOOT, bootstrap_payload

SANDBOX_UID = 10001
# Only what an interpreter needs from /etc: nothing that could hold a secret.
ETC_FILES = ["ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates",
             "localtime", "nsswitch.conf", "mime.types", "hosts"]


class ProcessChannel(Channel):
    def __init__(self, argv: list[str], env: dict[str, str], bootstrap: bytes, *,
                 preexec=None, pass_fds=(), cleanup=None) -> None:
        self._cleanup = cleanup
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            start_new_session=True, preexec_fn=preexec, pass_fds=pass_fds, close_fds=True)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            os.set_blocking(stream.fileno(), False)
        self._diag = bytearray()
        self.worker_pgid: Optional[int] = None
        self.send(bootstrap, time.monotonic() + 10)

    def send(self, data: bytes, deadline: float) -> None:
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxError("timed out writing to the sandbox")
            _, writable, _ = select.select([], [fd], [], remaining)
            if writable:
                try:
                    view = view[os.write(fd, view):]
                except BlockingIOError:
                    continue

    def recv(self, timeout: float) -> Optional[bytes]:
        out, err = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        end = time.monotonic() + max(timeout, 0)
        while True:
            ready, _, _ = select.select([out, err], [], [], max(end - time.monotonic(), 0))
            if err in ready:
                try:
                    chunk = os.read(err, 65536)
                except BlockingIOError:
                    chunk = None
                if chunk:
                    self._diag += chunk
                    del self._diag[:-4096]
            if out in ready:
                try:
                    return os.read(out, 1 << 20)
                except BlockingIOError:
                    pass
            if time.monotonic() >= end:
                return None

    def diagnostics(self) -> str:
        return self._diag.decode("utf-8", "replace")[-2000:]

    def kill(self) -> None:
        for pgid in (self.proc.pid, self.worker_pgid):
            if pgid:
                try:
                    os.killpg(pgid, signal.SIGKILL)
                except OSError:
                    pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
        if self._cleanup:
            self._cleanup()
            self._cleanup = None


class PidsCgroup:
    """A pids cgroup for one sandbox (v1 or v2), when the host lets us make one."""

    def __init__(self, limit: int) -> None:
        self.path: Optional[Path] = None
        for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
            if base == Path("/sys/fs/cgroup") and "pids" not in _read(base / "cgroup.subtree_control"):
                continue
            if not (base / "cgroup.procs").exists():
                continue
            path = base / f"cataloger-sandbox-{uuid.uuid4().hex[:12]}"
            try:
                path.mkdir()
                (path / "pids.max").write_text(str(limit))
            except OSError:
                try:
                    path.rmdir()
                except OSError:
                    pass
                continue
            self.path = path
            return

    def join(self) -> None:  # runs in the child before exec
        if self.path is not None:
            with open(self.path / "cgroup.procs", "w") as f:
                f.write(str(os.getpid()))

    def remove(self) -> None:
        if self.path is None:
            return
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.05)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def bwrap_path() -> Optional[str]:
    return shutil.which("bwrap")


def rlimits(memory_mb: int, pids: int, timeout_s: float, tmp_size_mb: int) -> dict[str, int]:
    return {
        "RLIMIT_AS": memory_mb * 1024 * 1024,
        "RLIMIT_NPROC": pids,
        # CPU seconds for the whole interpreter's life; a restart resets it.
        "RLIMIT_CPU": int(max(600, 20 * timeout_s)),
        "RLIMIT_FSIZE": tmp_size_mb * 1024 * 1024,
        "RLIMIT_CORE": 0,
        "RLIMIT_NOFILE": 1024,
    }


def start_local(*, data_dir: str, env: dict[str, str], isolation: str, memory_mb: int, pids: int,
                timeout_s: float, tmp_size_mb: int, output_cap_bytes: int,
                warmup: str = "") -> ProcessChannel:
    data = Path(data_dir).resolve()
    if not data.is_dir():
        raise SandboxError(f"data_dir {data} is not a directory")
    limits = rlimits(memory_mb, pids, timeout_s, tmp_size_mb)
    python = sys.executable
    senv = sandbox_env(env)
    bwrap = bwrap_path()
    if isolation == "none":
        warnings.warn(
            "SandboxResource(backend='local', isolation='none') runs cells as plain child processes "
            "with only rlimits: no namespaces, the network and the host filesystem are reachable. "
            "Use it only for trusted code; install bubblewrap or use backend='docker' otherwise.",
            RuntimeWarning, stacklevel=4)
        config = {"boot": BOOT, "warmup": warmup, "pidns": False, "rlimits": limits, "cap": output_cap_bytes,
                  "cwd": str(data)}
        senv["DATA_DIR"] = str(data)
        return ProcessChannel([python, "-I", "-u", "-c", BOOT, "0"], senv, bootstrap_payload(config))
    if bwrap is None:
        raise SandboxError(
            "the local sandbox needs bubblewrap (apt-get install bubblewrap); install it, use "
            "backend='docker', or set isolation='none' to run untrusted code without isolation")

    cgroup = PidsCgroup(pids + 8)  # bwrap and the supervisor take a few
    prefixes = sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)})
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--as-pid-1",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "sandbox",
            "--cap-drop", "ALL", "--clearenv"]
    for top in ("usr", "bin", "lib", "lib32", "lib64", "sbin"):
        path = Path("/") / top
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    for name in ETC_FILES:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    argv += ["--proc", "/proc", "--dev", "/dev",
             "--size", str(tmp_size_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    # after the private /tmp, so that an interpreter living under /tmp stays visible
    for prefix in prefixes:
        argv += ["--ro-bind", prefix, prefix]
    argv += ["--ro-bind", str(data), "/data", "--remount-ro", "/", "--chdir", "/tmp"]
    for key, value in senv.items():
        argv += ["--setenv", key, value]
    argv += ["--", os.path.realpath(python) if sys.prefix == sys.base_prefix else python,
             "-I", "-u", "-c", BOOT, "0"]
    config = {"boot": BOOT, "warmup": warmup, "pidns": True, "rlimits": limits, "cap": output_cap_bytes, "cwd": "/tmp"}
    # bwrap runs as the invoking user: an unprivileged host uid could not bind
    # paths such as /root/.pyenv or pytest's 0700 directories.  Inside, the
    # cell is uid 10001 with no capabilities, in its own user namespace.
    return ProcessChannel(argv, {}, bootstrap_payload(config), preexec=cgroup.join,
                          cleanup=cgroup.remove)
