"""One cgroup per local sandbox: memory and pids capped for the sandbox as a whole.

cgroup v1 (a hierarchy per controller) and v2 (one hierarchy) are both handled.  The
sandbox's cgroup is made under the caller's own, so whatever limits the caller runs
under (a container, a systemd unit) still hold.  Its name carries the creating
process's pid, so that a later start can remove the ones a killed host left behind.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path
from typing import Optional

from .base import pid_alive

ROOT = Path("/sys/fs/cgroup")
PREFIX = "cataloger-sandbox-"
SWAP_FILES = {"memory.memsw.limit_in_bytes", "memory.swap.max"}


class SandboxCgroup:
    """Made at once; `paths` is empty and `problem` says why when it cannot be."""

    def __init__(self, memory_bytes: int, pids: int, root: Optional[Path] = None) -> None:
        root = root or ROOT
        self.paths: list[Path] = []
        self.problem: Optional[str] = None
        name = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        bases = _v1_bases(root)
        if bases is not None:  # controller -> where to make ours
            limits = {
                "memory": [
                    ("memory.limit_in_bytes", memory_bytes),
                    ("memory.memsw.limit_in_bytes", memory_bytes),
                ],  # no swapping past it
                "pids": [("pids.max", pids)],
            }
        else:
            base = _v2_base(root)
            bases = {"memory+pids": base} if base is not None else {}
            limits = {"memory+pids": [("memory.max", memory_bytes), ("memory.swap.max", 0), ("pids.max", pids)]}
        missing = [c for c in ("memory", "pids") if not any(c in key for key in bases)]
        if missing:
            self.problem = f"no cgroup with the {' and '.join(missing)} controller under {root}"
            return
        for key, base in bases.items():
            _remove_abandoned(base)
            path = base / name
            try:
                path.mkdir()
                self.paths.append(path)
                for filename, value in limits[key]:
                    if filename in SWAP_FILES and not (path / filename).exists():
                        continue  # swap accounting is off: there is no swap to count
                    (path / filename).write_text(str(value))
            except OSError as exc:
                self.problem = f"cannot make a cgroup at {path} ({exc.strerror})"
                self.remove()
                return

    def join(self) -> None:
        """Move the calling process in; runs in the child between fork and exec."""
        for path in self.paths:
            with open(path / "cgroup.procs", "w") as f:
                f.write(str(os.getpid()))

    def remove(self) -> None:
        """Kill whatever is still inside, then remove the cgroup."""
        for path in self.paths:
            _kill_all(path)
            for _ in range(100):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
        self.paths = []


def _v1_bases(root: Path) -> Optional[dict[str, Path]]:
    own = _own_cgroups()
    found = {}
    for controller in ("memory", "pids"):
        mount = root / controller
        if (mount / "cgroup.procs").exists():
            base = mount / own.get(controller, "/").lstrip("/")
            # without a cgroup namespace a container sees its host's path, not its own
            found[controller] = base if base.is_dir() else mount
    return found or None


def _v2_base(root: Path) -> Optional[Path]:
    # A v2 cgroup with processes in it cannot hand controllers to children, except
    # the root: our own cgroup serves only when it already delegates both.
    own = root / _own_cgroups().get("", "/").lstrip("/")
    for base in (own, root):
        if {"memory", "pids"} <= set(_read(base / "cgroup.subtree_control").split()):
            return base
    return None


def _own_cgroups() -> dict[str, str]:
    """controller -> this process's cgroup path ("" for the v2 hierarchy)."""
    found = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            found[controller] = path
    return found


def _remove_abandoned(base: Path) -> None:
    try:
        entries = list(base.iterdir())
    except OSError:
        return
    for entry in entries:
        owner = entry.name[len(PREFIX) :].split("-")[0]
        if entry.name.startswith(PREFIX) and owner.isdigit() and not pid_alive(int(owner)):
            _kill_all(entry)
            try:
                entry.rmdir()
            except OSError:
                pass


def _kill_all(path: Path) -> None:
    if (path / "cgroup.kill").exists():
        try:
            (path / "cgroup.kill").write_text("1")
            return
        except OSError:
            pass
    for _ in range(20):  # a fork racing the kill shows up in the next read
        pids = [int(p) for p in _read(path / "cgroup.procs").split()]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
