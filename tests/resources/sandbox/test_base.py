"""base.py: SandboxRuntime, the backend-independent session (start-up, cells one at a time,
restart and replay, closing, the session script), and the sandbox's environment.

Most of it runs against real sandboxes on both backends; start-up failures run against a
real child process that is not a supervisor, through the local backend's ProcessChannel.
"""

from __future__ import annotations

import ast
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from cataloger_dagster.resources.sandbox import SandboxError, SandboxResource, SandboxRuntime, base
from cataloger_dagster.resources.sandbox.local import ProcessChannel


# ---------------------------------------------------------------- the environment


def test_environment_is_env_plus_allowlist(runtime):
    r = runtime.execute("import os\nsorted(os.environ)")
    names = eval(r.result)
    assert "DB_CONNECTION_STRING" in names
    assert set(names) <= {"DB_CONNECTION_STRING", "PATH", "HOME", "LANG", "LC_ALL", "PYTHONUNBUFFERED",
                          "PYTHONDONTWRITEBYTECODE", "MPLCONFIGDIR", "TMPDIR", "PWD", "HOSTNAME"}


def test_env_overrides_the_allowlist_and_the_hosts_own_variables_stay_out(sandbox, data_dir, monkeypatch):
    monkeypatch.setenv("CATALOGER_TEST_SECRET", "hunter2")
    monkeypatch.setenv("PATH", "/host/only/bin:" + os.environ["PATH"])
    with sandbox.session(str(data_dir), env={"HOME": "/data", "COUNT": 3}) as rt:
        r = rt.execute("import os\n(os.environ['HOME'], os.environ['COUNT'], "
                       "os.environ.get('CATALOGER_TEST_SECRET'), os.environ['PATH'])")
    assert r.ok, r.error
    assert eval(r.result) == ("/data", "3", None, base.ENV_ALLOWLIST["PATH"])


def test_the_allowlist_itself_is_never_changed_by_a_session():
    merged = base.sandbox_env({"PATH": "/elsewhere"})
    merged["EXTRA"] = "1"
    assert base.ENV_ALLOWLIST["PATH"] != "/elsewhere" and "EXTRA" not in base.ENV_ALLOWLIST
    assert base.sandbox_env(None) == base.ENV_ALLOWLIST


# ---------------------------------------------------------------- cells


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


def test_each_cell_is_recorded_with_its_outcome(runtime):
    runtime.execute("a = 1")
    runtime.execute("nope + 1")
    runtime.execute("import time\ntime.sleep(0.2)")
    assert [(c.code, c.ok, c.error) for c in runtime.cells] == [
        ("a = 1", True, None), ("nope + 1", False, "NameError: name 'nope' is not defined"),
        ("import time\ntime.sleep(0.2)", True, None)]
    assert runtime.successful_cells == 2
    assert runtime.cells[2].duration_ms >= 200 and runtime.sandbox_seconds >= 0.2


def test_after_a_restart_only_the_successful_cells_are_replayed_and_stay_silent(runtime):
    assert runtime.execute("print('one')\nn = 1").stdout == "one\n"
    assert not runtime.execute("n = 2\nundefined").ok  # failed: not replayed
    assert runtime.restarts == 0
    died = runtime.execute("import os\nos._exit(1)")
    assert died.restarted and died.error.type == "InterpreterDied" and runtime.restarts == 1
    assert died.stdout == ""  # the replayed cell's print is not this call's output
    after = runtime.execute("print(n)")
    assert after.ok and after.stdout == "1\n" and not after.restarted
    assert [c.ok for c in runtime.cells] == [True, False, False, True]


def test_a_cell_that_breaks_when_replayed_is_a_sandbox_error(runtime, data_dir):
    # fine the first time; after the host drops a file in /data, replaying it kills the interpreter
    assert runtime.execute("import os\nif os.path.exists('/data/poison'):\n    os._exit(9)").ok
    (data_dir / "poison").write_text("")
    with pytest.raises(SandboxError, match="replaying a cell after a restart broke the sandbox"):
        runtime.execute("import os\nos._exit(1)")
    # (the fixture closes the session; the autouse check finds nothing of it left)


