"""Output caps, time limits and crashes, on both backends: each is the supervisor and the host's
runtime together (the cap on both sides, the interrupt sent and applied, the death reported and
restarted from).  What is one module's alone is in test_base.py and test_supervisor.py."""

from __future__ import annotations

import time


def test_output_cap_keeps_head_and_tail(sandbox, data_dir):
    small = sandbox.model_copy(update={"output_cap_bytes": 64 * 1024})
    with small.session(str(data_dir)) as rt:
        r = rt.execute("import sys\nprint('HEAD')\nfor _ in range(1024):\n    sys.stdout.write('x' * (1 << 20))\nprint('TAIL')",
                       timeout_s=60)
        assert r.ok and r.truncated
        assert r.stdout.startswith("HEAD") and r.stdout.rstrip().endswith("TAIL")
        assert len(r.stdout.encode()) < 80 * 1024
        r = rt.execute("import sys\nsys.stderr.write('y' * 300000)")
        assert r.truncated and len(r.stderr) < 80 * 1024 and "truncated" in r.stderr
        r = rt.execute("import os\nos.write(1, b'ok \\xff\\xfe end')")
        assert r.ok and r.stdout.startswith("ok ") and r.stdout.endswith(" end") and not r.truncated


def test_interrupt_keeps_state(runtime):
    runtime.execute("kept = 'yes'")
    t0 = time.monotonic()
    r = runtime.execute("while True:\n    pass", timeout_s=1)
    assert r.timed_out and not r.restarted and r.error.type == "TimeoutError"
    assert time.monotonic() - t0 < 2.0  # limit + 1 s
    assert runtime.execute("print(kept)").stdout == "yes\n"


def test_crashes_give_structured_errors_and_restart(runtime):
    runtime.execute("state = 'back'")
    for code, etype in [("import os\nos._exit(3)", "InterpreterDied"),
                        ("import ctypes\nctypes.string_at(0)", "InterpreterDied")]:
        r = runtime.execute(code)
        assert not r.ok and r.restarted and r.error.type == etype, r
        assert runtime.execute("print(state)").stdout == "back\n"
    # Recursion in C past the stack: a segfault, not a RecursionError.
    r = runtime.execute("import sys\nsys.setrecursionlimit(10**8)\nx = []\nfor _ in range(10**6):\n    x = [x]\nrepr(x)")
    assert not r.ok and r.restarted and r.error.type == "InterpreterDied", r
    assert runtime.execute("print(state)").stdout == "back\n"
