"""The program that runs inside the sandbox. Standard library only, Python >= 3.8.

It is never imported by the host: the host sends this file's source through the
bootstrap in ``protocol.BOOT`` and it runs in one of two roles.

* ``supervisor`` holds the host channel (its fds 0 and 1) and is the sandbox's
  PID 1 on both backends (bwrap ``--as-pid-1``; docker without its init).  It
  makes itself non-dumpable before it starts the worker, so a cell, which runs
  with the same uid but no capabilities, can neither open ``/proc/1/fd/*`` nor
  ptrace it, and as a namespace's init it ignores the signals a cell sends.  The
  worker gets fresh pipes and no copy of the channel.  The supervisor forwards
  the worker's stdout/stderr (capped, tagged with the call's nonce), applies the
  interrupt the host asks for, kills the processes a cell left and reaps orphans.
* ``worker`` is the persistent interpreter, and the cells run in it: a cell can
  read the result pipe and the current nonce from the worker's frames.  So the
  result pipe is not trusted: the supervisor takes the first frame carrying the
  current call's nonce as that call's result, checks its shape and types, caps
  its fields and passes on only those; anything malformed becomes a
  ``ProtocolError`` result.  What holds: a cell can fabricate *its own* result
  and, as it controls the interpreter, change what later cells of its session
  do; it cannot reach the host channel, affect another session, or make the
  host raise.  Threads a cell leaves are sent ``SystemExit`` at its end and
  whatever they write through ``sys.stdout``/``sys.stderr`` afterwards is
  dropped; a thread that swallows ``SystemExit`` and writes to fd 1 itself (or
  to ``sys.__stdout__``) can still reach a later cell's output in its session.
* ``zygote`` (only in a sandbox a pool reuses, and only as PID 1's child in a
  pid namespace) imports the warm-up's modules once, runs its query, and from
  then on only forks: each worker is a copy of it made before any cell or any
  table's data reached it, so the copy costs milliseconds, not an interpreter's
  start.  It is non-dumpable and ignores every signal it may, so a cell can stop
  or kill it (the next session then gets a new sandbox) but never read or change
  it.  Between sessions (``recycle``) the supervisor kills every process but the
  zygote, empties every writable mount, removes the SysV IPC objects, and checks
  that nothing the last session made is left before it forks the next worker;
  what it cannot clean, it says, and the host starts a new sandbox instead.
  A cell shares the zygote's and the supervisor's uid, so it can set their
  rlimits, nice value, CPU affinity, I/O priority and scheduling policy: each
  records its per-process attributes as it begins and, between sessions, puts
  them back and proves them back (``restore_attributes``), the zygote before
  every fork; what a process without capabilities cannot undo (a lowered hard
  limit, a raised nice value) makes the sandbox unclean.
"""

import ast
import base64
import json
import os
import select
import signal
import stat
import struct
import sys
import time
import traceback

MAGIC = b"\x00\x1eSBXRES"
HEADER = struct.Struct(">IB")
CHUNK = 65536
MAX_RESULT = 16 * 1024 * 1024
# What a result may carry on to the host, whatever the worker (or a cell) wrote.
CAPS = {"result": 65536, "type": 200, "message": 8192, "traceback": 65536}


# ---------------------------------------------------------------- framing
def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def send_frame(fd, kind, payload):
    write_all(fd, HEADER.pack(len(payload), ord(kind)) + payload)


def read_exact(fd, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def read_json(fd):
    head = read_exact(fd, HEADER.size)
    if head is None:
        return None
    n, _kind = HEADER.unpack(head)
    body = read_exact(fd, n)
    return None if body is None else json.loads(body.decode())


class Capped:
    """Keeps the first ``half`` bytes (streamed on) and a tail of ``half``."""

    def __init__(self, cap):
        self.half = max(cap // 2, 1)
        self.head_sent = 0
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, data):
        """Return the part of ``data`` that still belongs to the head."""
        room = self.half - self.head_sent
        head, rest = data[:room], data[room:]
        self.head_sent += len(head)
        if rest:
            self.tail += rest
            excess = len(self.tail) - self.half
            if excess > self.half:  # trim in bulk so feeding stays O(n)
                del self.tail[:excess]
                self.dropped += excess
        return head

    def finish(self):
        excess = len(self.tail) - self.half
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess
        return bytes(self.tail), self.dropped


# ---------------------------------------------------------------- worker
def _compile_cell(code, name):
    tree = ast.parse(code, name, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    body = compile(tree, name, "exec")
    return body, (compile(last, name, "eval") if last is not None else None)


class _Gate:
    """``sys.stdout``/``sys.stderr`` for the cells: writes from a thread that may
    not speak now (one a previous cell left, the warm-up) are dropped."""

    def __init__(self, target, allowed):
        self._target = target
        self._allowed = allowed

    def write(self, data):
        if self._allowed():
            return self._target().write(data)
        return len(data)

    def writelines(self, lines):
        if self._allowed():
            self._target().writelines(lines)

    @property
    def buffer(self):
        stream = self._target()
        return _Gate(lambda: stream.buffer, self._allowed)

    def __getattr__(self, name):
        return getattr(self._target(), name)


def _restore_stdio(saved, allowed):
    # A cell may close or redirect fds 1 and 2; the next cell gets them back.
    import io

    for fd, attr in ((1, "stdout"), (2, "stderr")):
        try:
            os.dup2(saved[fd], fd)
        except OSError:
            pass
        orig = getattr(sys, "__%s__" % attr)
        if orig is None or orig.closed:
            orig = io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), write_through=True, errors="backslashreplace")
            setattr(sys, "__%s__" % attr, orig)
        setattr(sys, attr, _Gate(lambda attr=attr: getattr(sys, "__%s__" % attr), allowed))


