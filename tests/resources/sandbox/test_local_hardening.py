"""What the local (bubblewrap) sandbox guarantees, checked from inside a cell and from the host.

CI runs this suite as root, the case that matters most: bwrap as root must not hand
the cell host root.  test_a_non_root_host_gets_the_same_guarantees covers the other
path (an unprivileged user namespace) by running the host as nobody.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import cataloger_dagster
from cataloger_dagster.resources.sandbox import SandboxError, SandboxResource, cgroup, seccomp
from cataloger_dagster.resources.sandbox.local import SANDBOX_UID

MEMORY_MB, TMP_MB = 512, 16
AS_ROOT = os.geteuid() == 0
# as root the sandbox is host uid 10001; otherwise it is the invoking user
HOST_UID = SANDBOX_UID if AS_ROOT else os.getuid()


def _sandbox(**overrides) -> SandboxResource:
    settings = dict(backend="local", timeout_s=20, memory_mb=MEMORY_MB, pids=64, tmp_size_mb=TMP_MB)
    return SandboxResource(**{**settings, **overrides})


def _run(runtime, code: str, timeout_s: float = 30):
    r = runtime.execute(code, timeout_s=timeout_s)
    assert r.ok, r.error
    return json.loads(r.stdout)


def _descendants(root: int) -> list[int]:
    parent = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            data = Path(f"/proc/{entry}/stat").read_bytes()
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
    for pid in _descendants(os.getpid()):
        try:
            lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        except OSError:
            continue
        status = dict(line.split(":", 1) for line in lines if ":" in line)
        status = {k: v.strip() for k, v in status.items()}
        nspids = status.get("NSpid", "").split()
        if len(nspids) > 1 and nspids[-1] == str(ns_pid):
            return status
    raise AssertionError(f"no process of ours has pid {ns_pid} in a pid namespace")


def _sandbox_cgroups(host_pid: int) -> list[Path]:
    """The cgroup folders (v1 or v2) the host sees `host_pid` in."""
    found = []
    for line in Path(f"/proc/{host_pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if cgroup.PREFIX in path:
            for controller in controllers.split(",") if controllers else [""]:
                found.append(Path("/sys/fs/cgroup", controller, path.lstrip("/")))
    return found


# ---------------------------------------------------------------- privileges
def test_every_sandboxed_process_is_an_unprivileged_host_user(local_sandbox):
    with _sandbox().session() as rt:
        child = _run(rt, "import json, subprocess\nchild = subprocess.Popen(['sleep', '60'])\n"
                         "print(json.dumps(child.pid))")
        for ns_pid in (rt.supervisor_pid, rt.worker_pid, child):
            status = _host_status(ns_pid)
            assert status["Uid"].split() == [str(HOST_UID)] * 4, status["Uid"]
            assert status["Gid"].split() == [str(HOST_UID)] * 4, status["Gid"]
            assert status["Groups"] == ""
            for caps in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
                assert int(status[caps], 16) == 0, (caps, status[caps])
            assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"
        assert _run(rt, "import json, os\nchild.kill(); child.wait()\nprint(json.dumps(os.getuid()))") \
            == SANDBOX_UID


def test_proc_sys_and_sysrq_cannot_be_written(local_sandbox):
    host_before = {p: Path(p).read_text() for p in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/swappiness")}
    with _sandbox().session() as rt:
        out = _run(rt, """
import json, os
tried, opened, errors = 0, [], set()
for top, dirs, files in os.walk('/proc/sys'):
    for name in files + ['../../sysrq-trigger']:
        tried += 1
        try:
            os.close(os.open(os.path.join(top, name), os.O_WRONLY))
            opened.append(os.path.join(top, name))
        except OSError as exc:
            errors.add(exc.errno)
for path, value in (('/proc/sys/kernel/core_pattern', '|/tmp/x'), ('/proc/sys/vm/swappiness', '7')):
    try:
        with open(path, 'w') as f:
            f.write(value)
        opened.append(path)
    except OSError as exc:
        errors.add(exc.errno)
print(json.dumps({"tried": tried, "opened": opened, "errors": sorted(errors)}))
""")
    assert out["tried"] > 200 and out["opened"] == [], out
    assert errno.EROFS in out["errors"]
    assert {p: Path(p).read_text() for p in host_before} == host_before


# ---------------------------------------------------------------- seccomp
SYSCALLS = """
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NUMBERS = %r
def err(ret):
    return None if ret != -1 else errno.errorcode[ctypes.get_errno()]
out = {}
for name, args in ARGS.items():
    ctypes.set_errno(0)
    out[name] = err(libc.syscall(ctypes.c_long(NUMBERS[name]), *[ctypes.c_long(a) for a in args]))
