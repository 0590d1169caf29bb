"""The backend-independent session: framing, time limits, restarts, replay, script export."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Optional

from pydantic import BaseModel, ValidationError

from cataloger_dagster.core.investigate.codegen import SCRIPT_HEADER, comment_text, python_lines

from .protocol import CappedBuffer, FrameReader, ProtocolError, decode_message, encode, new_nonce

#: The uid cells run as on both backends (the image's `sandbox` user; as root, the local
#: backend's host uid).  It must not be a real account on the host.
SANDBOX_UID = 10001
#: How long a cell may ignore the interrupt before the interpreter is killed.
INTERRUPT_GRACE_S = 2.0
STARTUP_TIMEOUT_S = 30.0
SEND_TIMEOUT_S = 10.0
#: How long the supervisor may take to clean a sandbox for its next session.
RECYCLE_TIMEOUT_S = 20.0

#: Host variables a sandbox may see besides the session's own ``env``.
ENV_ALLOWLIST = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "MPLCONFIGDIR": "/tmp",
    "TMPDIR": "/tmp",
}


class ErrorInfo(BaseModel):
    type: str
    message: str
    traceback: str = ""


class ExecutionResult(BaseModel):
    ok: bool
    stdout: str = ""
    stderr: str = ""
    result: Optional[str] = None
    error: Optional[ErrorInfo] = None
    duration_ms: float = 0.0
    timed_out: bool = False
    restarted: bool = False
    truncated: bool = False


@dataclass
class Cell:
    code: str
    ok: bool
    error: Optional[str] = None
    duration_ms: float = 0.0


class SandboxError(RuntimeError):
    """The sandbox could not be started or talked to."""


class Channel(ABC):
    """One running sandbox: a byte pipe to its supervisor and a way to kill it."""

    @abstractmethod
    def send(self, data: bytes, deadline: float) -> None: ...

    @abstractmethod
    def recv(self, timeout: float) -> Optional[bytes]:
        """Bytes from the supervisor; ``b""`` once it is gone, ``None`` on timeout."""

    @abstractmethod
    def kill(self) -> None:
        """Stop everything in the sandbox; bounded in time and idempotent."""

    def diagnostics(self) -> str:
        return ""


def host_identity() -> str:
    """The host whose pids `pid_alive` sees: its name, and its pid namespace.

    A sandbox's leftovers (containers, data folders) carry it with their owner's pid, so that
    only the process's own host reaps them.  The name alone is not enough: containers on the
    Docker host's network (deploy/docker/dagster.yaml) share the host's name, each with pids
    of its own, and would reap each other's live sandboxes."""
    name = socket.gethostname() or "localhost"
    try:
        namespace = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]"
    except OSError:
        return name
    return f"{name}~{namespace.removeprefix('pid:[').removesuffix(']')}"


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` exists on this host (ours or another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def empty_folder(path: str) -> None:
    """Remove everything in `path`, keeping the folder itself."""
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


def sandbox_env(env: dict[str, str] | None) -> dict[str, str]:
    merged = dict(ENV_ALLOWLIST)
    merged.update({str(k): str(v) for k, v in (env or {}).items()})
    return merged


class SandboxRuntime:
    """A persistent interpreter inside one sandbox, restarted and replayed when it must be."""

    def __init__(
        self,
        start: Callable[[], Channel],
        *,
        timeout_s: float,
        output_cap_bytes: int,
        label: str = "",
        adopt: Optional[tuple[Channel, FrameReader]] = None,
    ) -> None:
        self._start = start
        self.timeout_s = timeout_s
        self.cap = output_cap_bytes
        self.label = label
        self.cells: list[Cell] = []
        self.sandbox_seconds = 0.0
        self.restarts = 0
        self._lock = threading.Lock()
        self._channel: Optional[Channel] = None
        self._reader = FrameReader()
        self._closed = False
        self.supervisor_pid: Optional[int] = None
        self.worker_pid: Optional[int] = None
        self.data_dir: Optional[str] = None  # the host folder the sandbox sees as /data
        self.recyclable = False  # its supervisor can clean it for another session (`recycled`)
        self._on_close: list[Callable[[], None]] = []
        if adopt is None:
            self._boot()
        else:
            self._channel, self._reader = adopt

    # ------------------------------------------------------------ public
    @property
    def data_folder(self) -> str:
        """The host folder the sandbox sees as /data: every session opened by the resource has one."""
        if self.data_dir is None:
            raise SandboxError("this sandbox has no data folder: open it with SandboxResource.session")
        return self.data_dir

    @property
    def successful_cells(self) -> int:
        return sum(1 for c in self.cells if c.ok)

    def execute(self, code: str, timeout_s: float | None = None) -> ExecutionResult:
        """Run one cell; calls from several threads are served one at a time."""
        with self._lock:
            if self._closed:
                raise SandboxError("this sandbox session is closed")
            began = time.monotonic()
            restarted = False
            if self._channel is None:
                self._restart()
                restarted = True
            result, needs_restart = self._run(code, timeout_s or self.timeout_s)
            if needs_restart:
                self._restart()
                restarted = True
            result.restarted = restarted
            result.duration_ms = (time.monotonic() - began) * 1000
            self.sandbox_seconds += time.monotonic() - began
            error = f"{result.error.type}: {result.error.message}" if result.error else None
            self.cells.append(Cell(code, result.ok, error, result.duration_ms))
            return result

    def get_session_script(self) -> str:
        """The cells that ran, in order, as one script; failed cells as comments.  Comments hold
        printable ASCII only (errors and failed code can hold any character a name holds), and
        lines are split where Python splits them, so no comment can end early and start code."""
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines = [
            SCRIPT_HEADER,
            f"# {comment_text(self.label or 'sandbox session')}, exported {stamp}",
            "# Runs standalone over DB_CONNECTION_STRING: run it in a sandbox over a read-only copy",
            "# of the data (the cataloger's docs/sandbox.md), not with plain python on a host.",
            "# Cells that failed are kept as comments, with their error.",
            "",
        ]
        for i, cell in enumerate(self.cells, 1):
            if cell.ok:
                lines += [f"# %% cell {i}", cell.code.rstrip("\n"), ""]
            else:
                first = python_lines(cell.error.strip())[0] if cell.error and cell.error.strip() else "error"
                lines.append(f"# %% cell {i} FAILED: {comment_text(first)}")
                code = python_lines(cell.code.rstrip("\r\n"))
                lines += ["# " + comment_text(ln, limit=len(ln)) if ln else "#" for ln in code]
                lines.append("")
        return "\n".join(lines)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._teardown(graceful=True)
            callbacks, self._on_close = self._on_close, []
        for callback in callbacks:
            callback()

    def on_close(self, callback: Callable[[], None]) -> None:
        """Run `callback` once, after the sandbox has stopped."""
        self._on_close.append(callback)

    def recycled(self) -> "SandboxRuntime":
        """This sandbox, cleaned by its supervisor, as a new session's runtime.

        The host empties /data; the supervisor kills every process of this session, empties every
        place a cell could write, and forks a fresh worker from its zygote.  This runtime is
        closed for good.  SandboxError if the sandbox cannot be made clean (the caller then
        closes this runtime and starts a new sandbox)."""
        with self._lock:
            channel = self._channel
            if self._closed or channel is None or not self.recyclable:
                raise SandboxError("this sandbox cannot be reused")
            self._closed = True  # from here on, nothing of this session's reaches the sandbox
            pids = self.supervisor_pid, self.worker_pid  # this session's, kept as they were
            try:
                if self.data_dir:
                    empty_folder(self.data_dir)  # before the next worker exists
                channel.send(encode({"op": "recycle"}), time.monotonic() + SEND_TIMEOUT_S)
                self._await_ready(channel, RECYCLE_TIMEOUT_S, "cleaning")
            except BaseException:
                self._teardown(graceful=False)
                callbacks, self._on_close = self._on_close, []
                for callback in callbacks:
                    callback()
                raise
            self._channel = None
            runtime = SandboxRuntime(
                self._start,
                timeout_s=self.timeout_s,
                output_cap_bytes=self.cap,
                label=self.label,
                adopt=(channel, self._reader),
            )
            runtime.supervisor_pid, runtime.worker_pid = self.supervisor_pid, self.worker_pid
            self.supervisor_pid, self.worker_pid = pids
            runtime.recyclable, runtime.data_dir = self.recyclable, self.data_dir
            runtime._on_close, self._on_close = self._on_close, []
        return runtime

    # ------------------------------------------------------------ internals
    def _boot(self) -> None:
        self._reader = FrameReader()
        channel = self._start()
        self._channel = channel
        try:
            self._await_ready(channel, STARTUP_TIMEOUT_S, "start-up")
        except BaseException:
            self._teardown(graceful=False)
            raise

    def _await_ready(self, channel: Channel, timeout_s: float, phase: str) -> None:
        """Until the supervisor says it is ready (after its start-up, or its cleaning)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            data = channel.recv(deadline - time.monotonic())
            if data is None:
                continue
            if data == b"":
                raise SandboxError(f"sandbox exited during {phase}: {channel.diagnostics()}")
            try:
                if self._ready(self._reader.feed(data)):
                    return
            except ProtocolError as exc:
                raise SandboxError(f"sandbox broke the protocol during {phase}: {exc}") from None
        raise SandboxError(f"sandbox did not finish its {phase} within {timeout_s:g}s: {channel.diagnostics()}")

    def _ready(self, frames: list[tuple[str, bytes]]) -> bool:
        for kind, payload in frames:
            if kind != "J":
                continue  # output before any call is nobody's
            msg = decode_message(payload)
            pids = msg.get("pid"), msg.get("worker")
            if msg["op"] == "unclean":
                raise SandboxError(f"the sandbox could not be made clean: {str(msg.get('message'))[:300]}")
            if msg["op"] != "ready":
                raise ProtocolError(f"expected the supervisor's ready message, got {msg['op']!r}")
            if not all(type(p) is int for p in pids):
                raise ProtocolError("the ready message's pids are not integers")
            self.supervisor_pid, self.worker_pid = pids
            self.recyclable = msg.get("recyclable") is True
            return True
        return False

    def _teardown(self, graceful: bool) -> None:
        channel, self._channel = self._channel, None
        if channel is None:
            return
        if graceful:
            try:
                channel.send(encode({"op": "shutdown"}), time.monotonic() + 1.0)
            except Exception:
                pass
        channel.kill()

    def _restart(self) -> None:
        """A fresh interpreter, then the cells that had succeeded, replayed in order."""
        self._teardown(graceful=False)
        self.restarts += 1
        self._boot()
        for cell in [c for c in self.cells if c.ok]:
            replay, dead = self._run(cell.code, self.timeout_s)
            if dead:
                raise SandboxError(f"replaying a cell after a restart broke the sandbox: {replay.error}")

    def _run(self, code: str, timeout_s: float) -> tuple[ExecutionResult, bool]:
        """Returns the result and whether the sandbox must be restarted."""
        channel = self._channel
        assert channel is not None
        nonce = new_nonce()
        tag = nonce.encode()
        streams = {k: CappedBuffer(self.cap) for k in "OE"}
        dropped = {"O": 0, "E": 0}
        try:
            channel.send(encode({"op": "exec", "nonce": nonce, "code": code}), time.monotonic() + SEND_TIMEOUT_S)
        except (OSError, SandboxError) as exc:
            return self._failure("InterpreterDied", f"could not send the cell: {exc}"), True
        deadline = time.monotonic() + timeout_s
        interrupted = False
        while True:
            now = time.monotonic()
            if now >= deadline:
                if interrupted:
                    channel.kill()
                    return self._finish(
                        streams,
                        dropped,
                        ExecutionResult(
                            ok=False,
                            timed_out=True,
                            error=ErrorInfo(
                                type="TimeoutError",
                                message=f"cell exceeded its {timeout_s:g}s limit and ignored the interrupt; "
                                "the interpreter was killed and restarted",
                            ),
                        ),
                    ), True
                interrupted = True
                try:
                    channel.send(encode({"op": "interrupt", "nonce": nonce}), now + 1.0)
                except (OSError, SandboxError):
                    pass
                deadline = now + INTERRUPT_GRACE_S
                continue
            data = channel.recv(min(deadline - now, 0.5))
            if data is None:
                continue
            if data == b"":
                return self._finish(
                    streams,
                    dropped,
                    self._failure(
                        "InterpreterDied", f"the sandbox died during the cell {channel.diagnostics()}".rstrip()
                    ),
                ), True
            try:
                for kind, payload in self._reader.feed(data):
                    if kind != "J":
                        if payload[: len(tag)] == tag:
                            streams["O" if kind in "OP" else "E"].feed(payload[len(tag) :])
                        continue
                    msg = decode_message(payload)
                    if msg["op"] == "dead":
                        return self._finish(
                            streams, dropped, self._failure("InterpreterDied", str(msg.get("message", ""))[:8192])
                        ), True
                    if msg["op"] != "result" or msg.get("nonce") != nonce:
                        raise ProtocolError(
                            f"expected the result of call {nonce[:8]}, got {msg['op']!r} "
                            f"for {str(msg.get('nonce'))[:8]!r}"
                        )
                    result, restart = self._result(msg, dropped, interrupted, timeout_s)
                    return self._finish(streams, dropped, result), restart
            except ProtocolError as exc:
                # The channel can no longer be trusted to be in step: a fresh sandbox.
                return self._finish(
                    streams, dropped, self._failure("ProtocolError", f"{exc}; the sandbox was restarted")
                ), True

    @staticmethod
    def _result(
        msg: dict, dropped: dict[str, int], interrupted: bool, timeout_s: float
    ) -> tuple[ExecutionResult, bool]:
        """The supervisor's result message as a result, and whether to restart; ProtocolError if malformed."""
        try:
            counts = [msg.get(k, 0) for k in ("dropped_O", "dropped_E", "new_threads")]
            if not all(type(c) is int and c >= 0 for c in counts) or not isinstance(msg.get("ok"), bool):
                raise ValueError("'ok' or a count has the wrong type")
            err = msg.get("error")
            timed_out = interrupted and msg.get("interrupted") is True
            if timed_out:
                err = {
                    "type": "TimeoutError",
                    "message": f"cell exceeded its {timeout_s:g}s limit and was interrupted",
                    "traceback": err.get("traceback", "") if isinstance(err, dict) else "",
                }
            result = ExecutionResult(
                ok=msg["ok"],
                result=msg.get("result"),
                timed_out=timed_out,
                error=None if err is None else ErrorInfo.model_validate(err),
            )
        except (ValidationError, ValueError) as exc:
            raise ProtocolError(f"a malformed result from the sandbox ({str(exc).splitlines()[0][:200]})") from None
        dropped["O"], dropped["E"], threads = counts
        # Threads a timed-out cell left running can only be stopped with the interpreter.
        restart = msg.get("dead") is True or (timed_out and threads > 0)
        return result, restart

    @staticmethod
    def _failure(etype: str, message: str) -> ExecutionResult:
        return ExecutionResult(ok=False, error=ErrorInfo(type=etype, message=message))

    @staticmethod
    def _finish(streams, dropped, result: ExecutionResult) -> ExecutionResult:
        result.stdout, t1 = streams["O"].text(dropped["O"])
        result.stderr, t2 = streams["E"].text(dropped["E"])
        result.truncated = t1 or t2
        return result