def _stop_threads(idents):
    """Raise SystemExit in each thread; it lands when the thread next runs Python."""
    try:
        import ctypes
    except ImportError:
        return
    for ident in idents:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(SystemExit))


def worker_main(cmd_fd, res_fd, warmup=""):
    import linecache
    import threading

    _default_signals()

    main_ident = threading.get_ident()
    state = {"in_cell": False, "before": frozenset()}

    def may_write():
        ident = threading.get_ident()
        return ident == main_ident or (state["in_cell"] and ident not in state["before"])

    saved = {1: os.dup(1), 2: os.dup(2)}
    _restore_stdio(saved, may_write)
    if warmup:
        # Warm-up code (heavy imports, a first query) runs at once beside the
        # first cells, in a namespace of its own so the session script stays
        # standalone.  Its failures are the cells' to meet, not ours.
        def _warm():
            try:
                exec(compile(warmup, "<warm-up>", "exec"), {"__name__": "__warmup__"})
            except BaseException:
                pass

        threading.Thread(target=_warm, name="cataloger-warmup", daemon=True).start()

    my_pid = os.getpid()
    # The real __main__ so that pickling and multiprocessing find the cell's names.
    namespace = sys.modules["__main__"].__dict__
    for key in [k for k in namespace if not k.startswith("__")]:
        del namespace[key]  # the bootstrap's names; the exported script would lack them

    def on_sigint(signum, frame):
        # Only a running cell may be interrupted, never the loop around it.
        if state["in_cell"]:
            raise KeyboardInterrupt

    counter = 0
    while True:
        signal.signal(signal.SIGINT, on_sigint)
        req = read_json(cmd_fd)
        if os.getpid() != my_pid:  # a fork of a cell must never serve requests
            os._exit(0)
        if req is None:
            os._exit(0)
        reap_children()
        counter += 1
        name = "<cell %d>" % counter
        linecache.cache[name] = (len(req["code"]), None, req["code"].splitlines(True), name)
        # sys._current_frames also sees threads started with _thread, unlike threading.enumerate
        state["before"] = frozenset(sys._current_frames())
        reply = {"ok": True, "result": None, "error": None, "interrupted": False}
        try:
            body, last = _compile_cell(req["code"], name)
            state["in_cell"] = True
            exec(body, namespace)
            value = eval(last, namespace) if last is not None else None
            state["in_cell"] = False
            if last is not None:
                if value is not None:
                    namespace["_"] = value
                    reply["result"] = repr(value)[: req.get("repr_cap", 65536)]
        except BaseException as exc:  # the cell's own errors, SystemExit included
            state["in_cell"] = False
            if os.getpid() != my_pid:
                os._exit(0)
            reply["ok"] = False
            reply["interrupted"] = isinstance(exc, KeyboardInterrupt)
            tb = exc.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != name:
                tb = tb.tb_next  # hide the worker's own frames
            lines = traceback.format_exception(type(exc), exc, tb)
            reply["error"] = {
                "type": type(exc).__name__,
                "message": str(exc)[:8192],
                "traceback": "".join(lines)[-65536:],
            }
        if os.getpid() != my_pid:
            os._exit(0)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        left = set(sys._current_frames()) - state["before"] - {main_ident}
        reply["new_threads"] = len(left)
        _stop_threads(left)
        payload = json.dumps(reply).encode()
        try:
            write_all(res_fd, MAGIC + req["nonce"].encode() + b"%08x" % len(payload) + payload)
        except OSError:
            os._exit(70)  # the cell broke the result channel: start over
        _restore_stdio(saved, may_write)


