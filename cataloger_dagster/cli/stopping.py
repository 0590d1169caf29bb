"""Stopping `cataloger run` on Ctrl-C (SIGINT) or SIGTERM, in the runner and in its workers.

Dagster turns a signal that arrives during a step into a failed run (its own handlers replace
ours for the length of an in-process run, SIGTERM included), so a run that comes back failed
cannot say whether a table failed or the user stopped it.  Within `stop_on_signals` the signal
numbers are also written by the interpreter to a pipe (`signal.set_wakeup_fd`), whoever's
handler ran: `check_stop` after each Dagster run raises `Interrupted` if one came, and an
interruption is never taken for a table's failure (never re-run, never reported failed).
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from typing import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal: nothing more is started, what finished stays."""

    def __init__(self, signo: int) -> None:
        super().__init__(signal.Signals(signo).name)
        self.signo = signo

    @property
    def exit_code(self) -> int:
        """The shell's code for a process ended by the signal: 130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signo


_pipe: dict[str, int] = {}  # the read end of the wake-up pipe, while stop_on_signals is open
_received: list[int] = []  # signals seen so far in this block


def _handler(signo: int, _frame) -> None:
    first = not _received
    _received.append(signo)
    if first:  # a second Ctrl-C must not break off the cleaning up (sandboxes, workers) the first began
        raise Interrupted(signo)


def _drain() -> None:
    fd = _pipe.get("read")
    if fd is None:
        return
    try:
        while data := os.read(fd, 64):
            _received.extend(b for b in data if b in SIGNALS)
    except BlockingIOError:
        pass


def stop_requested() -> int | None:
    """The first signal received within `stop_on_signals`, if any."""
    _drain()
    return _received[0] if _received else None


def check_stop() -> None:
    """Raise `Interrupted` if a stop signal came (even one Dagster's handler swallowed)."""
    signo = stop_requested()
    if signo is not None:
        raise Interrupted(signo)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise `Interrupted` here, and are remembered while Dagster handles them."""
    if threading.current_thread() is not threading.main_thread() or "read" in _pipe:
        yield  # signals reach the main thread only; a nested block adds nothing
        return
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    old_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    _pipe["read"] = read
    _received.clear()
    try:
        for s in SIGNALS:
            signal.signal(s, _handler)
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        signal.set_wakeup_fd(old_fd)
        _received.clear()
        del _pipe["read"]
        os.close(read)
        os.close(write)
