"""The host channel, on both backends: out of a cell's reach, and no frame can make the host raise."""

from __future__ import annotations

import json

import pytest

REACH = """
import ctypes, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
me = os.getpid()
pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
listed, opened, traced = [], [], []
for pid in pids:
    if pid == me:
        continue
    try:
        listed.append((pid, os.listdir('/proc/%d/fd' % pid)))
    except OSError:
        pass
    for fd in range(8):
        for mode in (os.O_WRONLY, os.O_RDONLY):
            try:
                os.close(os.open('/proc/%d/fd/%d' % (pid, fd), mode))
                opened.append((pid, fd, mode))
            except OSError:
                pass
    for name in ('mem', 'environ'):
        try:
            os.close(os.open('/proc/%d/%s' % (pid, name), os.O_RDONLY))
            opened.append((pid, name))
        except OSError:
            pass
for pid in pids:
    if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
        traced.append(pid)
        libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
# and from a process of the cell's own, which is not the worker
child = subprocess.run([sys.executable, '-c',
    "import ctypes, os\\nlibc = ctypes.CDLL(None)\\nhit = []\\n"
    "try:\\n    os.close(os.open('/proc/1/fd/1', os.O_WRONLY)); hit.append('fd')\\nexcept OSError:\\n    pass\\n"
    "if libc.ptrace(16, 1, None, None) == 0:\\n    hit.append('ptrace')\\nprint(hit)"],
    capture_output=True, text=True).stdout.strip()
(pids, listed, opened, traced, child)
"""


def test_the_host_channel_is_out_of_reach(runtime):
    """Neither /proc/<pid>/fd nor ptrace reaches the supervisor, which is PID 1 on both backends."""
    assert runtime.execute("x = 'still here'").ok
    r = runtime.execute(REACH, timeout_s=30)
    assert r.ok, r.error
    pids, listed, opened, traced, child = eval(r.result)
    assert runtime.supervisor_pid == 1 and 1 in pids
    assert (listed, opened, traced, child) == ([], [], [], "[]"), r.result
    assert runtime.execute("print(x)").stdout == "still here\n"


# A cell that finds the result pipe and the nonce in its interpreter's frames,
# and writes its own frame on them, with PAYLOAD as the length and body.
FORGE = """
import os, sys
frame = sys._getframe()
while 'res_fd' not in frame.f_locals:
    frame = frame.f_back
res_fd, nonce = frame.f_locals['res_fd'], frame.f_locals['req']['nonce']
os.write(res_fd, b'\\x00\\x1eSBXRES' + nonce.encode() + PAYLOAD)
"""


def _sized(body: bytes) -> bytes:
    return b"%08x" % len(body) + body


MALFORMED = {
    "garbage JSON": _sized(b"{'ok': True"),
    "bad UTF-8": _sized(b'{"ok": "\xff\xfe"}'),
    "nested past the recursion limit": _sized(b"[" * 200_000 + b"]" * 200_000),
    "not an object": _sized(b"[true, null]"),
    "ok not a boolean": _sized(json.dumps({"ok": "yes"}).encode()),
    "result not a string": _sized(json.dumps({"ok": True, "result": {"a": 1}}).encode()),
    "forged error with wrong types": _sized(json.dumps(
        {"ok": False, "error": {"type": 7, "message": ["x"], "traceback": None}}).encode()),
    "error without a type": _sized(json.dumps({"ok": False, "error": {"message": "m"}}).encode()),
    "a host message instead": _sized(json.dumps({"op": "ready", "pid": 1, "worker": 2}).encode()),
    "huge length": b"ffffffff" + b"{}",
    "length not hex": b"zz" + b"000010" + b"{}",
}


@pytest.mark.parametrize("payload", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_forged_result_is_a_structured_error(runtime, payload):
    assert runtime.execute("kept = 'yes'").ok
    r = runtime.execute("PAYLOAD = %r\n%s" % (payload, FORGE), timeout_s=20)
    assert not r.ok and r.error.type == "ProtocolError" and not r.restarted, r
    assert "malformed" in r.error.message
    after = runtime.execute("print(kept)")
    assert after.ok and after.stdout == "yes\n" and not after.restarted


def test_a_cell_can_forge_only_its_own_result_and_only_its_fields(runtime):
    # What a cell may write is checked and capped: `dead`, a negative count and
    # an oversized result do not reach the host as such.
    body = json.dumps({"ok": True, "result": "F" * 200_000, "dead": True, "new_threads": -3,
                       "dropped_O": "many", "error": None}).encode()
    r = runtime.execute("PAYLOAD = %r\n%s" % (_sized(body), FORGE))
    assert r.ok and r.result == "F" * 65536 and not r.restarted, r.error
    assert runtime.execute("'next'").result == "'next'"