# ---------------------------------------------------------------- supervisor
def _set_undumpable():
    """Close /proc/<pid>/fd and ptrace to the cells, or refuse to run at all."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
        if libc.prctl(3, 0, 0, 0, 0) == 0:  # PR_GET_DUMPABLE
            return
    except Exception:
        pass
    sys.stderr.write(
        "sandbox supervisor: cannot make itself non-dumpable (prctl via ctypes); "
        "refusing to run cells that could reach the host channel\n"
    )
    sys.exit(78)


def _apply_limits(limits):
    import resource

    os.setsid()  # so that a cell's killpg(0) cannot reach the supervisor
    for name, value in limits.items():
        res = getattr(resource, name, None)
        if res is None:
            continue
        try:
            resource.setrlimit(res, (value, value))
        except (ValueError, OSError):
            pass


def _rlimits(limits):
    def apply():
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except Exception:
            pass
        _apply_limits(limits)

    return apply


# ---------------------------------------------------------------- per-process attributes
# A cell runs with the zygote's and the supervisor's uid, and the kernel lets a process of the
# same uid set another's rlimits, nice value, CPU affinity, I/O priority and scheduling policy,
# all of which a fork inherits.  Each of the two records them as it begins, puts them back
# between sessions, and proves them back; what it cannot put back (a lowered hard limit, a
# raised nice value: one-way for a process without capabilities) makes the sandbox unclean.
_SYS_IOPRIO = {"x86_64": (251, 252), "aarch64": (30, 31), "i686": (289, 290)}  # (set, get)
_TIMERS = ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF")


def _ioprio(pid, value=None):
    """The I/O priority (class << 13 | level) of `pid`, or set it to `value`."""
    import ctypes

    numbers = _SYS_IOPRIO.get(os.uname().machine)
    if numbers is None:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    if value is None:
        got = libc.syscall(numbers[1], 1, pid)  # IOPRIO_WHO_PROCESS
        return None if got < 0 else got
    if libc.syscall(numbers[0], 1, pid, value) < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _status_field(pid, name):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.split()[1]
    return None


def process_attributes():
    """What this process would hand on to a fork of its own, by name (JSON-like values)."""
    import ctypes
    import hashlib
    import resource

    me = os.getpid()
    attrs = {
        name: list(resource.getrlimit(getattr(resource, name)))
        for name in sorted(dir(resource))
        if name.startswith("RLIMIT_")
    }
    attrs["nice value"] = os.getpriority(os.PRIO_PROCESS, 0)
    attrs["CPU affinity"] = sorted(os.sched_getaffinity(0))
    attrs["scheduling policy"] = [os.sched_getscheduler(0), os.sched_getparam(0).sched_priority]
    attrs["I/O priority"] = _ioprio(0)
    attrs["umask"] = _status_field(me, "Umask")
    attrs["timers"] = [list(signal.getitimer(getattr(signal, t))) for t in _TIMERS]
    with open("/proc/self/oom_score_adj") as f:
        attrs["oom_score_adj"] = int(f.read())
    attrs["personality"] = ctypes.CDLL(None).personality(0xFFFFFFFF)
    attrs["no_new_privs"] = _status_field(me, "NoNewPrivs")
    attrs["cwd"] = os.getcwd()
    # a digest: the environment may hold a secret, and a difference is said in a message to the host
    attrs["environment"] = hashlib.sha256(json.dumps(sorted(os.environ.items())).encode()).hexdigest()[:16]
    return attrs


def _put_back(name, value):
    import ctypes
    import resource

    if name.startswith("RLIMIT_"):
        resource.setrlimit(getattr(resource, name), tuple(value))
    elif name == "nice value":
        os.setpriority(os.PRIO_PROCESS, 0, value)
    elif name == "CPU affinity":
        os.sched_setaffinity(0, value)
    elif name == "scheduling policy":
        os.sched_setscheduler(0, value[0], os.sched_param(value[1]))
    elif name == "I/O priority" and value is not None:
        _ioprio(0, value)
    elif name == "umask" and value is not None:
        os.umask(int(value, 8))
    elif name == "timers":
        for timer, (delay, interval) in zip(_TIMERS, value):
            signal.setitimer(getattr(signal, timer), delay, interval)
    elif name == "oom_score_adj":
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(str(value))
    elif name == "personality":
        ctypes.CDLL(None).personality(value)
    elif name == "cwd":
        os.chdir(value)


def _try_put_back(name, value):
    try:
        _put_back(name, value)
    except (OSError, ValueError, TypeError):
        pass  # the proof says what is left


def restore_attributes(recorded, whose):
    """Put this process's attributes back as `recorded`; then the first still other, said, or None."""
    # The limits first, unread: a soft limit on open files or memory lowered far enough
    # would fail the reading of the rest.
    for name, value in recorded.items():
        if name.startswith("RLIMIT_"):
            _try_put_back(name, value)
    try:
        for name, value in process_attributes().items():
            if value != recorded.get(name):
                _try_put_back(name, recorded.get(name))
        now = process_attributes()
    except Exception as exc:
        return "%s attributes cannot be read (%s: %s)" % (whose, type(exc).__name__, exc)
    for name, value in now.items():
        if value != recorded.get(name):
            return "%s %s is %s, not %s as it began, and cannot be put back" % (
                whose,
                name,
                str(value)[:200],
                str(recorded.get(name))[:200],
            )
    return None


