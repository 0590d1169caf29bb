"""A pooled sandbox is cleaned between sessions: what one table's cells try to leave for the
next table's session, and what the next session finds (nothing), on both backends.

The cells here are hostile on purpose: files in every writable place, shut folders, fifos and
sockets, an xattr and a mode on /tmp, SysV IPC objects, POSIX message queues, a thread still
writing, poisoned modules, a secret in memory, the zygote itself signalled, stopped and killed, and
the zygote's and the supervisor's rlimits, nice value, CPU affinity, I/O priority and scheduling
policy changed from a cell (the kernel allows it: they share its uid).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets

import pytest

from cataloger_dagster.resources.sandbox import SandboxResource
from cataloger_dagster.resources.sandbox.pool import SandboxPool

ENV = {"DB_CONNECTION_STRING": "duckdb:///data/snapshot.duckdb?read_only=true"}

# What a later session could see of an earlier one, as JSON.
LOOK = r"""
import json, os, string
def listing(path):
    return sorted(os.listdir(path)) if os.path.isdir(path) else None
def ipc(kind):
    with open("/proc/sysvipc/" + kind) as f:
        return f.read().splitlines()[1:]
def xattrs(path):
    try:
        return os.listxattr(path)
    except OSError as exc:
        return type(exc).__name__
print(json.dumps({
    "tmp": listing("/tmp"), "shm": listing("/dev/shm"), "mqueue": listing("/dev/mqueue"),
    "data": listing("/data"), "tmp_mode": oct(os.stat("/tmp").st_mode),
    "tmp_xattrs": xattrs("/tmp"), "ipc": [ipc(k) for k in ("shm", "msg", "sem")],
    "processes": len([p for p in os.listdir("/proc") if p.isdigit()]),
    "module": string.ascii_letters, "env": os.environ.get("LEFT_BY_A"), "globals": globals().get("LEFT"),
}))
"""

# Everything a cell can leave in the places it may write, and in its own interpreter.
LEAVE = r"""
import ctypes, json, os, signal, socket, threading, time
made = {}
for root in ("/tmp", "/dev/shm"):
    if not os.access(root, os.W_OK):
        continue
    open(os.path.join(root, ".hidden"), "w").write("a")
    open(os.path.join(root, "odd\nname \x01"), "w").write("a")
    d = root
    for i in range(40):
        d = os.path.join(d, "d%d" % i)
        os.mkdir(d)
    open(os.path.join(d, "deep"), "w").write("a")
    os.chmod(os.path.join(root, "d0", "d1"), 0)
    os.chmod(os.path.join(root, "d0"), 0)
    os.mkfifo(os.path.join(root, "fifo"))
    socket.socket(socket.AF_UNIX).bind(os.path.join(root, "sock"))
    os.symlink("/data", os.path.join(root, "link"))
    made[root] = sorted(os.listdir(root))
for step in (lambda: os.setxattr("/tmp", "user.left", b"a"), lambda: os.chmod("/tmp", 0o700)):
    try:
        step()
        made.setdefault("tmp root", 0)
        made["tmp root"] += 1
    except OSError:
        pass
libc = ctypes.CDLL(None, use_errno=True)
made["ipc"] = [libc.shmget(0x5eed, 4096, 0o1666), libc.msgget(0x5eee, 0o1666), libc.semget(0x5eef, 1, 0o1666)]
libc.mq_open.restype = ctypes.c_int
made["mq"] = libc.mq_open(b"/left-by-a", os.O_CREAT | os.O_RDWR, 0o600, None)
def keep_writing():
    while True:
        try:
            open("/tmp/late", "a").write("x")
        except OSError:
            pass
        time.sleep(0.01)
threading.Thread(target=keep_writing, daemon=True).start()
import string
string.ascii_letters = "poisoned"
os.environ["LEFT_BY_A"] = "1"
LEFT = "table a"
print(repr(made))
"""

# The other processes a cell sees: its supervisor is PID 1, the zygote the only other one.
OTHERS = "import os\n[int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]"

# Finds `digest`'s bytes (starting with `prefix`) anywhere in this process's readable memory.
SCAN = r"""
import hashlib
def scan(prefix, digest, length):
    found = 0
    with open("/proc/self/maps") as f:
        maps = f.read().splitlines()
    with open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if "r" not in perms:
                continue
            lo, hi = (int(x, 16) for x in span.split("-"))
            step = 8 << 20
            for at in range(lo, hi, step):
                try:
                    mem.seek(at)
                    chunk = mem.read(min(step + length, hi - at))
                except (OSError, ValueError, OverflowError):
                    break
                i = chunk.find(prefix)
                while i >= 0:
                    found += hashlib.sha256(chunk[i:i + length]).hexdigest() == digest
                    i = chunk.find(prefix, i + 1)
    return found
