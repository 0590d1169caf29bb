"""Local backend: the supervisor as a child process, inside bubblewrap when present.

Run as root, bwrap makes the mounts and namespaces but no user namespace, and the
sandbox becomes host uid SANDBOX_UID with no capabilities (setpriv) before any of its
Python runs; run as another user, bwrap makes an unprivileged user namespace.  Either
way a seccomp filter (seccomp.py) holds, and one cgroup (cgroup.py) caps memory and
pids for the sandbox as a whole: as root it must, as another user where the host lets
it make one (otherwise only the per-process rlimits do).
"""

from __future__ import annotations

import functools
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Optional

from .base import SANDBOX_UID, Channel, SandboxError, sandbox_env
from .cgroup import SandboxCgroup
from .protocol import BOOT, bootstrap_payload
from .seccomp import filter_fd, filter_program

# Only what an interpreter needs from /etc: nothing that could hold a secret.
ETC_FILES = [
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "ssl",
    "ca-certificates",
    "localtime",
    "nsswitch.conf",
    "mime.types",
    "hosts",
]


class ProcessChannel(Channel):
    def __init__(
        self, argv: list[str], env: dict[str, str], bootstrap: bytes, *, preexec=None, pass_fds=(), cleanup=None
    ) -> None:
        self._cleanup = cleanup
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
            preexec_fn=preexec,
            pass_fds=pass_fds,
            close_fds=True,
        )
        stdin, stdout, stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        if stdin is None or stdout is None or stderr is None:  # Popen opens all three with PIPE
            raise SandboxError("the sandbox's pipes did not open")
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        for stream in (stdin, stdout, stderr):
            os.set_blocking(stream.fileno(), False)
        self._diag = bytearray()
        self.worker_pgid: Optional[int] = None
        self.send(bootstrap, time.monotonic() + 10)

    def send(self, data: bytes, deadline: float) -> None:
        fd = self.stdin.fileno()
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxError("timed out writing to the sandbox")
            _, writable, _ = select.select([], [fd], [], remaining)
            if writable:
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    continue

    def recv(self, timeout: float) -> Optional[bytes]:
        out, err = self.stdout.fileno(), self.stderr.fileno()
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
        for stream in (self.stdin, self.stdout, self.stderr):
            try:
                stream.close()
            except OSError:
                pass
        if self._cleanup:
            self._cleanup()
            self._cleanup = None


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


MIB = 1024 * 1024
ROOT_HELP = (
    "the local sandbox is running as root, and runs cells as uid {uid} with memory capped "
    "for the whole sandbox only with {needs}; {missing}. Fix that, use backend='docker', "
    "or run as a non-root user (bubblewrap then uses an unprivileged user namespace)"
)


def _on_the_host(value: str, data: Path) -> str:
    """`value` with the sandbox's `/data` read as the host folder it stands for: without
    isolation nothing mounts `data` at /data, so a URL such as the snapshot's
    (duckdb:///data/snapshot.duckdb) must name the folder itself."""
    return re.sub(r"(?<![^:/])/data(?=/|$)", lambda _: str(data), value)


