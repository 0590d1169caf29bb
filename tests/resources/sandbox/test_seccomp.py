"""seccomp.py: the BPF filter the local sandbox loads through bwrap's --seccomp.

Each denied call is made from a cell (and fails with EPERM), the same calls are made
on the host with and without the filter (so the EPERM is the filter's), and the
program itself is checked: its jumps, its architecture check, and the fd bwrap reads.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys

import pytest

from cataloger_dagster.resources.sandbox import SandboxError, SandboxResource, seccomp


def _sandbox(**overrides) -> SandboxResource:
    settings = dict(backend="local", timeout_s=20, memory_mb=512, pids=64, tmp_size_mb=16)
    return SandboxResource(**{**settings, **overrides})


def _run(runtime, code: str, timeout_s: float = 30):
    r = runtime.execute(code, timeout_s=timeout_s)
    assert r.ok, r.error
    return json.loads(r.stdout)


# ---------------------------------------------------------------- every denied call, in a cell and on the host
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
        "io_uring_setup": (0, 0), "io_uring_enter": (-1, 0, 0, 0, 0, 0), "io_uring_register": (-1, 0, 0, 0),
        "mq_open": (0, 0, 0, 0)}


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


# ---------------------------------------------------------------- clone's namespace flags
# from linux/sched.h, not from the module: each flag the filter must refuse on clone
NAMESPACE_FLAGS = {"NEWNS": 0x00020000, "NEWCGROUP": 0x02000000, "NEWUTS": 0x04000000, "NEWIPC": 0x08000000,
                   "NEWUSER": 0x10000000, "NEWPID": 0x20000000, "NEWNET": 0x40000000}
CLONES = """
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}
for name, flag in %r.items():
    ctypes.set_errno(0)
    pid = libc.syscall(ctypes.c_long(%d), ctypes.c_long(flag | 17), 0, 0, 0, 0)  # | SIGCHLD
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
    out[name] = "made" if pid > 0 else errno.errorcode[ctypes.get_errno()]
print(json.dumps(out))
"""


def _clones() -> str:
    return CLONES % (NAMESPACE_FLAGS, seccomp.ARCHES[os.uname().machine][1]["clone"])


def test_every_namespace_flag_of_clone_is_refused_in_a_cell(local_sandbox):
    with _sandbox().session() as rt:
        out = _run(rt, _clones())
    assert out == {name: "EPERM" for name in NAMESPACE_FLAGS}


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may make every kind of namespace without the filter")
def test_on_the_host_the_same_clones_succeed_without_the_filter():
    # so that the EPERM above is the filter's, flag by flag (a constant missing a bit would show here)
    plain = subprocess.run([sys.executable, "-c", _clones()], capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout) == {name: "made" for name in NAMESPACE_FLAGS}
    code = LOAD_FILTER % seccomp.filter_program().hex() + _clones()
    filtered = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert filtered.returncode == 0, filtered.stderr
    assert json.loads(filtered.stdout) == {name: "EPERM" for name in NAMESPACE_FLAGS}


# ---------------------------------------------------------------- the program itself
# Kernel constants, written out here rather than taken from the module under test.
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
ALLOW, KILL_PROCESS = 0x7FFF0000, 0x80000000
EPERM, ENOSYS = 0x00050000 | 1, 0x00050000 | 38
NR = {  # asm/unistd_64.h and asm-generic/unistd.h
    "x86_64": {"read": 0, "openat": 257, "mount": 165, "unshare": 272, "ptrace": 101, "clone": 56,
               "clone3": 435, "io_uring_setup": 425},
    "aarch64": {"read": 63, "openat": 56, "mount": 40, "unshare": 97, "ptrace": 117, "clone": 220,
                "clone3": 435, "io_uring_setup": 425},
}


def _evaluate(program: bytes, arch: int, nr: int, arg0: int = 0) -> int:
    """What the classic-BPF program returns for one call (struct seccomp_data, little-endian)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    insns = [struct.unpack_from("<HBBI", program, i) for i in range(0, len(program), 8)]
    pc, acc, steps = 0, 0, 0
    while True:
        steps += 1
        assert steps <= len(insns), "a classic BPF program cannot loop"
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        elif code in (0x15, 0x35, 0x45):  # JEQ, JGE, JSET with K
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if taken else jf)
        else:
            raise AssertionError(f"instruction {code:#x} at {pc}")
        assert 0 <= pc < len(insns), "a jump past the end of the program"


@pytest.mark.parametrize("machine", sorted(AUDIT_ARCH))
def test_the_program_answers_each_call_as_intended(machine):
    program = seccomp.filter_program(machine)
    arch, nr = AUDIT_ARCH[machine], NR[machine]
    assert len(program) % 8 == 0 and len(program) // 8 < 256  # sock_fprog.len; jumps are 8 bits

    def verdict(name, arg0=0, on=arch):
        return _evaluate(program, on, nr[name], arg0)

    assert verdict("read") == ALLOW and verdict("openat") == ALLOW
    for name in ("mount", "unshare", "ptrace", "io_uring_setup"):
        assert verdict(name) == EPERM, name
    assert verdict("clone3") == ENOSYS  # so that libc falls back to clone, whose flags are visible
    assert verdict("clone", 17) == ALLOW  # fork
    assert verdict("clone", 0x003D0F00) == ALLOW  # what pthread_create passes
    for flag, bit in NAMESPACE_FLAGS.items():
        assert verdict("clone", 0x003D0F00 | bit) == EPERM, flag
    # another architecture's numbers mean other calls: the process is killed, not asked
    other = next(a for m, a in AUDIT_ARCH.items() if m != machine)
    assert verdict("read", on=other) == KILL_PROCESS
    if machine == "x86_64":  # x32 calls: the x86_64 arch, bit 30 set in the number
        assert _evaluate(program, arch, 0x40000000 | nr["read"]) == EPERM


def test_a_machine_it_does_not_know_is_refused():
    with pytest.raises(SandboxError, match=r"x86_64 and aarch64, not riscv64.*backend='docker'"):
        seccomp.filter_program("riscv64")


def test_a_filter_for_another_architecture_kills_the_process_that_loads_it():
    machine = os.uname().machine
    other = next(m for m in AUDIT_ARCH if m != machine)
    code = LOAD_FILTER % seccomp.filter_program(other).hex() + "print('survived')\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == -signal.SIGSYS and "survived" not in out.stdout, out


def test_the_fd_for_bwrap_holds_the_program_from_its_start_and_closes_on_exec():
    import fcntl

    fd = seccomp.filter_fd()
    try:
        program = seccomp.filter_program()
        assert os.read(fd, len(program) + 1) == program
        assert fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC  # only the bwrap it is passed to sees it
    finally:
        os.close(fd)