"""


def _look(runtime) -> dict:
    r = runtime.execute(LOOK)
    assert r.ok, r.error
    return json.loads(r.stdout)


def _run(runtime, code: str):
    r = runtime.execute(code)
    assert r.ok, r.error
    return r


@pytest.fixture
def sandbox(backend) -> SandboxResource:
    return SandboxResource(backend=backend, timeout_s=30, memory_mb=1024)


def test_nothing_one_session_leaves_reaches_the_next(sandbox, backend):
    with SandboxPool() as pool:
        with sandbox.session(env=ENV, pool=pool) as a:
            fresh = _look(a)
            with open(os.path.join(a.data_dir, "a.duckdb"), "w") as f:
                f.write("table a's snapshot")
            left = _run(a, LEAVE).stdout
            # it did leave all that (so the next session's view is a cleaning, not an accident)
            assert "'/tmp': ['.hidden', 'd0', 'fifo', 'link', 'odd\\nname \\x01', 'sock']" in left
            assert "'ipc': [" in left and "-1" not in left.split("'ipc':")[1].split("]")[0]
            seen_by_a = _look(a)
            assert seen_by_a["module"] == "poisoned" and seen_by_a["ipc"] != [[], [], []]
            assert seen_by_a["data"] == ["a.duckdb"]
            if backend == "docker":  # POSIX queues are refused by the local sandbox's seccomp filter
                assert seen_by_a["mqueue"] == ["left-by-a"]
        with sandbox.session(env=ENV, pool=pool) as b:
            assert pool.recycled == 1 and pool.unclean == 0 and b.data_dir == a.data_dir
            assert _look(b) == fresh


def test_the_next_session_cannot_find_the_last_ones_secret_in_its_memory(sandbox):
    """The next worker is a fork of the zygote, which no cell and no table's data ever reached:
    not of the supervisor, which forwarded the last session's code and output."""
    secret = "cataloger-secret-" + secrets.token_hex(24)
    digest = hashlib.sha256(secret.encode()).hexdigest()
    look = f"{SCAN}\nscan(b'cataloger-secret-', {digest!r}, {len(secret)})"
    with SandboxPool() as pool:
        with sandbox.session(env=ENV, pool=pool) as a:
            _run(a, f"KEPT = {secret!r} * 3\nprint(KEPT)\nKEPT")
            assert int(_run(a, look).result) >= 1  # the scan finds a secret where it is
        with sandbox.session(env=ENV, pool=pool) as b:
            assert pool.recycled == 1
            # the scan works here too: a secret of b's own, made at run time
            own = "cataloger-secret-" + secrets.token_hex(24)
            own_digest = hashlib.sha256(own.encode()).hexdigest()
            assert int(_run(b, f"OWN = 'cataloger-secret-' + {own[17:][::-1]!r}[::-1]\n"
                               f"{SCAN}\nscan(b'cataloger-secret-', {own_digest!r}, {len(own)})").result) >= 1
            assert _run(b, look).result == "0"


def test_the_zygote_is_out_of_a_cells_reach(sandbox):
    """A cell can see the zygote, not read it; the signals it may ignore it ignores, and a stop
    is undone before the next session's worker is forked."""
    with SandboxPool() as pool:
        with sandbox.session(env=ENV, pool=pool) as a:
            others = json.loads(_run(a, f"import json, os\nprint(json.dumps({OTHERS.splitlines()[1]}))").stdout)
            assert len(others) == 1, others  # the zygote
            zygote = others[0]
            tried = _run(a, f"""
import os, signal
out = []
for path in ("/proc/{zygote}/mem", "/proc/{zygote}/environ", "/proc/{zygote}/fd"):
    try:
        os.listdir(path) if path.endswith("fd") else open(path, "rb").read(1)
        out.append("read")
    except PermissionError:
        out.append("denied")
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGSTOP):
    os.kill({zygote}, sig)
out""").result
            assert tried == "['denied', 'denied', 'denied']"
        with sandbox.session(env=ENV, pool=pool) as b:
            assert pool.recycled == 1 and pool.unclean == 0
            assert _run(b, "import string\nstring.ascii_letters[:3]").result == "'abc'"


