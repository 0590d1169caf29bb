"""supervisor.py: the program inside the sandbox, as the supervisor (PID 1, the host channel)
and as the worker (the persistent interpreter).

Its frames are checked by running it on the host as a plain child process and speaking the
protocol to it directly (ready, exec, tagged output, caps, interrupts, deaths, shutdown); its
pure parts (the result checks and caps, the result scan) are called as they are; and what the
worker does for the cells is checked through sessions on both backends.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest

from cataloger_dagster.resources.sandbox import SandboxResource, supervisor
from cataloger_dagster.resources.sandbox.base import sandbox_env
from cataloger_dagster.resources.sandbox.protocol import BOOT, FrameReader, bootstrap_payload, encode, new_nonce


# ---------------------------------------------------------------- the worker, through sessions


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


def test_input_gets_eof(runtime):
    t0 = time.monotonic()
    r = runtime.execute("input()")
    assert r.error.type == "EOFError" and time.monotonic() - t0 < 2


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


def test_a_thread_left_by_a_cell_is_stopped_and_silenced(runtime):
    r = runtime.execute(
        "import threading, time, _thread\n"
        "def chatty(word):\n"
        "    while True:\n"
        "        print(word, flush=True)\n"
        "        time.sleep(0.01)\n"
        "def stubborn():\n"
        "    while True:\n"
        "        try:\n"
        "            chatty('STUBBORN')\n"
        "        except BaseException:\n"
        "            pass\n"
        "threading.Thread(target=chatty, args=('LEAK',), name='chatty', daemon=True).start()\n"
        "_thread.start_new_thread(chatty, ('RAW',))\n"
        "threading.Thread(target=stubborn, name='stubborn', daemon=True).start()\n"
        "time.sleep(0.2)")
    assert r.ok and {"LEAK", "RAW", "STUBBORN"} <= set(r.stdout.split()), r  # in its own cell it speaks
    r = runtime.execute("import sys, threading, time\ntime.sleep(0.5)\nprint('mine')\n"
                        "sorted(t.name for t in threading.enumerate())")
    assert r.ok and r.stdout == "mine\n" and r.stderr == "", r
    # SystemExit ended the two that let it: the stubborn one lives on, unheard
    assert eval(r.result) == ["MainThread", "stubborn"]
    assert runtime.execute("time.sleep(0.3)\nprint('again')").stdout == "again\n"


def test_the_warm_up_is_neither_heard_nor_stopped(backend, data_dir):
    from cataloger_dagster.resources.sandbox import SandboxResource

    warmup = ("import time\nfor _ in range(20):\n    print('WARM', flush=True)\n    time.sleep(0.05)\n"
              "open('/tmp/warm-done', 'w').write('yes')\n")
    with SandboxResource(backend=backend, timeout_s=10, warmup=warmup).session(str(data_dir)) as rt:
        first = rt.execute("print('one')")
        second = rt.execute("import os, time\ndeadline = time.time() + 5\n"
                            "while not os.path.exists('/tmp/warm-done') and time.time() < deadline:\n"
                            "    time.sleep(0.05)\n"
                            "print(os.path.exists('/tmp/warm-done'))")
    assert first.stdout == "one\n" and second.stdout == "True\n", (first, second)


def test_the_supervisor_reaps_orphans_as_pid_1(runtime):
    # Without docker's init the supervisor is the one the kernel gives orphans to.
    r = runtime.execute(
        "import os, time\n"
        "for _ in range(20):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        if os.fork() == 0:\n"
        "            os._exit(0)\n"
        "        os._exit(0)\n"
        "    os.waitpid(pid, 0)\n"
        "time.sleep(2.5)\n"
        "zombies = []\n"
        "for p in os.listdir('/proc'):\n"
        "    try:\n"
        "        st = open('/proc/%s/stat' % p).read()\n"
        "    except OSError:\n"
        "        continue\n"
        "    if st[st.rfind(')') + 2] == 'Z':\n"
        "        zombies.append(p)\n"
        "zombies", timeout_s=20)
    assert r.ok and r.result == "[]", r


def test_cells_run_in_a_clean_main_module_and_underscore_holds_the_last_value(runtime):
    # the bootstrap's names are gone (the exported script would not have them), and the
    # namespace is the real __main__, so pickle finds what a cell defines
    r = runtime.execute("sorted(k for k in globals() if not k.startswith('__'))")
    assert r.ok and r.result == "[]", r
    r = runtime.execute("import pickle\ndef f():\n    return __name__\npickle.loads(pickle.dumps(f))()")
    assert r.ok and r.result == "'__main__'", r.error
    assert runtime.execute("6 * 7").result == "42"
    none = runtime.execute("print('x')")  # an expression that is None: no result, `_` kept
    assert none.ok and none.result is None and none.stdout == "x\n"
    assert runtime.execute("_ + 1").result == "43"
    assert len(runtime.execute("'x' * 100000").result) == 65536  # the repr is capped


def test_a_traceback_shows_the_cell_and_none_of_the_worker(runtime):
    r = runtime.execute("def inner():\n    raise ValueError('deep')\ninner()")
    assert not r.ok and r.error.type == "ValueError" and r.error.message == "deep"
    assert 'File "<cell 1>", line 3' in r.error.traceback and "in inner" in r.error.traceback
    assert "worker_main" not in r.error.traceback and "<sandbox-supervisor>" not in r.error.traceback


def test_processes_a_cell_leaves_are_killed_when_it_ends(runtime):
    # in their own session too: in a sandbox the pid namespace is the supervisor's to empty
    r = runtime.execute("import subprocess\n"
                        "kids = [subprocess.Popen(['sleep', '60']), subprocess.Popen(['sleep', '60'], start_new_session=True)]\n"
                        "[k.pid for k in kids]")
    assert r.ok, r.error
    # the worker reaps its dead children before the next cell: gone from /proc, not just stopped
    after = runtime.execute("import os\n[os.path.exists('/proc/%d' % k.pid) for k in kids]")
    assert after.result == "[False, False]", after


# ---------------------------------------------------------------- the supervisor's frames, on the host
class Driven:
    """The supervisor as a plain child process of the test (no sandbox), spoken to frame by frame."""

    def __init__(self, cwd, cap: int = 1 << 20, warmup: str = "") -> None:
        config = {"boot": BOOT, "warmup": warmup, "pidns": False, "rlimits": {}, "cap": cap, "cwd": str(cwd)}
        self.proc = subprocess.Popen([sys.executable, "-I", "-u", "-c", BOOT, "0"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=sandbox_env({}))
        self.reader = FrameReader()
        self.frames: list[tuple[str, bytes]] = []
        self.write(bootstrap_payload(config))
        kind, ready = self.next_frame()
        self.ready = json.loads(ready)

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg: dict) -> None:
        self.write(encode(msg))

    def next_frame(self, timeout: float = 15) -> tuple[str, bytes]:
        """The next frame; AssertionError at EOF or after `timeout`."""
        end = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while not self.frames:
            ready, _, _ = select.select([fd], [], [], max(end - time.monotonic(), 0))
            assert ready, "no frame from the supervisor in time"
            data = os.read(fd, 1 << 20)
            assert data, f"the supervisor ended: {self.proc.stderr.read().decode()[-2000:]}"
            self.frames += self.reader.feed(data)
        return self.frames.pop(0)

    def call(self, code: str, nonce: str | None = None) -> tuple[dict, dict[str, bytes]]:
        """Exec `code`: its result message, and the bytes of each output kind (nonce removed)."""
        nonce = nonce or new_nonce()
        self.send({"op": "exec", "nonce": nonce, "code": code})
        return self.collect(nonce)

    def collect(self, nonce: str) -> tuple[dict, dict[str, bytes]]:
        out: dict[str, bytes] = {}
        while True:
            kind, payload = self.next_frame()
            if kind == "J":
                return json.loads(payload), out
            assert payload.startswith(nonce.encode()), (kind, payload[:80])
            out[kind] = out.get(kind, b"") + payload[len(nonce):]

    def ended(self, timeout: float = 10) -> int:
        """The supervisor's exit code once its output has ended."""
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], max(end - time.monotonic(), 0))
            if ready and not os.read(fd, 1 << 20):
                break
        return self.proc.wait(timeout=max(end - time.monotonic(), 1))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


