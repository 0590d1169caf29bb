"""The host side of the protocol against a stand-in supervisor over real pipes: no frame makes it raise."""

from __future__ import annotations

import json
import os
import select
import threading
import time
from typing import Callable, Optional

import pytest

from cataloger_dagster.resources.sandbox import SandboxError, SandboxRuntime
from cataloger_dagster.resources.sandbox.base import Channel
from cataloger_dagster.resources.sandbox.protocol import HEADER, MAX_FRAME

Answer = Callable[[str], bytes]  # the bytes a supervisor sends for the exec of a nonce


def frame(kind: str, body: bytes) -> bytes:
    return HEADER.pack(len(body), ord(kind)) + body


def message(msg: object) -> bytes:
    return frame("J", json.dumps(msg).encode())


def good(nonce: str) -> bytes:
    return (frame("O", nonce.encode() + b"hello\n")
            + message({"op": "result", "nonce": nonce, "ok": True, "result": "2", "error": None}))


READY = message({"op": "ready", "pid": 1, "worker": 2})


class PipeSupervisor(Channel):
    """A thread reading the host's frames from one pipe and answering on another."""

    def __init__(self, answer: Answer, ready: bytes = READY) -> None:
        self._in_r, self._in_w = os.pipe()
        self._out_r, self._out_w = os.pipe()
        self._answer = answer
        os.write(self._out_w, ready)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _read(self, n: int) -> Optional[bytes]:
        buf = b""
        while len(buf) < n:
            chunk = os.read(self._in_r, n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def _serve(self) -> None:
        try:
            while (head := self._read(HEADER.size)) is not None:
                body = self._read(HEADER.unpack(head)[0])
                msg = json.loads(body)
                if msg["op"] == "shutdown":
                    break
                if msg["op"] == "exec":
                    os.write(self._out_w, self._answer(msg["nonce"]))
        except OSError:  # killed while writing
            pass
        finally:
            os.close(self._out_w)

    def send(self, data: bytes, deadline: float) -> None:
        os.write(self._in_w, data)

    def recv(self, timeout: float) -> Optional[bytes]:
        ready, _, _ = select.select([self._out_r], [], [], max(timeout, 0))
        return os.read(self._out_r, 1 << 20) if ready else None

    def kill(self) -> None:
        os.close(self._in_w)
        self._thread.join(5)
        os.close(self._in_r)
        os.close(self._out_r)


def runtime_answering(*answers: Answer) -> tuple[SandboxRuntime, list[PipeSupervisor]]:
    """A runtime whose n-th sandbox answers every cell with answers[n] (the last one after that)."""
    started: list[PipeSupervisor] = []

    def start() -> PipeSupervisor:
        started.append(PipeSupervisor(answers[min(len(started), len(answers) - 1)]))
        return started[-1]

    return SandboxRuntime(start, timeout_s=5, output_cap_bytes=1 << 16), started


def result(nonce: str, **fields) -> bytes:
    return message({"op": "result", "nonce": nonce, **fields})


MALFORMED: dict[str, Answer] = {
    "garbage JSON": lambda n: frame("J", b"{oops"),
    "bad UTF-8": lambda n: frame("J", b'{"op": "\xff"}'),
    "nested past the recursion limit": lambda n: frame("J", b"[" * 100_000 + b"]" * 100_000),
    "not an object": lambda n: message(["result", n]),
    "unknown op": lambda n: message({"op": "surprise", "nonce": n}),
    "unknown frame kind": lambda n: frame("Z", b"?"),
    "oversize length": lambda n: HEADER.pack(MAX_FRAME + 1, ord("J")) + b"{}",
    "another call's result": lambda n: result("f" * 32, ok=True),
    "ready again": lambda n: READY,
    "ok not a boolean": lambda n: result(n, ok="yes"),
    "result not a string": lambda n: result(n, ok=True, result=5),
    "forged error with wrong types": lambda n: result(n, ok=False, error={"type": 1, "message": None}),
    "error not an object": lambda n: result(n, ok=False, error="boom"),
    "a negative count": lambda n: result(n, ok=True, dropped_O=-1),
    "a count that is text": lambda n: result(n, ok=True, new_threads="3"),
}


@pytest.mark.parametrize("answer", list(MALFORMED.values()), ids=list(MALFORMED))
def test_malformed_frames_give_a_structured_error_and_a_fresh_sandbox(answer):
    runtime, started = runtime_answering(answer, good)
    try:
        r = runtime.execute("1 + 1")
        assert not r.ok and r.error.type == "ProtocolError" and r.restarted, r
        assert len(started) == 2  # the sandbox that broke the protocol was replaced
        r = runtime.execute("1 + 1")
        assert r.ok and r.result == "2" and r.stdout == "hello\n" and not r.restarted, r
    finally:
        runtime.close()


def test_a_split_good_result_is_read_whole():
    # frames that arrive a byte at a time are still frames
    class Trickle(PipeSupervisor):
        def recv(self, timeout: float) -> Optional[bytes]:
            ready, _, _ = select.select([self._out_r], [], [], max(timeout, 0))
            return os.read(self._out_r, 1) if ready else None

    runtime = SandboxRuntime(lambda: Trickle(good), timeout_s=5, output_cap_bytes=1 << 16)
    try:
        r = runtime.execute("1 + 1")
        assert r.ok and r.result == "2" and r.stdout == "hello\n"
    finally:
        runtime.close()


@pytest.mark.parametrize("ready", [frame("J", b"[1"), message([1]), message({"op": "ready", "pid": "1"}),
                                   message({"op": "hello"}), frame("X", b"")],
                         ids=["garbage", "a list", "pid as text", "unknown op", "unknown kind"])
def test_a_malformed_start_is_a_sandbox_error(ready):
    t0 = time.monotonic()
    with pytest.raises(SandboxError, match="broke the protocol during start-up"):
        SandboxRuntime(lambda: PipeSupervisor(good, ready=ready), timeout_s=5, output_cap_bytes=1024)
    assert time.monotonic() - t0 < 5  # refused at once, not after the start-up timeout