def test_a_session_that_kills_the_zygote_gets_the_next_one_a_new_sandbox(sandbox):
    with SandboxPool() as pool:
        with sandbox.session(env=ENV, pool=pool) as a:
            fresh = _look(a)
            _run(a, f"import os\nfor pid in {OTHERS.splitlines()[1]}:\n    os.kill(pid, 9)\n")
            _run(a, LEAVE)
        with sandbox.session(env=ENV, pool=pool) as b:
            # the sandbox could not be proved clean: it was stopped and another started
            assert pool.unclean == 1 and pool.recycled == 0 and b.data_dir != a.data_dir
            assert _look(b) == fresh


def test_a_forked_worker_meets_its_limits_as_a_started_one_does(sandbox):
    """A write past the scratch size is an OSError in a forked worker too (Python ignores SIGXFSZ;
    the zygote's signal dispositions are not handed on)."""
    with SandboxPool() as pool:
        for _ in range(2):  # the first worker and one forked after a cleaning
            with sandbox.session(env=ENV, pool=pool) as rt:
                r = rt.execute("with open('/tmp/big', 'wb') as f:\n    for _ in range(2048):\n"
                               "        f.write(b'x' * (1 << 20))")
                assert not r.ok and r.error.type == "OSError", r.error
                assert rt.execute("import signal\nsignal.getsignal(signal.SIGTERM)").result == "<Handlers.SIG_DFL: 0>"
        assert pool.recycled >= 1


# What a worker inherits from the zygote and what a cell can set from outside in the zygote and the
# supervisor (same uid): limits, nice value, CPU affinity, I/O priority, scheduling policy; and the
# cell's own process's umask, timers and oom_score_adj.  Keyed by role, as pids differ by sandbox.
PROCESS_VIEW = r"""
import ctypes, json, os, resource, signal
libc = ctypes.CDLL(None, use_errno=True)
IOPRIO_GET = {"x86_64": 252, "aarch64": 31}[os.uname().machine]
def attributes(pid):
    return {
        "limits": {n: resource.prlimit(pid, getattr(resource, n)) for n in dir(resource) if n.startswith("RLIMIT_")},
        "nice": os.getpriority(os.PRIO_PROCESS, pid), "affinity": sorted(os.sched_getaffinity(pid)),
        "policy": os.sched_getscheduler(pid), "ioprio": libc.syscall(IOPRIO_GET, 1, pid),
    }
zygote = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())][0]
mask = os.umask(0o22); os.umask(mask)
with open("/proc/self/oom_score_adj") as f:
    oom = f.read()
print(json.dumps({"worker": attributes(0), "supervisor": attributes(1), "zygote": attributes(zygote),
                  "umask": mask, "oom_score_adj": oom, "cwd": os.getcwd(),
                  "timers": [signal.getitimer(t) for t in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL,
                                                           signal.ITIMER_PROF)]}))
"""

# Changes the zygote's and the supervisor's soft limits (a value hidden in one, a process cap of 1),
# CPU affinity, I/O priority (idle class) and scheduling policy (batch), all of which they can put
# back; and the cell's own process's umask, timers, limits, nice value and affinity.
CHANGE_WHAT_CAN_BE_PUT_BACK = r"""
import ctypes, os, resource, signal
libc = ctypes.CDLL(None, use_errno=True)
IOPRIO_SET = {"x86_64": 251, "aarch64": 30}[os.uname().machine]
zygote = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())][0]
done = []
for pid in (zygote, 1):
    hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)[1]
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (4242, hard))  # read back by the next session
    resource.prlimit(pid, resource.RLIMIT_STACK, (4242 * 4096, resource.prlimit(pid, resource.RLIMIT_STACK)[1]))
    resource.prlimit(pid, resource.RLIMIT_NPROC, (1, resource.prlimit(pid, resource.RLIMIT_NPROC)[1]))
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, resource.prlimit(pid, resource.RLIMIT_FSIZE)[1]))
    os.sched_setaffinity(pid, {0})
    assert libc.syscall(IOPRIO_SET, 1, pid, 3 << 13) == 0, ctypes.get_errno()  # IOPRIO_CLASS_IDLE
    os.sched_setscheduler(pid, os.SCHED_BATCH, os.sched_param(0))
    try:  # refused: the /proc files of a non-dumpable process are not the cell's
        with open("/proc/%d/oom_score_adj" % pid, "w") as f:
            f.write("1000")
        raise AssertionError("a cell set the oom_score_adj of %d" % pid)
    except OSError:
        pass
    done.append(resource.prlimit(pid, resource.RLIMIT_NOFILE)[0])
os.umask(0)
signal.signal(signal.SIGALRM, signal.SIG_IGN)
signal.setitimer(signal.ITIMER_REAL, 3600, 60)
signal.setitimer(signal.ITIMER_VIRTUAL, 3600)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
os.setpriority(os.PRIO_PROCESS, 0, 19)
os.sched_setaffinity(0, {0})
try:  # the local sandbox mounts /proc read-only
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("1000")
except OSError:
    pass
done
"""


