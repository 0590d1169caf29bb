"""Persistence, the session script, output caps and time limits, on both backends."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from cataloger_dagster.resources.sandbox import SandboxResource


def test_state_survives_across_cells(runtime):
    assert runtime.execute("x = 42").ok
    r = runtime.execute("print(x)")
    assert r.ok and r.stdout == "42\n"
    assert runtime.execute("import math\ndef f(v):\n    return math.sqrt(v) + x").ok
    r = runtime.execute("f(16)")
    assert r.result == "46.0" and r.stdout == ""


def test_exception_reports_and_keeps_state(runtime):
    runtime.execute("y = [1, 2]")
    r = runtime.execute("z = 1\ny[5]")
    assert not r.ok and r.error.type == "IndexError"
    assert "list index out of range" in r.error.message
    assert "<cell 2>" in r.error.traceback and "y[5]" in r.error.traceback
    r = runtime.execute("print(y, z)")
    assert r.ok and r.stdout == "[1, 2] 1\n"


def test_environment_is_env_plus_allowlist(runtime):
    r = runtime.execute("import os\nsorted(os.environ)")
    names = eval(r.result)
    assert "DB_CONNECTION_STRING" in names
    assert set(names) <= {"DB_CONNECTION_STRING", "PATH", "HOME", "LANG", "LC_ALL", "PYTHONUNBUFFERED",
                          "PYTHONDONTWRITEBYTECODE", "MPLCONFIGDIR", "TMPDIR", "PWD", "HOSTNAME"}


def test_session_script_runs_standalone(runtime, tmp_path):
    cells = ["import os\nrows = open('/data/table.csv').read().splitlines()",
             "print(len(rows), os.environ['DB_CONNECTION_STRING'])",
             "undefined_name + 1",
             "def total(xs):\n    return sum(int(r.split(',')[0]) for r in xs[1:])",
             "print('total', total(rows))"]
    results = [runtime.execute(c) for c in cells]
    assert [r.ok for r in results] == [True, True, False, True, True]
    assert runtime.successful_cells == 4 and len(runtime.cells) == 5
    assert runtime.sandbox_seconds > 0
    script = runtime.get_session_script()
    assert script.startswith("#") and "# undefined_name + 1" in script and "NameError" in script
    # The same code against the host's copy of /data, the way a user would run it.
    data = results and runtime.execute("'/data'").result
    assert data == "'/data'"
    path = tmp_path / "catalog_script.py"
    host_data = str(tmp_path / "snapshot")
    path.write_text(script.replace("/data/", host_data + "/"))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60,
                         env={"DB_CONNECTION_STRING": "duckdb:///data/db.duckdb", "PATH": "/usr/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "".join(r.stdout for r in results)


def test_two_threads_are_serialised(runtime):
    runtime.execute("import time\nlog = []")
    results = {}

    def call(tag):
        results[tag] = runtime.execute(f"log.append('{tag}-start'); time.sleep(0.3); log.append('{tag}-end')")

    threads = [threading.Thread(target=call, args=(t,)) for t in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert all(r.ok for r in results.values())
    log = eval(runtime.execute("log").result)
    assert len(log) == 4 and log[0][0] == log[1][0] and log[2][0] == log[3][0]


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


def test_ignored_interrupt_kills_restarts_and_replays(runtime):
    runtime.execute("counter = 41")
    runtime.execute("counter += 1")
    t0 = time.monotonic()
    r = runtime.execute("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                        "while True:\n    try:\n        time.sleep(10)\n    except BaseException:\n        pass",
                        timeout_s=1)
    assert r.timed_out and r.restarted and not r.ok
    assert time.monotonic() - t0 < 1 + 5 + 5  # killed within 5 s of the limit, then a cold start
    assert runtime.execute("print(counter)").stdout == "42\n"


def test_input_gets_eof(runtime):
    t0 = time.monotonic()
    r = runtime.execute("input()")
    assert r.error.type == "EOFError" and time.monotonic() - t0 < 2


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


def test_warmup_runs_in_the_background_in_its_own_namespace(backend, data_dir):
    sandbox = SandboxResource(backend=backend, timeout_s=10,
                              warmup="import fractions\nWARM = 1\nopen('/tmp/warmed', 'w').write('yes')\n")
    with sandbox.session(str(data_dir)) as rt:
        waited = rt.execute(
            "import os, sys, time\n"
            "deadline = time.time() + 5\n"
            "while not os.path.exists('/tmp/warmed') and time.time() < deadline:\n"
            "    time.sleep(0.05)\n"
            "print(os.path.exists('/tmp/warmed'), 'fractions' in sys.modules, 'WARM' in globals())"
        )
        assert waited.ok, waited.error
        assert waited.stdout == "True True False\n"
        script = rt.get_session_script()
        assert "WARM = 1" not in script and "import fractions" not in script