@pytest.fixture
def driven(tmp_path):
    sup = Driven(tmp_path)
    yield sup
    sup.close()


def _state(pid: int) -> str | None:
    """The state letter of process `pid`, or None once it is gone."""
    try:
        data = open(f"/proc/{pid}/stat", "rb").read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2:].split()[0].decode()


def test_it_announces_itself_and_its_worker(driven):
    assert driven.ready == {"op": "ready", "pid": driven.proc.pid, "worker": driven.ready["worker"],
                            "recyclable": False}  # no pid namespace of its own: it cannot be reused
    stat = open(f"/proc/{driven.ready['worker']}/stat", "rb").read()
    assert int(stat[stat.rfind(b")") + 2:].split()[1]) == driven.proc.pid  # the worker is its child


def test_a_call_gives_tagged_output_then_its_result(driven):
    nonce = new_nonce()
    result, out = driven.call("import sys\nprint('to stdout')\nsys.stderr.write('to stderr')\n6 * 7", nonce)
    assert result == {"op": "result", "nonce": nonce, "ok": True, "result": "42", "error": None,
                      "interrupted": False, "new_threads": 0, "dropped_O": 0, "dropped_E": 0}
    assert out == {"O": b"to stdout\n", "E": b"to stderr"}
    result, out = driven.call("raise KeyError('k')")
    assert result["ok"] is False and result["error"]["type"] == "KeyError" and out == {}