def test_what_a_cell_changes_in_the_zygote_and_supervisor_is_put_back_for_the_next_session(sandbox):
    """A cell can set the soft limits, affinity, I/O priority and scheduling policy of the zygote
    (which every later worker copies) and of the supervisor: the next session sees a fresh
    sandbox's values, in a sandbox that was cleaned, not replaced."""
    with SandboxPool() as pool:
        with sandbox.session(env=ENV, pool=pool) as a:
            fresh = json.loads(_run(a, PROCESS_VIEW).stdout)
            assert _run(a, CHANGE_WHAT_CAN_BE_PUT_BACK).result == "[4242, 4242]"
            changed = json.loads(_run(a, PROCESS_VIEW).stdout)
            for role in ("zygote", "supervisor", "worker"):
                assert changed[role] != fresh[role], role  # the change took, so the next view is a reset
        with sandbox.session(env=ENV, pool=pool) as b:
            assert pool.recycled == 1 and pool.unclean == 0 and b.data_dir == a.data_dir
            assert json.loads(_run(b, PROCESS_VIEW).stdout) == fresh


# What a process without capabilities cannot undo in itself (a lowered hard limit, a raised nice
# value, the idle scheduling policy), and how the supervisor says so ("... cannot be put back").
ONE_WAY = {
    "the zygote's hard limit": ("resource.prlimit(zygote, resource.RLIMIT_NOFILE, (100, 100))",
                                "the zygote's RLIMIT_NOFILE is [100, 100], not"),
    "the zygote's nice value": ("os.setpriority(os.PRIO_PROCESS, zygote, 19)", "the zygote's nice value is 19"),
    "the zygote's scheduling policy": ("os.sched_setscheduler(zygote, os.SCHED_IDLE, os.sched_param(0))",
                                       "the zygote's scheduling policy is [%d, 0]" % os.SCHED_IDLE),
    "the supervisor's nice value": ("os.setpriority(os.PRIO_PROCESS, 1, 19)", "the supervisor's nice value is 19"),
    "the supervisor's hard limit": ("resource.prlimit(1, resource.RLIMIT_NOFILE, (100, 100))",
                                    "the supervisor's RLIMIT_NOFILE is [100, 100]"),
    # soft limits it could put back, but too low for it to take the next worker's fds at all
    "the zygote's soft limits on files and memory": (
        "for r, soft in ((resource.RLIMIT_NOFILE, 3), (resource.RLIMIT_AS, 1 << 20)):\n"
        "    resource.prlimit(zygote, r, (soft, resource.prlimit(zygote, r)[1]))",
        "the zygote received 0 of a worker's 4 fds"),
}


@pytest.mark.parametrize("change", sorted(ONE_WAY))
def test_a_change_the_sandbox_cannot_put_back_gets_the_next_session_a_new_sandbox(sandbox, change):
    code, reason = ONE_WAY[change]
    with SandboxPool() as pool:
        with sandbox.session(env=ENV, pool=pool) as a:
            fresh = json.loads(_run(a, PROCESS_VIEW).stdout)
            _run(a, "import os, resource\nzygote = [int(p) for p in os.listdir('/proc') "
                    "if p.isdigit() and int(p) not in (1, os.getpid())][0]\n" + code)
            assert json.loads(_run(a, PROCESS_VIEW).stdout) != fresh  # the change took
        with sandbox.session(env=ENV, pool=pool) as b:
            # the sandbox could not be proved clean: it was stopped and another started
            assert pool.unclean == 1 and pool.recycled == 0 and b.data_dir != a.data_dir
            assert reason in pool.last_unclean
            assert "cannot be put back" in pool.last_unclean or "fds" in reason
            assert json.loads(_run(b, PROCESS_VIEW).stdout) == fresh
