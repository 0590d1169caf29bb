"""cgroup.py: one cgroup per local sandbox, capping memory and pids for the sandbox as a whole.

Through a session (its cgroups hold the limits, go with it, and are not shared), and
SandboxCgroup directly on this host's hierarchy: made under our own cgroup with the
limits written, joined by a child, enforced by the kernel, removed with whatever is
still inside, and the ones a dead host left are cleared at the next creation.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cataloger_dagster.resources.sandbox import SandboxError, SandboxResource, cgroup

MEMORY_MB, TMP_MB = 512, 16
AS_ROOT = os.geteuid() == 0


def _sandbox(**overrides) -> SandboxResource:
    settings = dict(backend="local", timeout_s=20, memory_mb=MEMORY_MB, pids=64, tmp_size_mb=TMP_MB)
    return SandboxResource(**{**settings, **overrides})


def _run(runtime, code: str, timeout_s: float = 30):
    r = runtime.execute(code, timeout_s=timeout_s)
    assert r.ok, r.error
    return json.loads(r.stdout)


# ---------------------------------------------------------------- through a session
HOG = "import sys, time\nx = b'\\x01' * int(sys.argv[1])\nprint('held', flush=True)\ntime.sleep(60)"


def test_memory_is_capped_for_the_sandbox_not_per_process(local_sandbox, host_status, sandbox_cgroups):
    share = int(MEMORY_MB * 0.4) * 1024 * 1024  # four of them need 160% of the cap
    with _sandbox().session() as rt:
        out = _run(rt, f"""
import json, select, subprocess, sys, time
procs = [subprocess.Popen([sys.executable, '-c', {HOG!r}, '{share}'], stdout=subprocess.PIPE) for _ in range(4)]
held, pending, end = 0, list(procs), time.monotonic() + 40
while pending and time.monotonic() < end:
    ready, _, _ = select.select([p.stdout for p in pending], [], [], 1.0)
    for f in ready:
        held += f.readline() == b'held\\n'  # an empty read: it died
        pending = [p for p in pending if p.stdout is not f]
time.sleep(0.5)
codes = [p.poll() for p in procs]
for p in procs:
    p.kill(); p.wait()