# ---------------------------------------------------------------- start-up
def test_a_sandbox_that_exits_at_start_up_is_an_error_naming_its_complaint(tmp_path):
    def start():
        return ProcessChannel(["sh", "-c", "echo 'no python here' >&2; exit 3"], {}, b"")

    with pytest.raises(SandboxError, match="sandbox exited during start-up: no python here"):
        SandboxRuntime(start, timeout_s=5, output_cap_bytes=1024)


def test_a_sandbox_that_never_says_ready_is_stopped_after_the_start_up_limit(monkeypatch):
    monkeypatch.setattr(base, "STARTUP_TIMEOUT_S", 1.0)
    started = []

    def start():
        started.append(ProcessChannel(["sleep", "60"], {}, b""))
        return started[0]

    t0 = time.monotonic()
    with pytest.raises(SandboxError, match=r"did not finish its start-up within 1s"):
        SandboxRuntime(start, timeout_s=5, output_cap_bytes=1024)
    assert time.monotonic() - t0 < 5
    assert started[0].proc.poll() == -9  # killed, not left to run


# ---------------------------------------------------------------- closing
def _children() -> set[int]:
    me, found = os.getpid(), set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            data = open(f"/proc/{entry}/stat", "rb").read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2:].split()
        if int(fields[1]) == me and fields[0] != b"Z":
            found.add(int(entry))
    return found


def test_closing_stops_the_sandbox_before_the_callbacks_which_run_once(local_sandbox, data_dir):
    before = _children()
    rt = SandboxResource(backend=local_sandbox, timeout_s=5).open_session(str(data_dir))
    try:
        assert _children() - before  # the local sandbox is a child of ours while it runs
        seen = []
        rt.on_close(lambda: seen.append(_children() - before))
    finally:
        rt.close()
    rt.close()
    assert seen == [set()]  # called once, when nothing of the sandbox ran any more
    with pytest.raises(SandboxError, match="closed"):
        rt.execute("1 + 1")


# ---------------------------------------------------------------- the session script


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
    # its header asks for a sandbox, never a plain `python` on a host
    header = [line for line in script.splitlines()[:5] if line.startswith("#")]
    assert any("in a sandbox" in line for line in header), header
    assert not any("run it with python" in line for line in header), header
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


def test_no_failed_cell_error_or_label_can_end_a_comment_and_start_code(runtime, tmp_path):
    # Python ends a line at \r too; \x0c and U+2028 end one for str.splitlines
    cells = ["a = 1",
             "b = 2\rprint('INJECTED-CR')\rraise ValueError('x\\rprint(\"INJECTED-ERR\")')",
             "c = 3\x0c\nprint('INJECTED-FF') \u2028 + undefined",
             "print('done', a)"]
    assert [runtime.execute(c).ok for c in cells] == [True, False, False, True]
    runtime.label = "label\rprint('INJECTED-LABEL')"
    script = runtime.get_session_script()
    assert [ast.unparse(node) for node in ast.parse(script).body] == ["a = 1", "print('done', a)"]
    comments = [line for line in script.split("\n") if line.startswith("#")]
    assert all(line.isascii() and line.isprintable() for line in comments), comments
    assert "# %% cell 2 FAILED: ValueError: x" in script and "INJECTED" in script  # kept, as comments
    path = tmp_path / "script.py"
    path.write_text(script)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == "done 1\n", out


# ---------------------------------------------------------------- pid_alive
def test_pid_alive_tells_a_running_process_from_a_gone_one():
    proc = subprocess.Popen(["sleep", "60"])
    try:
        assert base.pid_alive(proc.pid) and base.pid_alive(os.getpid())
    finally:
        proc.kill()
        proc.wait()
    assert not base.pid_alive(proc.pid)


@pytest.mark.slow
def test_host_identity_tells_apart_pid_namespaces_of_one_host_name():
    # containers on the Docker host's network (deploy/docker/dagster.yaml) share its name, not its pids
    code = "from cataloger_dagster.resources.sandbox.base import host_identity; print(host_identity())"
    same = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    other = subprocess.run(["unshare", "--map-root-user", "--pid", "--fork", "--mount-proc", sys.executable, "-c", code],
                           capture_output=True, text=True)
    assert other.returncode == 0, other.stderr
    assert same == base.host_identity() and same.startswith(socket.gethostname() + "~")
    assert other.stdout.strip().startswith(socket.gethostname() + "~") and other.stdout.strip() != same
