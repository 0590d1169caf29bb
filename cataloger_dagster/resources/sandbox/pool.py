"""Warm sandboxes across the runs of one process: the next table's sandbox starts while this one runs.

A sandbox's start (bubblewrap or a container, then the interpreter's imports and `warmup`) costs
about a second, most of it before the first cell can run.  Within ``sandbox_pool()`` (the runner
opens it around its tables, one Dagster run each), every private session handed out is replaced
at once by a new one started in a background thread, so the next table finds its sandbox warm.

Each table still gets a process, a private /data and a /tmp that no other table used: a pooled
sandbox is one that nobody has run a cell in yet, never one given back.  Outside the block the
resource starts its sandboxes as before.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Callable, Hashable, Iterator, Optional

from .base import SandboxError, SandboxRuntime

if TYPE_CHECKING:
    from . import SandboxResource

_POOL: ContextVar[Optional["SandboxPool"]] = ContextVar("cataloger_sandbox_pool", default=None)


class _Slot:
    """One sandbox being started in the background, or started, or whose start failed."""

    def __init__(self, start: Callable[[], SandboxRuntime]) -> None:
        self.runtime: Optional[SandboxRuntime] = None
        self.error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, args=(start,), name="cataloger-sandbox-pool",
                                        daemon=True)
        self._thread.start()

    def _run(self, start: Callable[[], SandboxRuntime]) -> None:
        try:
            self.runtime = start()
        except BaseException as exc:  # handed to whoever takes the slot, or dropped at close
            self.error = exc

    def wait(self) -> Optional[SandboxRuntime]:
        """The started sandbox, or None if its start failed (the caller then starts one itself)."""
        self._thread.join()
        return self.runtime

    def close(self) -> None:
        runtime = self.wait()
        if runtime is not None:
            runtime.close()


class SandboxPool:
    """`depth` spare sandboxes per configuration (the resource's settings and the session's env),
    oldest handed out first."""

    def __init__(self, depth: int = 1) -> None:
        if depth < 1:
            raise ValueError(f"a sandbox pool keeps at least one spare, not {depth}")
        self.depth = depth
        self._lock = threading.Lock()
        self._spares: dict[Hashable, list[_Slot]] = {}
        self._closed = False
        self.handed_out = 0     # sessions served warm from the pool
        self.started = 0        # sandboxes the pool started

    def take(self, resource: "SandboxResource", env: dict[str, str]) -> SandboxRuntime:
        """A sandbox for this session (the spare if there is one, else a new one), and a spare
        for the next session started in the background."""
        key = _key(resource, env)
        with self._lock:
            waiting = self._spares.get(key)
            slot = waiting.pop(0) if waiting else None
            self._refill(key, resource, env)
        runtime = slot.wait() if slot is not None else None
        if runtime is None:
            # no spare yet, or its start failed: start one here, so that its error (if any) is the step's
            return resource._open_private(env)
        self.handed_out += 1
        return runtime

    def prime(self, resource: "SandboxResource", env: dict[str, str]) -> None:
        """Start the spares for this configuration that are not there yet (as a run begins)."""
        key = _key(resource, env)
        with self._lock:
            self._refill(key, resource, env)

    def _refill(self, key: Hashable, resource: "SandboxResource", env: dict[str, str]) -> None:
        """Spares up to `depth`: a batch's tables take them faster than one starts."""
        if self._closed:
            return
        waiting = self._spares.setdefault(key, [])
        while len(waiting) < self.depth:
            # the resource's teardown after its run stops only its own spare, never the pool's
            waiting.append(_Slot(lambda: resource._open_private(dict(env))))
            self.started += 1

    def close(self) -> None:
        with self._lock:
            self._closed = True
            slots = [slot for waiting in self._spares.values() for slot in waiting]
            self._spares = {}
        for slot in slots:
            slot.close()


def _key(resource: "SandboxResource", env: dict[str, str]) -> Hashable:
    config = resource.model_dump(exclude={"prestart_env"})
    return tuple(sorted((k, repr(v)) for k, v in config.items())), tuple(sorted(env.items()))


def active_pool() -> Optional[SandboxPool]:
    return _POOL.get()


@contextmanager
def sandbox_pool(depth: int = 1) -> Iterator[SandboxPool]:
    """Within this block, private sessions come warm from a pool of `depth` spares; the spares
    are stopped at its end."""
    pool = SandboxPool(depth)
    token = _POOL.set(pool)
    try:
        yield pool
    finally:
        _POOL.reset(token)
        pool.close()


__all__ = ["SandboxPool", "sandbox_pool", "active_pool", "SandboxError"]