# ---------------------------------------------------------------- zygote
# Every signal the zygote may ignore; every worker starts with Python's defaults for them.
# (SIGPIPE and SIGXFSZ are not among them: Python itself ignores both, so that a write past
# RLIMIT_FSIZE is an OSError, not a death.)
_IGNORED = (
    "SIGINT",
    "SIGTERM",
    "SIGHUP",
    "SIGQUIT",
    "SIGUSR1",
    "SIGUSR2",
    "SIGALRM",
    "SIGTSTP",
    "SIGTTIN",
    "SIGTTOU",
    "SIGXCPU",
    "SIGVTALRM",
    "SIGPROF",
    "SIGIO",
    "SIGWINCH",
)


def _default_signals():
    """Python's own dispositions, whatever the host (a Dagster process, pytest, the zygote) ignored."""
    for name in _IGNORED:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def zygote_main(sock_fd, warmup):
    """Warm once, then fork a worker per request: ``{limits, cwd}`` with the worker's four fds."""
    import gc
    import socket

    _set_undumpable()
    for name in _IGNORED:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    if warmup:
        scope = {"__name__": "__warmup__"}
        try:
            exec(compile(warmup, "<warm-up>", "exec"), scope)
        except BaseException:
            pass
        scope.clear()  # its connection closes here: no thread of its may live on in a fork
        gc.collect()
    recorded = process_attributes()  # as the first worker gets them: the warm-up may set some
    sock = socket.socket(fileno=sock_fd)
    sock.sendall(b"up")
    while True:
        msg, fds, _flags, _addr = socket.recv_fds(sock, 65536, 4)
        if not msg:
            os._exit(0)
        problem = restore_attributes(recorded, "the zygote's")
        if problem is None and len(fds) != 4:
            problem = "the zygote received %d of a worker's 4 fds" % len(fds)
        if problem is not None:  # a cell changed it for good: no worker of it may inherit that
            for fd in fds:
                os.close(fd)
            sock.sendall(b"unclean " + problem.encode()[:1000])
            continue
        pid_r, pid_w = os.pipe()
        middle = os.fork()
        if middle == 0:
            try:
                os.close(pid_r)
                worker = os.fork()
                if worker == 0:
                    os.close(pid_w)
                    _forked_worker(sock, fds, json.loads(msg.decode()))
                os.write(pid_w, b"%d" % worker)
            finally:
                os._exit(0)  # the worker is now PID 1's child: the supervisor reaps it
        os.close(pid_w)
        for fd in fds:
            os.close(fd)
        worker = os.read(pid_r, 32)
        os.close(pid_r)
        os.waitpid(middle, 0)
        sock.sendall(worker or b"0")


def _forked_worker(sock, fds, req):
    try:
        cmd_r, res_w, out_w, err_w = fds
        sock.close()
        null = os.open("/dev/null", os.O_RDONLY)
        for src, dst in ((null, 0), (out_w, 1), (err_w, 2)):
            os.dup2(src, dst)
        for fd in [int(n) for n in os.listdir("/proc/self/fd")]:
            if fd not in (0, 1, 2, cmd_r, res_w):
                try:
                    os.close(fd)
                except OSError:
                    pass  # the listing's own fd
        import ctypes

        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE, as an exec'd worker is
        _apply_limits(req.get("limits") or {})
        os.chdir(req.get("cwd") or "/")
        worker_main(cmd_r, res_w)
    finally:
        os._exit(0)


# ---------------------------------------------------------------- between sessions
_VIRTUAL = (
    "proc",
    "sysfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "devtmpfs",
    "securityfs",
    "debugfs",
    "tracefs",
    "bpf",
    "pstore",
    "configfs",
    "fusectl",
    "hugetlbfs",
    "binfmt_misc",
)
_WIPED = ("tmpfs", "mqueue")


def writable_mounts():
    """(mount point, fs type) of each mount this process sees as read-write."""
    found = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            left, _, right = line.partition(b" - ")
            fields, fstype = left.split(), right.split()[0].decode()
            if b"rw" in fields[5].split(b","):
                point = fields[4].decode("unicode_escape").encode("latin-1")  # \040 is a space
                found.append((point, fstype))
    return found