def test_output_past_the_cap_is_a_head_a_tail_and_a_count(tmp_path):
    sup = Driven(tmp_path, cap=1000)  # 500 bytes of head, 500 of tail
    try:
        result, out = sup.call("import sys\nfor part in ('a' * 500, 'b' * 3000, 'c' * 500):\n"
                               "    sys.stdout.write(part)")
        assert out == {"O": b"a" * 500, "P": b"c" * 500}  # the head as it came, the tail at the end
        assert result["ok"] and result["dropped_O"] == 3000 and result["dropped_E"] == 0
    finally:
        sup.close()


def test_only_an_interrupt_for_the_call_in_flight_is_applied(driven):
    nonce = new_nonce()
    driven.send({"op": "exec", "nonce": nonce, "code": "import time\ntime.sleep(1.5)\n'slept'"})
    time.sleep(0.3)
    driven.send({"op": "interrupt", "nonce": new_nonce()})  # another call's: ignored
    result, _ = driven.collect(nonce)
    assert result["ok"] and result["result"] == "'slept'" and not result["interrupted"], result
    nonce = new_nonce()
    driven.send({"op": "exec", "nonce": nonce, "code": "while True:\n    pass"})
    time.sleep(0.3)
    driven.send({"op": "interrupt", "nonce": nonce})
    result, _ = driven.collect(nonce)
    assert not result["ok"] and result["interrupted"] and result["error"]["type"] == "KeyboardInterrupt"
    assert driven.call("'still serving'")[0]["result"] == "'still serving'"


@pytest.mark.parametrize("code, etype, message", [
    ("import os\nos._exit(3)", "InterpreterDied", "the interpreter exited with code 3"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)", "InterpreterDied",
     "the interpreter was killed by signal SIGTERM"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "MemoryError",
     "the interpreter was killed by SIGKILL (most likely out of memory)"),
], ids=["exit", "signal", "sigkill"])
def test_a_dead_worker_ends_the_call_with_its_cause_then_the_supervisor(driven, code, etype, message):
    worker = driven.ready["worker"]
    nonce = new_nonce()
    # a signal the kernel hands to another thread of the worker lands a moment later: the cell
    # waits for it, so that the worker always dies inside the call
    result, _ = driven.call(code + "\nimport time\ntime.sleep(30)", nonce)
    assert result["op"] == "result" and result["nonce"] == nonce and result["dead"] is True
    assert not result["ok"] and result["error"] == {"type": etype, "message": message, "traceback": ""}
    assert json.loads(driven.next_frame()[1]) == {"op": "dead", "message": message}
    assert driven.ended() == 0 and _state(worker) in (None, "Z")


@pytest.mark.parametrize("how", ["shutdown", "end of input"])
def test_shutdown_or_the_end_of_its_input_stops_it_and_its_worker(driven, how):
    worker = driven.ready["worker"]
    assert driven.call("x = 1")[0]["ok"]
    if how == "shutdown":
        driven.send({"op": "shutdown"})
    else:  # the host died
        driven.proc.stdin.close()
    assert driven.ended() == 0
    end = time.monotonic() + 5
    while _state(worker) not in (None, "Z") and time.monotonic() < end:
        time.sleep(0.02)
    assert _state(worker) in (None, "Z")


