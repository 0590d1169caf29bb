"""The seccomp filter of the local sandbox, as the classic BPF program bwrap's --seccomp loads.

Assembled here rather than with libseccomp: the program is a dozen comparisons, the
venv would otherwise need a C library's Python binding, and this way it is built once
per process in microseconds.  tests/resources/sandbox/test_seccomp.py runs
every denied call from a cell and checks that it fails with EPERM.
"""

from __future__ import annotations

import errno
import functools
import os
import struct

from .base import SandboxError

# What a cell never needs and what would let it leave or widen its sandbox: mounts
# (old and new API), namespaces, tracing other processes, the kernel keyring, BPF,
# perf, io_uring (whose operations seccomp cannot see), and POSIX message queues (they
# would outlive a session in a reused sandbox, where nothing mounted lists them).
DENIED = (
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "mq_open",
)

# AUDIT_ARCH_* and syscall numbers (asm/unistd_64.h; asm-generic/unistd.h for aarch64)
ARCHES = {
    "x86_64": (
        0xC000003E,
        {
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "unshare": 272,
            "setns": 308,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "bpf": 321,
            "perf_event_open": 298,
            "clone": 56,
            "mq_open": 240,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "chroot": 51,
            "unshare": 97,
            "setns": 268,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "bpf": 280,
            "perf_event_open": 241,
            "clone": 220,
            "mq_open": 180,
        },
    ),
}
COMMON = {
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "clone3": 435,
}
X32_BIT = 0x40000000  # x32 calls carry the x86_64 arch with other numbers: deny them all
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NAMESPACES = 0x7E020000

RET_KILL_PROCESS, RET_ERRNO, RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
OFF_NR, OFF_ARCH, OFF_ARG0_LOW = 0, 4, 16  # struct seccomp_data, little-endian


@functools.lru_cache(maxsize=None)
def filter_program(machine: str = "") -> bytes:
    """The compiled filter for `machine` (default: this one's), as struct sock_filter[]."""
    machine = machine or os.uname().machine
    if machine not in ARCHES:
        raise SandboxError(
            f"the local sandbox's seccomp filter knows x86_64 and aarch64, not {machine}: "
            "use backend='docker' on this machine"
        )
    arch, numbers = ARCHES[machine]
    numbers = {**COMMON, **numbers}
    # (code, true-label, false-label, k); labels are resolved to relative jumps below
    prog: list[tuple[int, str | None, str | None, int]] = [
        (LD_W_ABS, None, None, OFF_ARCH),
        (JEQ_K, None, "kill", arch),
        (LD_W_ABS, None, None, OFF_NR),
    ]
    if machine == "x86_64":
        prog.append((JGE_K, "deny", None, X32_BIT))
    prog += [(JEQ_K, "deny", None, numbers[name]) for name in DENIED]
    # clone3 passes its flags in memory seccomp cannot read: ENOSYS makes libc use clone
    prog += [
        (JEQ_K, "nosys", None, numbers["clone3"]),
        (JEQ_K, None, "allow", numbers["clone"]),
        (LD_W_ABS, None, None, OFF_ARG0_LOW),
        (JSET_K, "deny", "allow", CLONE_NAMESPACES),
    ]
    returns = {
        "allow": RET_ALLOW,
        "deny": RET_ERRNO | errno.EPERM,
        "nosys": RET_ERRNO | errno.ENOSYS,
        "kill": RET_KILL_PROCESS,
    }
    at = {label: len(prog) + i for i, label in enumerate(returns)}
    out = bytearray()
    for i, (code, jt, jf, k) in enumerate(prog):
        jump = [0 if label is None else at[label] - i - 1 for label in (jt, jf)]
        out += struct.pack("<HBBI", code, jump[0], jump[1], k)
    for value in returns.values():
        out += struct.pack("<HBBI", RET_K, 0, 0, value)
    return bytes(out)


def filter_fd() -> int:
    """A readable fd holding the filter, for bwrap's ``--seccomp FD`` (the caller closes it)."""
    fd = os.memfd_create("cataloger-seccomp", os.MFD_CLOEXEC)
    os.write(fd, filter_program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