def _wipe(path, dev, me):
    """Remove what uid `me` made below `path` (one mount: `dev`); others' entries stay."""
    try:
        st = os.lstat(path)
        if st.st_uid == me and stat.S_IMODE(st.st_mode) & 0o700 != 0o700:
            os.chmod(path, 0o700)  # a cell's own folder it shut to itself
        names = os.listdir(path)
    except FileNotFoundError:
        return
    for name in names:
        entry = os.path.join(path, name)
        st = os.lstat(entry)
        if st.st_dev != dev:
            continue  # another mount, wiped on its own
        if stat.S_ISDIR(st.st_mode):
            _wipe(entry, dev, me)
            if st.st_uid == me:
                os.rmdir(entry)
        elif st.st_uid == me:
            os.unlink(entry)


def _left_by(path, dev, me):
    """The first entry below `path` that uid `me` owns, or None."""
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            entry = os.path.join(root, name)
            st = os.lstat(entry)
            if st.st_dev == dev and st.st_uid == me:
                return entry
        dirs[:] = [d for d in dirs if os.lstat(os.path.join(root, d)).st_dev == dev]
    return None


def _remove_ipc():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    remove = {
        "shm": lambda i: libc.shmctl(i, 0, None),
        "msg": lambda i: libc.msgctl(i, 0, None),
        "sem": lambda i: libc.semctl(i, 0, 0),
    }  # IPC_RMID
    for kind, rm in remove.items():
        for ident in _ipc_ids(kind):
            rm(ident)
    for kind in remove:
        if _ipc_ids(kind):
            return "a SysV %s object could not be removed" % kind
    return None


def _ipc_ids(kind):
    with open("/proc/sysvipc/" + kind) as f:
        return [int(line.split()[1]) for line in f.readlines()[1:] if line.strip()]


def _wiped_roots():
    """(mount point, its lstat) of each read-write tmpfs or mqueue mount there is."""
    for point, fstype in writable_mounts():
        if fstype in _WIPED:
            try:
                yield point, os.lstat(point)
            except OSError:
                continue


def clean_between_sessions(roots):
    """Empty what the last session could write; the problem if anything is left, else None.

    `roots` maps each wiped mount point to its root's mode when the sandbox began."""
    me = os.getuid()
    for point, st in _wiped_roots():
        if not stat.S_ISDIR(st.st_mode):
            if st.st_uid == me:
                return "%r is a writable file mount the sandbox cannot empty" % point
            continue
        _wipe(point, st.st_dev, me)
        if st.st_uid == me:
            for attr in os.listxattr(point, follow_symlinks=False):
                os.removexattr(point, attr, follow_symlinks=False)
            if point in roots and stat.S_IMODE(st.st_mode) != roots[point]:
                os.chmod(point, roots[point])
        left = _left_by(point, st.st_dev, me)
        if left is not None:
            return "%r was left behind" % left
        if point not in roots and st.st_uid == me:
            return "%r is a writable mount that was not there at the start" % point
    for point, fstype in writable_mounts():
        if fstype not in _WIPED and fstype not in _VIRTUAL and os.access(point, os.W_OK):
            return "%r (%s) is writable and cannot be emptied" % (point, fstype)
    return _remove_ipc()


def mount_roots():
    """The mode of each writable tmpfs or mqueue root, as the sandbox began."""
    return {point: stat.S_IMODE(st.st_mode) for point, st in _wiped_roots() if stat.S_ISDIR(st.st_mode)}