print(json.dumps({{"held": held, "codes": codes, "pending": len(pending)}}))
""", timeout_s=60)
        assert out["pending"] == 0, out
        # at most two fit at once: the kernel killed the others (perhaps after they held theirs)
        assert set(out["codes"]) <= {None, -9} and out["codes"].count(None) <= 2, out
        assert 2 <= out["held"] <= 4, out
        assert rt.execute("1 + 1").result == "2"
        if AS_ROOT:
            supervisor = int(host_status(rt.supervisor_pid)["Pid"])
            peaks = [int(_read(p, "memory.max_usage_in_bytes") or _read(p, "memory.peak") or 0)
                     for p in sandbox_cgroups(supervisor)]
            assert 0 < max(peaks) <= MEMORY_MB << 20, peaks


def test_the_sandbox_cgroups_hold_its_limits_and_go_with_it(local_sandbox, host_status, sandbox_cgroups):
    if not AS_ROOT:
        assert cgroup.SandboxCgroup(MEMORY_MB << 20, 64).problem
        return
    with _sandbox().session() as rt:
        supervisor = host_status(rt.supervisor_pid)["Pid"]
        first = sandbox_cgroups(int(supervisor))
        kinds = {p.parts[4] if p.parts[4] in ("memory", "pids") else "v2" for p in first}
        assert kinds in ({"memory", "pids"}, {"v2"}), first
        limits = "".join(_read(p, "memory.limit_in_bytes") + _read(p, "memory.max") for p in first)
        assert str(MEMORY_MB << 20) in limits
        # killed from outside: the next call restarts it in a fresh cgroup, the old one is gone
        os.kill(int(supervisor), 9)
        assert rt.execute("1 + 1").restarted and rt.execute("1 + 1").result == "2"
        second = sandbox_cgroups(int(host_status(rt.supervisor_pid)["Pid"]))
        assert set(second).isdisjoint(first) and not any(p.exists() for p in first)
    assert not any(p.exists() for p in second)


def test_cgroups_a_killed_host_left_are_removed(local_sandbox, host_status, sandbox_cgroups):
    if not AS_ROOT:
        assert cgroup.SandboxCgroup(MEMORY_MB << 20, 64).problem
        return
    gone = _dead_pid()
    with _sandbox().session() as rt:
        base = sandbox_cgroups(int(host_status(rt.supervisor_pid)["Pid"]))[0].parent
        left = base / f"{cgroup.PREFIX}{gone}-abandoned"
        left.mkdir()
    with _sandbox().session():
        assert not left.exists()


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _read(folder: Path, name: str) -> str:
    try:
        return (folder / name).read_text()
    except OSError:
        return ""


# ---------------------------------------------------------------- no usable cgroup, and one per sandbox
def test_without_a_usable_cgroup_root_is_refused(local_sandbox, data_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(cgroup, "ROOT", tmp_path / "no-cgroups")
    if AS_ROOT:
        with pytest.raises(SandboxError, match=r"memory and pids.*backend='docker'.*non-root"):
            with _sandbox().session(str(data_dir)):
                pass
    else:
        with pytest.warns(RuntimeWarning, match="per process"), _sandbox().session(str(data_dir)) as rt:
            assert rt.execute("1 + 1").result == "2"


def test_sandboxes_do_not_share_a_process_count(local_sandbox, tmp_path):
    # As root every sandbox is host uid 10001: a per-uid RLIMIT_NPROC would let one
    # sandbox's processes starve another's.  Each has its own pids cgroup instead.
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    first, second = _sandbox(pids=24), _sandbox(pids=24)
    with first.session(str(data)) as full, second.session(str(data)) as other:
        filled = full.execute(
            "import subprocess\nkids = []\n"
            "while True:\n"
            "    try:\n        kids.append(subprocess.Popen(['sleep', '60']))\n"
            "    except OSError:\n        break\n"
            "len(kids)", timeout_s=20)
        assert filled.ok and 10 <= int(filled.result) <= 24 + 8, filled  # the cgroup allows pids + 8
        started = other.execute("import subprocess\n"
                                "[subprocess.Popen(['sleep', '0']).wait() for _ in range(12)]", timeout_s=20)
        assert started.ok, started.error
        assert full.execute("1 + 1").result == "2"


# ---------------------------------------------------------------- SandboxCgroup on this host
needs_root = pytest.mark.skipif(not AS_ROOT, reason="only root may make cgroups on this host's hierarchy")


def _own_folders() -> dict[str, Path]:
    """controller -> where this process's own cgroup is, as the host shows it (v1; "" for v2)."""
    found = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            mount = Path("/sys/fs/cgroup", controller)
            folder = mount / path.lstrip("/")
            found[controller] = folder if folder.is_dir() else mount
    return found


def _members(pid: int) -> set[str]:
    """The sandbox cgroup names process `pid` is in."""
    return {line.split(":", 2)[2].rsplit("/", 1)[-1] for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()
            if cgroup.PREFIX in line}


@needs_root
def test_a_cgroup_is_made_under_our_own_with_both_limits():
    made = cgroup.SandboxCgroup(96 << 20, 12)
    paths = list(made.paths)
    try:
        assert made.problem is None and paths
        own = _own_folders()
        for path in paths:
            assert path.is_dir() and path.name.startswith(f"{cgroup.PREFIX}{os.getpid()}-")
            # under the caller's own cgroup, so that the limits it runs under still hold
            assert path.parent in own.values(), (path, own)
        files = {name: _read(p, name).strip() for p in paths
                 for name in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.max",
                              "memory.swap.max", "pids.max") if (p / name).exists()}
        if "memory" in own:  # v1: a hierarchy per controller
            assert {p.parts[4] for p in paths} == {"memory", "pids"}
            assert files["memory.limit_in_bytes"] == str(96 << 20)
            if "memory.memsw.limit_in_bytes" in files:  # swap accounting on: no swapping past the cap
                assert files["memory.memsw.limit_in_bytes"] == str(96 << 20)
        else:
            assert files["memory.max"] == str(96 << 20) and files["memory.swap.max"] == "0"
        assert files["pids.max"] == "12"
    finally:
        made.remove()
    assert made.paths == [] and not any(p.exists() for p in paths)
    made.remove()  # a second time: nothing left to do, and no error