# ---------------------------------------------------------------- its pure parts
def test_a_reply_is_passed_on_with_the_expected_types_and_capped():
    long = "m" * 10_000
    checked = supervisor.checked_reply({"ok": False, "result": None, "dead": True, "new_threads": -2,
                                        "interrupted": "yes", "dropped_O": 5,
                                        "error": {"type": "E" * 300, "message": long}})
    assert checked == {"ok": False, "result": None, "interrupted": False, "new_threads": 0,
                       "error": {"type": "E" * 200, "message": "m" * 8192, "traceback": ""}}
    assert supervisor.checked_reply({"ok": True, "result": "r" * 70_000, "new_threads": 2})["result"] == "r" * 65536
    for bad, why in [([], "not a JSON object"), ({"ok": 1}, "'ok' is not a boolean"),
                     ({"ok": True, "result": 5}, "'result' is not a string"),
                     ({"ok": False, "error": {"type": "T"}}, "'error' is not"),
                     ({"ok": False, "error": {"type": "T", "message": "m", "traceback": 3}}, "'error' is not")]:
        checked = supervisor.checked_reply(bad)
        assert checked["ok"] is False and checked["error"]["type"] == "ProtocolError", bad
        assert why in checked["error"]["message"], (bad, checked)


def _sized(reply: dict) -> bytes:
    body = json.dumps(reply).encode()
    return b"%08x" % len(body) + body


def test_the_result_scan_takes_the_first_frame_of_the_current_call_even_split():
    sup = supervisor.Supervisor({}, b"")
    sup.current = new_nonce()
    mine = supervisor.MAGIC + sup.current.encode() + _sized({"ok": True, "result": "'mine'"})
    other = supervisor.MAGIC + new_nonce().encode() + _sized({"ok": True, "result": "'other'"})
    stream = b"noise " + other + mine + supervisor.MAGIC + sup.current.encode() + _sized({"ok": True, "result": "'2nd'"})
    cut = len(b"noise " + other) + 5  # inside the marker of ours
    sup.res_buf += stream[:cut]
    assert sup.scan_result() is None
    assert len(sup.res_buf) < len(supervisor.MAGIC) + len(sup.current)  # junk is not kept
    sup.res_buf += stream[cut:]
    assert sup.scan_result() == {"ok": True, "result": "'mine'", "error": None, "interrupted": False,
                                 "new_threads": 0}


def test_a_result_frame_that_is_not_whole_yet_is_waited_for():
    sup = supervisor.Supervisor({}, b"")
    sup.current = new_nonce()
    whole = supervisor.MAGIC + sup.current.encode() + _sized({"ok": True, "result": "'r'"})
    for end in (len(whole) - 30, len(whole) - 1):  # inside the length, inside the body
        sup.res_buf[:] = whole[:end]
        assert sup.scan_result() is None
    sup.res_buf[:] = whole
    assert sup.scan_result()["result"] == "'r'"


def test_the_cap_streams_the_head_and_keeps_only_a_tail():
    capped = supervisor.Capped(10)  # a head of 5 bytes and a tail of 5
    assert capped.feed(b"abc") == b"abc"
    assert capped.feed(b"defgh") == b"de"
    assert capped.feed(b"ijklmnopqrstuvwxyz" * 3) == b""
    assert capped.finish() == (b"vwxyz", 3 + 54 - 5)


def test_the_worker_starts_with_default_signals_whatever_its_host_ignored(tmp_path):
    """A host that ignores SIGTERM (a parent process did) hands that on to its children; the
    worker puts Python's defaults back, so a cell's signals do what they do in plain Python."""
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        sup = Driven(tmp_path)  # started while SIGTERM is ignored here
    finally:
        signal.signal(signal.SIGTERM, previous)
    try:
        result, _ = sup.call("import signal\n(signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP))")
        assert result["result"] == "(<Handlers.SIG_DFL: 0>, <Handlers.SIG_DFL: 0>)"
    finally:
        sup.close()