def _proc_stat(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    return int(fields[1]), int(fields[2]), int(fields[3]), fields[0]  # ppid, pgrp, session, state


def _strays(worker_pid, pidns, spared=()):
    me = os.getpid()
    keep = {1, me, worker_pid, *spared}
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in keep:
            continue
        pid = int(entry)
        if pidns:
            found.append(pid)
            continue
        st = _proc_stat(pid)
        # Without a pid namespace only the worker's session is ours to kill.
        if st and (st[2] == worker_pid or st[1] == worker_pid):
            found.append(pid)
    return found


def kill_strays(worker_pid, pidns, deadline=2.0, spared=()):
    """Stop then kill everything a cell left behind (fork bombs included), but `spared`."""
    end = time.monotonic() + deadline
    seen = set()
    while time.monotonic() < end:
        fresh = [p for p in _strays(worker_pid, pidns, spared) if p not in seen]
        if not fresh:
            break
        for pid in fresh:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
            seen.add(pid)
    for pid in seen:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid in _strays(worker_pid, pidns, spared):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    # Until the killed are gone they still hold their slots in the pids cgroup, and
    # the next cell could not start a process.  The worker's own dead children stay
    # zombies until it reaps them, before its next cell.
    settle = time.monotonic() + deadline
    while True:
        reap(worker_pid, spared)
        alive = [p for p in _strays(worker_pid, pidns, spared) if not _zombie_of(p, worker_pid)]
        if not alive or time.monotonic() >= settle:
            break
        time.sleep(0.01)


def _zombie_of(pid, parent):
    st = _proc_stat(pid)
    return st is None or (st[3] == b"Z" and st[0] == parent)  # None: gone


def reap_children():
    """The worker collects its exited children (a cell's killed processes) before a cell."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def reap(keep, spared=()):
    """Collect exited children (as PID 1, orphans too), leaving ``keep``'s status to its waiter
    (and the zygote's, among `spared`, to the supervisor)."""
    while True:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if info is None or info.si_pid == keep or info.si_pid in spared:
            return
        try:
            os.waitpid(info.si_pid, 0)
        except ChildProcessError:
            pass


def _malformed(why):
    return {
        "ok": False,
        "result": None,
        "interrupted": False,
        "new_threads": 0,
        "error": {
            "type": "ProtocolError",
            "traceback": "",
            "message": "the cell's result frame was malformed (%s): only code in the cell can write one" % why,
        },
    }


def checked_reply(reply):
    """The worker's reply with the types the host expects, capped, or a ProtocolError."""
    if not isinstance(reply, dict):
        return _malformed("not a JSON object")
    ok, result, error = reply.get("ok"), reply.get("result"), reply.get("error")
    if not isinstance(ok, bool):
        return _malformed("'ok' is not a boolean")
    if result is not None and not isinstance(result, str):
        return _malformed("'result' is not a string")
    if error is not None:
        fields = ("type", "message", "traceback")
        if (
            not isinstance(error, dict)
            or "type" not in error
            or "message" not in error
            or not all(isinstance(error.get(k, ""), str) for k in fields)
        ):
            return _malformed("'error' is not {type, message, traceback} strings")
        error = {k: error.get(k, "")[: CAPS[k]] for k in fields}
    threads = reply.get("new_threads")
    return {
        "ok": ok,
        "result": None if result is None else result[: CAPS["result"]],
        "error": error,
        "interrupted": reply.get("interrupted") is True,
        "new_threads": threads if type(threads) is int and threads >= 0 else 0,
    }


class _Forked:
    """A worker the zygote forked, reparented to us (PID 1): what the supervisor needs of a Popen."""

    def __init__(self, pid):
        self.pid = pid
        self.returncode = None

    def poll(self, flags=os.WNOHANG):
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:  # reaped already, as an orphan
                pid, status = self.pid, signal.SIGKILL
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self):
        return self.poll(0)

    def kill(self):
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass


ZYGOTE_TIMEOUT_S = 60.0


class Unclean(OSError):
    """What a cell changed in the sandbox that cannot be put back; the message says what."""


class Supervisor:
    def __init__(self, config, source):
        self.cfg = config
        self.source = source
        self.current = None  # nonce of the call in flight
        self.res_buf = bytearray()
        self.streams = {}
        self.zygote = None  # (Popen, socket) while it lives
        self.roots = {}
        self.attributes = process_attributes()  # its own, as it began: put back between sessions

    def spared(self):
        return (self.zygote[0].pid,) if self.zygote is not None else ()

    def start_zygote(self):
        """The zygote, if this sandbox may be reused and can fork its workers; else None."""
        import socket
        import subprocess

        if not (self.cfg.get("zygote") and self.cfg.get("pidns") and os.getpid() == 1 and hasattr(socket, "send_fds")):
            return
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        src_r, src_w = os.pipe()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-u",
                "-c",
                self.cfg["boot"],
                str(src_r),
                "zygote",
                str(theirs.fileno()),
                base64.b64encode((self.cfg.get("warmup") or "").encode()).decode(),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            pass_fds=(src_r, theirs.fileno()),
            preexec_fn=os.setsid,
            cwd=self.cfg.get("cwd") or None,
        )
        os.close(src_r)
        theirs.close()
        write_all(src_w, b"%d\n" % len(self.source) + self.source)
        os.close(src_w)
        mine.settimeout(ZYGOTE_TIMEOUT_S)
        try:
            up = mine.recv(16) == b"up"
        except OSError:
            up = False
        if not up:
            proc.kill()
            proc.wait()
            mine.close()
            return
        self.zygote = (proc, mine)
        self.roots = mount_roots()

    def stop_zygote(self):
        proc, sock = self.zygote
        self.zygote = None
        sock.close()
        proc.kill()
        proc.wait()

    def zygote_alive(self):
        if self.zygote is not None and self.zygote[0].poll() is not None:
            self.zygote[1].close()
            self.zygote = None
        return self.zygote is not None

    def spawn(self):
        import subprocess

        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            if self.zygote is not None:
                self.proc = self.fork_worker((cmd_r, res_w, out_w, err_w))
            else:
                self.proc = subprocess.Popen(
                    [
                        sys.executable,
                        "-I",
                        "-u",
                        "-c",
                        self.cfg["boot"],
                        str(cmd_r),
                        "worker",
                        str(cmd_r),
                        str(res_w),
                        base64.b64encode((self.cfg.get("warmup") or "").encode()).decode(),
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=out_w,
                    stderr=err_w,
                    pass_fds=(cmd_r, res_w),
                    preexec_fn=_rlimits(self.cfg.get("rlimits", {})),
                    cwd=self.cfg.get("cwd") or None,
                )
        finally:
            for fd in (cmd_r, res_w, out_w, err_w):
                os.close(fd)
        self.cmd_w, self.res_r, self.out_r, self.err_r = cmd_w, res_r, out_r, err_r
        if self.zygote is None:
            write_all(cmd_w, b"%d\n" % len(self.source) + self.source)

    def fork_worker(self, fds):
        import socket

        proc, sock = self.zygote
        os.kill(proc.pid, signal.SIGCONT)  # a cell may have stopped it
        request = {"limits": self.cfg.get("rlimits", {}), "cwd": self.cfg.get("cwd") or "/"}
        socket.send_fds(sock, [json.dumps(request).encode()], list(fds))
        answer = sock.recv(2048)
        if answer.startswith(b"unclean "):
            raise Unclean(answer[8:].decode(errors="replace"))
        if not answer.isdigit() or int(answer) <= 1:
            raise OSError("the zygote did not fork a worker")
        return _Forked(int(answer))

    def recycle(self):
        """Make this sandbox as it was for the next session; False (and why, to the host) if not."""
        problem = None
        try:
            self.proc.kill()
            self.proc.wait()
            kill_strays(self.proc.pid, True, spared=self.spared())
            for fd in (self.cmd_w, self.res_r, self.out_r, self.err_r):
                os.close(fd)
            if not self.zygote_alive():
                problem = "its zygote is gone"
            else:
                problem = (
                    restore_attributes(self.attributes, "the supervisor's")
                    or clean_between_sessions(self.roots)
                    or self.survivors()
                )
            if problem is None:
                self.spawn()  # the zygote puts back and proves its own attributes first
        except Unclean as exc:
            problem = str(exc)
        except Exception as exc:
            problem = "%s: %s" % (type(exc).__name__, exc)
        if problem is not None:
            self.reply({"op": "unclean", "message": problem[:2000]})
            return False
        self.res_buf.clear()
        self.streams = {}
        self.reply({"op": "ready", "pid": os.getpid(), "worker": self.proc.pid, "recyclable": True})
        return True

    def survivors(self):
        keep = {os.getpid(), *self.spared()}
        left = [e for e in os.listdir("/proc") if e.isdigit() and int(e) not in keep]
        return "process %s outlived its session" % left[0] if left else None

    def emit(self, kind, payload):
        send_frame(1, kind, payload)

    def reply(self, msg):
        self.emit("J", json.dumps(msg).encode())

    def forward(self, fd, kind):
        try:
            data = os.read(fd, CHUNK)
        except OSError:
            data = b""
        if not data:
            return False
        if self.current is not None:
            head = self.streams[kind].feed(data)
            if head:
                self.emit(kind, self.current.encode() + head)
        return True

    def drain(self, fd, kind):
        os.set_blocking(fd, False)
        try:
            while True:
                try:
                    if not self.forward(fd, kind):
                        break
                except BlockingIOError:
                    break
        finally:
            os.set_blocking(fd, True)

    def scan_result(self):
        """The first ``MAGIC nonce len payload`` of the current call, checked; bytes before it are skipped.

        Only code in the worker knows the nonce, so whatever follows it is this
        call's result, well formed or not: a cell that forges one ends its own call.
        """
        marker = MAGIC + self.current.encode()
        buf = self.res_buf
        at = buf.find(marker)
        if at < 0:
            keep = len(marker) - 1  # a marker split across reads
            if len(buf) > keep:
                del buf[:-keep]
            return None
        del buf[:at]
        start = len(marker)
        if len(buf) < start + 8:
            return None
        size = bytes(buf[start : start + 8])
        if not all(c in b"0123456789abcdef" for c in size):
            return _malformed("its length is not 8 hex digits")
        n = int(size, 16)
        if n > MAX_RESULT:
            return _malformed("%d bytes, more than %d" % (n, MAX_RESULT))
        if len(buf) < start + 8 + n:
            return None
        try:
            reply = json.loads(bytes(buf[start + 8 : start + 8 + n]).decode())
        except Exception as exc:  # bad UTF-8, bad JSON, or nested past the recursion limit
            return _malformed("not JSON: %s" % type(exc).__name__)
        return checked_reply(reply)

    def worker_death(self):
        code = self.proc.wait()  # Popen keeps the status if poll() has reaped it already
        if code < 0:
            sig = -code
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = str(sig)
            if sig == signal.SIGKILL:
                return "MemoryError", "the interpreter was killed by SIGKILL (most likely out of memory)"
            return "InterpreterDied", "the interpreter was killed by signal %s" % name
        return "InterpreterDied", "the interpreter exited with code %d" % code

    def finish_call(self, reply):
        self.drain(self.out_r, "O")
        self.drain(self.err_r, "E")
        for kind, tail_kind in (("O", "P"), ("E", "Q")):
            tail, dropped = self.streams[kind].finish()
            reply["dropped_" + kind] = dropped
            if tail:
                self.emit(tail_kind, self.current.encode() + tail)
        if self.proc.poll() is None:
            kill_strays(self.proc.pid, self.cfg.get("pidns", False), spared=self.spared())
        reply["op"] = "result"
        reply["nonce"] = self.current
        self.current = None
        self.res_buf.clear()
        self.reply(reply)

    def run(self):
        _set_undumpable()  # before the worker exists: no cell ever sees us dumpable
        self.start_zygote()
        try:
            self.spawn()
        except OSError:
            if self.zygote is None:
                raise
            self.stop_zygote()  # it did not fork: a worker of its own, and a sandbox not to reuse
            self.spawn()
        self.reply({"op": "ready", "pid": os.getpid(), "worker": self.proc.pid, "recyclable": self.zygote is not None})
        cap = int(self.cfg.get("cap", 1 << 20))
        while True:
            fds = [0, self.res_r, self.out_r, self.err_r]
            ready, _, _ = select.select(fds, [], [], 1.0)
            self.zygote_alive()
            reap(self.proc.pid, self.spared())
            if 0 in ready:
                msg = read_json(0)
                if msg is None or msg.get("op") == "shutdown":
                    return
                if msg["op"] == "recycle" and self.current is None:
                    if not self.recycle():
                        return
                    continue
                if msg["op"] == "exec" and self.current is None:
                    self.drain(self.out_r, None)  # output between calls is nobody's
                    self.drain(self.err_r, None)
                    self.current = msg["nonce"]
                    self.streams = {"O": Capped(cap), "E": Capped(cap)}
                    body = json.dumps({"nonce": msg["nonce"], "code": msg["code"]}).encode()
                    write_all(self.cmd_w, HEADER.pack(len(body), ord("J")) + body)
                elif msg["op"] == "interrupt" and self.current == msg.get("nonce"):
                    try:
                        os.kill(self.proc.pid, signal.SIGINT)
                    except OSError:
                        pass
            if self.out_r in ready:
                self.forward(self.out_r, "O")
            if self.err_r in ready:
                self.forward(self.err_r, "E")
            if self.res_r in ready:
                try:
                    data = os.read(self.res_r, CHUNK)
                except OSError:
                    data = b""
                if not data:  # the worker is gone (or closed its channel)
                    try:
                        self.proc.kill()
                    except OSError:
                        pass
                    etype, message = self.worker_death()
                    if self.current is not None:
                        self.finish_call(
                            {
                                "ok": False,
                                "result": None,
                                "dead": True,
                                "error": {"type": etype, "message": message, "traceback": ""},
                            }
                        )
                    self.reply({"op": "dead", "message": message})
                    kill_strays(-1, self.cfg.get("pidns", False))  # the zygote too: the sandbox ends
                    return
                if self.current is not None:
                    self.res_buf += data
                    reply = self.scan_result()
                    if reply is not None:
                        self.finish_call(reply)


def main():
    args = sys.argv[1:]
    source = _SOURCE  # noqa: F821  (the bootstrap (protocol.BOOT) puts this file's text in its globals)
    if "worker" in args:
        i = args.index("worker")
        warmup = base64.b64decode(args[i + 3]).decode() if len(args) > i + 3 else ""
        worker_main(int(args[i + 1]), int(args[i + 2]), warmup)
        return
    if "zygote" in args:
        i = args.index("zygote")
        zygote_main(int(args[i + 1]), base64.b64decode(args[i + 2]).decode())
        return
    config = read_json(0)
    try:
        Supervisor(config, source).run()
    except BrokenPipeError:
        pass