def start_local(
    *,
    data_dir: str,
    env: dict[str, str],
    isolation: str,
    memory_mb: int,
    pids: int,
    timeout_s: float,
    tmp_size_mb: int,
    output_cap_bytes: int,
    warmup: str = "",
    zygote: bool = False,
) -> ProcessChannel:
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
            RuntimeWarning,
            stacklevel=4,
        )
        config = {
            "boot": BOOT,
            "warmup": warmup,
            "pidns": False,
            "rlimits": limits,
            "cap": output_cap_bytes,
            "cwd": str(data),
        }
        senv = {key: _on_the_host(value, data) for key, value in senv.items()}
        senv["DATA_DIR"] = str(data)
        return ProcessChannel([python, "-I", "-u", "-c", BOOT, "0"], senv, bootstrap_payload(config))
    if bwrap is None:
        raise SandboxError(
            "the local sandbox needs bubblewrap (apt-get install bubblewrap); install it, use "
            "backend='docker', or set isolation='none' to run untrusted code without isolation"
        )

    as_root = os.geteuid() == 0
    setpriv = shutil.which("setpriv")
    if as_root and setpriv is None:
        raise SandboxError(
            ROOT_HELP.format(
                uid=SANDBOX_UID, needs="setpriv", missing="setpriv is missing (apt-get install util-linux)"
            )
        )
    if as_root and not _readable_by_sandbox(data):
        raise SandboxError(
            f"data_dir {data} is not readable by the sandbox's uid {SANDBOX_UID}: "
            f"chown it to {SANDBOX_UID} or make it world-readable"
        )
    filter_program()  # refuses an architecture it does not know
    cgroup = SandboxCgroup(memory_mb * MIB, pids + 8)  # bwrap and the supervisor take a few
    if cgroup.problem and as_root:
        raise SandboxError(
            ROOT_HELP.format(
                uid=SANDBOX_UID,
                needs="a cgroup with the memory and pids controllers it may write to",
                missing=cgroup.problem,
            )
        )
    if not cgroup.problem:
        # As root every sandbox is the same host uid, so RLIMIT_NPROC would be one count
        # shared by all of them; the sandbox's own pids cgroup is the limit instead.
        limits.pop("RLIMIT_NPROC")
    else:
        warnings.warn(
            f"the local sandbox caps memory per process only ({cgroup.problem})", RuntimeWarning, stacklevel=4
        )

    seccomp_fd = filter_fd()
    argv = [
        bwrap,
        *(_drop_root_args() if as_root else _user_namespace_args(bwrap)),
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--hostname",
        "sandbox",
        "--clearenv",
        *_filesystem_args(data, tmp_size_mb),
        "--seccomp",
        str(seccomp_fd),
    ]
    for key, value in senv.items():
        argv += ["--setenv", key, value]
    argv.append("--")
    if as_root:
        # bwrap as root makes no user namespace (whose uid 10001 would be host
        # root): setpriv becomes host uid 10001 with no capabilities before Python starts.
        # A change of uid clears the parent-death signal, so it is set again.
        assert setpriv is not None  # refused above when missing as root
        argv += [
            os.path.realpath(setpriv),
            f"--reuid={SANDBOX_UID}",
            f"--regid={SANDBOX_UID}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--pdeathsig=KILL",
            "--",
        ]
    argv += [os.path.realpath(python) if sys.prefix == sys.base_prefix else python, "-I", "-u", "-c", BOOT, "0"]
    config = {
        "boot": BOOT,
        "warmup": warmup,
        "pidns": True,
        "zygote": zygote,
        "rlimits": limits,
        "cap": output_cap_bytes,
        "cwd": "/tmp",
    }
    try:
        return ProcessChannel(
            argv, {}, bootstrap_payload(config), preexec=cgroup.join, pass_fds=(seccomp_fd,), cleanup=cgroup.remove
        )
    except BaseException:
        cgroup.remove()
        raise
    finally:
        os.close(seccomp_fd)


def _drop_root_args() -> list[str]:
    # only what setpriv needs to change uid and empty the bounding set
    return [
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--cap-drop",
        "ALL",
        "--cap-add",
        "CAP_SETUID",
        "--cap-add",
        "CAP_SETGID",
        "--cap-add",
        "CAP_SETPCAP",
    ]


def _user_namespace_args(bwrap: str) -> list[str]:
    # bwrap runs as the invoking user, who can bind what it can read (a pyenv under
    # $HOME, pytest's 0700 folders); uid 10001 inside is that user outside.
    argv = [
        "--unshare-all",
        "--unshare-user",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--cap-drop",
        "ALL",
    ]
    # the seccomp filter already refuses new namespaces; this holds even without it
    if _bwrap_version(bwrap) >= (0, 8):
        argv.append("--disable-userns")
    return argv


@functools.lru_cache(maxsize=None)
def _bwrap_version(bwrap: str) -> tuple[int, ...]:
    out = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout
    return tuple(int(part) for part in re.findall(r"\d+", out)[:3])


def _filesystem_args(data: Path, tmp_size_mb: int) -> list[str]:
    argv: list[str] = []
    made = {"/"}
    for top in ("usr", "bin", "lib", "lib32", "lib64", "sbin"):
        path = Path("/") / top
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
        made.add(str(path))
    for name in ETC_FILES:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    # bwrap covers /proc/sys read-only only if it may write the directory itself, which
    # is 0555 while the files in it are not; its /dev is a tmpfs without a size.  Both
    # are made read-only (device nodes still work); /dev/shm and /tmp get a size.
    argv += [
        "--proc",
        "/proc",
        "--remount-ro",
        "/proc",
        "--dev",
        "/dev",
        *_sized_tmpfs("/dev/shm", tmp_size_mb),
        "--remount-ro",
        "/dev",
        *_sized_tmpfs("/tmp", tmp_size_mb),
    ]
    made |= {"/proc", "/dev", "/tmp"}
    # after the private /tmp, so that an interpreter living under /tmp stays visible
    for prefix in sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}):
        # bwrap would make the missing parents 0700, shut to the sandbox's uid
        for parent in reversed(Path(prefix).parents):
            if str(parent) not in made:
                argv += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        argv += ["--ro-bind", prefix, prefix]
    return argv + ["--ro-bind", str(data), "/data", "--remount-ro", "/", "--chdir", "/tmp"]


def _sized_tmpfs(path: str, size_mb: int) -> list[str]:
    return ["--perms", "1777", "--size", str(size_mb * MIB), "--tmpfs", path]


def _readable_by_sandbox(path: Path) -> bool:
    st = path.stat()
    if st.st_uid == SANDBOX_UID:
        return st.st_mode & 0o500 == 0o500
    if st.st_gid == SANDBOX_UID:
        return st.st_mode & 0o050 == 0o050
    return st.st_mode & 0o005 == 0o005