@needs_root
def test_a_child_that_joins_is_inside_and_is_killed_with_the_cgroup():
    made = cgroup.SandboxCgroup(96 << 20, 12)
    child = subprocess.Popen(["sleep", "60"], preexec_fn=made.join)
    try:
        assert _members(child.pid) == {p.name for p in made.paths}
        assert len({line for line in Path(f"/proc/{child.pid}/cgroup").read_text().splitlines()
                    if cgroup.PREFIX in line}) == len(made.paths)  # in every one of them
        made.remove()
        assert child.wait(timeout=5) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        made.remove()


HOLD = "import sys\nx = b'\\x01' * int(sys.argv[1])\nprint('held', flush=True)\n"
FORKS = """
import errno, json, subprocess
kids, failure = [], None
for _ in range(40):
    try:
        kids.append(subprocess.Popen(['sleep', '60']))
    except OSError as exc:
        failure = errno.errorcode[exc.errno]
        break
for kid in kids:
    kid.kill(); kid.wait()
print(json.dumps([len(kids), failure]))
"""


@needs_root
def test_the_kernel_holds_the_processes_inside_to_the_limits():
    made = cgroup.SandboxCgroup(64 << 20, 8)
    try:
        small = subprocess.run([sys.executable, "-c", HOLD, str(8 << 20)], preexec_fn=made.join,
                               capture_output=True, text=True, timeout=60)
        assert small.returncode == 0 and small.stdout == "held\n", small  # within the cap it runs
        big = subprocess.run([sys.executable, "-c", HOLD, str(256 << 20)], preexec_fn=made.join,
                             capture_output=True, text=True, timeout=60)
        assert big.returncode == -signal.SIGKILL and "held" not in big.stdout, big
        forks = subprocess.run([sys.executable, "-c", FORKS], preexec_fn=made.join,
                               capture_output=True, text=True, timeout=60)
        started, failure = json.loads(forks.stdout)
        # 8 processes in all, the python that forks among them
        assert started <= 7 and failure == "EAGAIN", forks.stdout
    finally:
        made.remove()


@needs_root
def test_only_the_cgroups_of_dead_owners_are_cleared_and_their_processes_killed():
    base = _own_folders()["pids"] if "pids" in _own_folders() else _own_folders()[""]
    dead = _dead_pid()
    abandoned = base / f"{cgroup.PREFIX}{dead}-abandoned"
    kept = [base / f"{cgroup.PREFIX}{os.getpid()}-alive",  # its owner (we) still runs
            base / f"{cgroup.PREFIX}notapid-x",
            base / f"unrelated-{dead}"]
    for folder in [abandoned, *kept]:
        folder.mkdir()
    left = subprocess.Popen(["sleep", "60"])
    made = None
    try:
        (abandoned / "cgroup.procs").write_text(str(left.pid))
        made = cgroup.SandboxCgroup(64 << 20, 8)
        assert made.problem is None
        assert left.wait(timeout=5) == -signal.SIGKILL
        assert not abandoned.exists() and all(folder.is_dir() for folder in kept)
    finally:
        if left.poll() is None:
            left.kill()
            left.wait()
        if made is not None:
            made.remove()
        for folder in [abandoned, *kept]:
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def test_a_hierarchy_without_the_controllers_is_a_problem_not_an_error(tmp_path):
    nothing = cgroup.SandboxCgroup(64 << 20, 8, root=tmp_path)
    assert nothing.paths == [] and nothing.problem == f"no cgroup with the memory and pids controller under {tmp_path}"
    # a v1 layout with a memory hierarchy only
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "cgroup.procs").write_text("")
    memory_only = cgroup.SandboxCgroup(64 << 20, 8, root=tmp_path)
    assert memory_only.paths == [] and memory_only.problem == f"no cgroup with the pids controller under {tmp_path}"
    assert list((tmp_path / "memory").iterdir()) == [tmp_path / "memory" / "cgroup.procs"]  # nothing made