# a clone making a namespace; fork and threads (clone3 falls back to clone) still work
pid = libc.syscall(ctypes.c_long(NUMBERS["clone"]), ctypes.c_long(0x10000000 | 17), 0, 0, 0, 0)
if pid == 0:
    os._exit(0)
out["clone NEWUSER"] = err(pid)
if pid > 0:
    os.waitpid(pid, 0)
out["clone3"] = err(libc.syscall(ctypes.c_long(NUMBERS["clone3"]), 0, 0))
child = os.fork()
if child == 0:
    os._exit(3)
out["fork"] = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
import threading
t = threading.Thread(target=lambda: None); t.start(); t.join()
out["thread"] = "ok"
"""
# the C library's own wrappers, numbered by libc rather than by us; only ever run
# under the filter (on the host, as root, they would mount over /tmp)
LIBC_CALLS = """
out["libc mount"] = err(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
out["libc umount2"] = err(libc.umount2(b"/tmp", 0))
out["libc unshare"] = err(libc.unshare(0x10000000))  # CLONE_NEWUSER
out["libc setns"] = err(libc.setns(0, 0))
out["libc chroot"] = err(libc.chroot(b"/tmp"))
"""
PRINT = "print(json.dumps(out))\n"
BIG = 2 ** 31 - 1  # no such pid
# arguments that, without the filter, fail with something other than EPERM (or succeed harmlessly)
ARGS = {"mount": (0, 0, 0, 0, 0), "umount2": (0, 0), "pivot_root": (0, 0), "chroot": (0,),
        "open_tree": (-1, 0, 0), "move_mount": (-1, 0, -1, 0, 0), "fsopen": (0, 0), "fsconfig": (-1, 0, 0, 0, 0),
        "fsmount": (-1, 0, 0), "fspick": (-1, 0, 0), "mount_setattr": (-1, 0, 0, 0, 0), "unshare": (0,),
        "setns": (-1, 0), "ptrace": (2, BIG, 0, 0), "process_vm_readv": (BIG, 0, 0, 0, 0, 0),
        "process_vm_writev": (BIG, 0, 0, 0, 0, 0), "keyctl": (-1, 0, 0, 0, 0), "add_key": (0, 0, 0, 0, 0),
        "request_key": (0, 0, 0, 0), "bpf": (-1, 0, 0), "perf_event_open": (0, 0, -1, -1, 0),
        "io_uring_setup": (0, 0), "io_uring_enter": (-1, 0, 0, 0, 0, 0), "io_uring_register": (-1, 0, 0, 0)}


def _syscalls_program() -> str:
    arch, numbers = seccomp.ARCHES[os.uname().machine]
    return f"ARGS = {ARGS!r}\n" + SYSCALLS % {**seccomp.COMMON, **numbers}


def test_denied_syscalls_fail_with_eperm_in_a_cell(local_sandbox):
    assert set(ARGS) == set(seccomp.DENIED)
    with _sandbox().session() as rt:
        out = _run(rt, _syscalls_program() + LIBC_CALLS + PRINT)
    expected = {name: "EPERM" for name in seccomp.DENIED}
    expected.update({f"libc {n}": "EPERM" for n in ("mount", "umount2", "unshare", "setns", "chroot")})
    expected.update({"clone NEWUSER": "EPERM", "clone3": "ENOSYS", "fork": 3, "thread": "ok"})
    assert out == expected


LOAD_FILTER = """
import ctypes
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
program = bytes.fromhex(%r)
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(Fprog(len(program) // 8, program)), 0, 0) == 0  # SECCOMP_MODE_FILTER
"""


def test_the_filter_is_what_makes_them_fail(tmp_path):
    # On the host, with and without the filter: the same calls fail otherwise without it,
    # so the EPERM seen in a cell is the filter's, not the kernel's refusal of an unprivileged user.
    source = seccomp.filter_program().hex()
    results = {}
    for loaded in (False, True):
        code = (LOAD_FILTER % source if loaded else "") + _syscalls_program() + PRINT
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        results[loaded] = json.loads(out.stdout)
    for name in seccomp.DENIED:
        assert results[False][name] != "EPERM" and results[True][name] == "EPERM", name
    assert results[True]["clone3"] == "ENOSYS" and results[True]["fork"] == 3
    # x32 numbers (the x86_64 arch with bit 30 set) are refused outright
    if os.uname().machine == "x86_64":
        x32 = LOAD_FILTER % source + ("import errno\nr = libc.syscall(0x40000000 | 39)\n"
                                      "print(r, errno.errorcode[ctypes.get_errno()])")
        out = subprocess.run([sys.executable, "-c", x32], capture_output=True, text=True, timeout=60)
        assert out.stdout.split() == ["-1", "EPERM"], out


def test_a_nested_user_namespace_cannot_mount(local_sandbox):
    with _sandbox().session() as rt:
        out = _run(rt, """
import json, subprocess
r = subprocess.run(['unshare', '--user', '--map-root-user', '--mount', 'mount', '-t', 'tmpfs', 'none', '/tmp'],
                   capture_output=True, text=True)
print(json.dumps([r.returncode, r.stderr]))
""")
    assert out[0] != 0 and "Operation not permitted" in out[1], out


# ---------------------------------------------------------------- memory and sizes
HOG = "import sys, time\nx = b'\\x01' * int(sys.argv[1])\nprint('held', flush=True)\ntime.sleep(60)"


def test_memory_is_capped_for_the_sandbox_not_per_process(local_sandbox):
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
            supervisor = int(_host_status(rt.supervisor_pid)["Pid"])
            peaks = [int(_read(p, "memory.max_usage_in_bytes") or _read(p, "memory.peak") or 0)
                     for p in _sandbox_cgroups(supervisor)]
            assert 0 < max(peaks) <= MEMORY_MB << 20, peaks


def test_tmp_and_dev_shm_stop_at_their_size_and_dev_is_read_only(local_sandbox):
    with _sandbox().session() as rt:
        out = _run(rt, """
import errno, json, os
out = {}
for folder in ('/tmp', '/dev/shm'):
    written, i = 0, 0
    try:
        while True:  # files of 4 MiB, so that RLIMIT_FSIZE is not what stops it
            with open('%s/fill%d' % (folder, i), 'wb') as f:
                for _ in range(4):
                    f.write(b'0' * (1 << 20)); f.flush(); written += 1
            i += 1
    except OSError as exc:
        out[folder] = [written, errno.errorcode[exc.errno]]
    for name in os.listdir(folder):
        if name.startswith('fill'):  # only ours: an interpreter under /tmp has its parent folders here
            os.remove(os.path.join(folder, name))
for path in ('/dev/x', '/dev/null'):
    try:
        with open(path, 'w') as f:
            f.write('x')
        out[path] = 'written'
    except OSError as exc:
        out[path] = errno.errorcode[exc.errno]
mounts = [line.split() for line in open('/proc/self/mountinfo')]
out['unsized'] = [m[4] for m in mounts if m[m.index('-') + 1] == 'tmpfs'
                  and not m[5].startswith('ro') and 'size=' not in m[-1]]
print(json.dumps(out))
""")
    for folder in ("/tmp", "/dev/shm"):
        written, code = out[folder]
        assert code == "ENOSPC" and TMP_MB - 4 <= written <= TMP_MB, out
    assert out["/dev/x"] == "EROFS" and out["/dev/null"] == "written"
    assert out["unsized"] == [], out


# ---------------------------------------------------------------- cgroups
def test_the_sandbox_cgroups_hold_its_limits_and_go_with_it(local_sandbox):
    if not AS_ROOT:
        assert cgroup.SandboxCgroup(MEMORY_MB << 20, 64).problem
        return
    with _sandbox().session() as rt:
        supervisor = _host_status(rt.supervisor_pid)["Pid"]
        first = _sandbox_cgroups(int(supervisor))
        kinds = {p.parts[4] if p.parts[4] in ("memory", "pids") else "v2" for p in first}
        assert kinds in ({"memory", "pids"}, {"v2"}), first
        limits = "".join(_read(p, "memory.limit_in_bytes") + _read(p, "memory.max") for p in first)
        assert str(MEMORY_MB << 20) in limits
        # killed from outside: the next call restarts it in a fresh cgroup, the old one is gone
        os.kill(int(supervisor), 9)
        assert rt.execute("1 + 1").restarted and rt.execute("1 + 1").result == "2"
        second = _sandbox_cgroups(int(_host_status(rt.supervisor_pid)["Pid"]))
        assert set(second).isdisjoint(first) and not any(p.exists() for p in first)
    assert not any(p.exists() for p in second)


def test_cgroups_a_killed_host_left_are_removed(local_sandbox):
    if not AS_ROOT:
        assert cgroup.SandboxCgroup(MEMORY_MB << 20, 64).problem
        return
    gone = _dead_pid()
    with _sandbox().session() as rt:
        base = _sandbox_cgroups(int(_host_status(rt.supervisor_pid)["Pid"]))[0].parent
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


# ---------------------------------------------------------------- refusing as root
def test_without_a_usable_cgroup_root_is_refused(local_sandbox, data_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(cgroup, "ROOT", tmp_path / "no-cgroups")
    if AS_ROOT:
        with pytest.raises(SandboxError, match=r"memory and pids.*backend='docker'.*non-root"):
            with _sandbox().session(str(data_dir)):
                pass
    else:
        with pytest.warns(RuntimeWarning, match="per process"), _sandbox().session(str(data_dir)) as rt:
            assert rt.execute("1 + 1").result == "2"


def test_without_setpriv_root_is_refused(local_sandbox, data_dir, tmp_path, monkeypatch):
    only_bwrap = tmp_path / "bin"
    only_bwrap.mkdir()
    (only_bwrap / "bwrap").symlink_to(shutil.which("bwrap"))
    monkeypatch.setenv("PATH", str(only_bwrap))
    if AS_ROOT:
        with pytest.raises(SandboxError, match=r"setpriv.*util-linux.*backend='docker'"):
            with _sandbox().session(str(data_dir)):
                pass
    else:
        with _sandbox().session(str(data_dir)) as rt:
            assert rt.execute("1 + 1").result == "2"


def test_a_data_dir_the_sandbox_user_cannot_read_is_refused(local_sandbox, data_dir):
    data_dir.chmod(0o700)
    if AS_ROOT:
        with pytest.raises(SandboxError, match=f"not readable by the sandbox's uid {SANDBOX_UID}"):
            with _sandbox().session(str(data_dir)):
                pass
        os.chown(data_dir, SANDBOX_UID, SANDBOX_UID)  # as the snapshot writer leaves it
    with _sandbox().session(str(data_dir)) as rt:
        assert rt.execute("import os\nos.listdir('/data')").result == "['table.csv']"


# ---------------------------------------------------------------- a host that is not root
NOT_ROOT_HOST = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
from cataloger_dagster.resources.sandbox import SandboxResource
with SandboxResource(backend="local", timeout_s=20, memory_mb=512, tmp_size_mb=16).session(sys.argv[1]) as rt:
    r = rt.execute('''
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
try:
    open('/proc/sys/kernel/core_pattern', 'w')
    proc_sys = 'written'
except OSError as exc:
    proc_sys = exc.errno
print(json.dumps({"uid": os.getuid(), "data": os.listdir('/data'), "proc_sys": proc_sys,
                  "unshare": libc.unshare(0x10000000) == -1 and ctypes.get_errno(),
                  "status": open('/proc/self/status').read()}))
''')
    out = json.loads(r.stdout)
    host = None
    for pid in os.listdir('/proc'):
        try:
            status = open('/proc/%s/status' % pid).read()
        except OSError:
            continue
        if 'NSpid:\\t%s\\t%d\\n' % (pid, rt.worker_pid) in status:
            host = [l for l in status.splitlines() if l.startswith('Uid:')][0].split()[1:]
    out["host_uid"] = host
    print(json.dumps(out))
"""


def test_a_non_root_host_gets_the_same_guarantees(local_sandbox, tmp_path):
    data = Path(tempfile.mkdtemp(prefix="cataloger-nonroot-"))
    try:
        (data / "t.csv").write_text("a\n1\n")
        argv = [sys.executable, "-c", NOT_ROOT_HOST, str(data)]
        user = os.getuid()
        if AS_ROOT:
            user = 65534  # nobody
            for path in (data, data / "t.csv"):
                os.chown(path, user, user)
            argv = _as_nobody(argv)
        env = {"PATH": os.environ["PATH"], "HOME": str(data),
               "PYTHONPATH": str(Path(cataloger_dagster.__file__).parents[1])}
        out = subprocess.run(argv, capture_output=True, text=True, timeout=180, env=env)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(out.stdout.splitlines()[-1])
    finally:
        shutil.rmtree(data)
    assert result["uid"] == SANDBOX_UID and result["data"] == ["t.csv"]
    assert result["host_uid"] == [str(user)] * 4
    assert result["proc_sys"] in (errno.EROFS, errno.EACCES) and result["unshare"] == errno.EPERM
    status = dict(line.split(":\t", 1) for line in result["status"].splitlines() if ":\t" in line)
    assert int(status["CapEff"], 16) == 0 and int(status["CapBnd"], 16) == 0
    assert status["NoNewPrivs"].strip() == "1" and status["Seccomp"].strip() == "2"


def _as_nobody(argv: list[str]) -> list[str]:
    """argv run as nobody, in a mount namespace where the interpreter is reachable to it
    (a pyenv under root's 0700 home is not, otherwise)."""
    outer = [shutil.which("bwrap"), "--dev-bind", "/", "/", "--tmpfs", "/root"]
    for prefix in sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}):
        for parent in reversed(Path(prefix).parents[:-1]):
            outer += ["--perms", "0755", "--dir", str(parent)]
        outer += ["--ro-bind", prefix, prefix]
    return outer + ["--", shutil.which("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups",
                    "--", *argv]


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
