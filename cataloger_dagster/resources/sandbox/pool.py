"""Warm sandboxes across the runs of one process, each cleaned between its sessions.

A sandbox's start (bubblewrap or a container, then the interpreter's imports and `warmup`) costs
about a second of CPU, most of it before the first cell can run.  A `SandboxPool` keeps `depth`
sandboxes per configuration; the assets reach it as the `sandbox_pool` resource, named in their
signature, and pass it to `SandboxResource.session`.  A session takes one; when it ends, its sandbox's supervisor cleans it in the background (every process of the
session killed, every writable place emptied, the SysV IPC objects removed, /data emptied by the
host) and forks the next worker from its zygote, an interpreter warmed before any cell ran.  A
sandbox the supervisor cannot prove clean is stopped and a new one started in its place.

So each table gets a worker nobody ran a cell in, a /data and a /tmp with nothing of another
table's in them (tests/resources/sandbox/test_recycle.py tries what a table's cells could leave
for the next).  A session given no pool starts a sandbox of its own.

Who owns the pool sets how long it lives (`sandbox_pool_resource`): a run's own, started as the
run begins and stopped at its end (a run of `dagster dev`, or of `dg.materialize` with the
settings' resources), or one the caller opened for many runs (`cataloger run`: its tables, each
a run, share it; it stops the pool when it is done).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Hashable, Iterator, Optional

import dagster as dg

from .base import SandboxError, SandboxRuntime

if TYPE_CHECKING:
    from . import SandboxResource


class _Slot:
    """One sandbox being started (or cleaned) in the background, or ready, or whose start failed."""

    def __init__(self, future: "Future[SandboxRuntime]") -> None:
        self._future = future

    @property
    def error(self) -> Optional[BaseException]:
        return self._future.exception()

    def wait(self) -> Optional[SandboxRuntime]:
        """The started sandbox, or None if its start failed (the caller then starts one itself)."""
        return None if self._future.exception() is not None else self._future.result()

    def close(self) -> None:
        runtime = self.wait()
        if runtime is not None:
            runtime.close()


class SandboxPool:
    """`depth` sandboxes per configuration (the resource's settings and the session's env): those
    lent to a session and those spare, oldest spare handed out first."""

    def __init__(self, depth: int = 1) -> None:
        if depth < 1:
            raise ValueError(f"a sandbox pool keeps at least one spare, not {depth}")
        self.depth = depth
        self._lock = threading.Lock()
        self._spares: dict[Hashable, list[_Slot]] = {}
        self._lent: dict[Hashable, int] = {}  # reusable sandboxes in a session now
        self._closed = False
        # Sandboxes start in these threads, which live as long as the pool: bwrap's
        # --die-with-parent is the parent *thread*'s death, so a sandbox started in a thread
        # that ends at once would lose its bwrap (killed) and outlive it, reparented to init.
        self._starter = ThreadPoolExecutor(max_workers=depth, thread_name_prefix="cataloger-sandbox-pool")
        self.handed_out = 0  # sessions served warm from the pool
        self.started = 0  # sandboxes the pool started
        self.recycled = 0  # sandboxes cleaned for another session
        self.unclean = 0  # sandboxes stopped because they could not be cleaned
        self.last_unclean: Optional[str] = None  # why the last of those could not be

    def take(self, resource: "SandboxResource", env: dict[str, str]) -> SandboxRuntime:
        """A sandbox for this session (a spare if there is one, else a new one), and spares
        for the next sessions started in the background."""
        key = _key(resource, env)
        with self._lock:
            waiting = self._spares.get(key)
            slot = waiting.pop(0) if waiting else None
            self._lent[key] = self._lent.get(key, 0) + 1
            self._refill(key, resource, env)
        runtime = slot.wait() if slot is not None else None
        if runtime is None:
            # no spare yet, or its start failed: start one here, so that its error (if any) is the step's
            try:
                runtime = self._starter.submit(resource._open_private, dict(env), True).result()
            except BaseException:
                self._give_up(key, resource, env)
                raise
        else:
            self.handed_out += 1
        if not runtime.recyclable:
            self._give_up(key, resource, env)
        return runtime

    def give_back(self, resource: "SandboxResource", env: dict[str, str], runtime: SandboxRuntime) -> None:
        """The session is over: its sandbox is cleaned for the next one in the background, or stopped."""
        if not runtime.recyclable:
            runtime.close()
            return
        key = _key(resource, env)
        with self._lock:
            self._lent[key] -= 1
            keep = not self._closed and len(self._spares.get(key, [])) + self._lent[key] < self.depth
            if keep:
                self._spares.setdefault(key, []).append(
                    _Slot(self._starter.submit(self._recycle, resource, env, runtime))
                )
        if not keep:
            runtime.close()

    def prime(self, resource: "SandboxResource", env: dict[str, str]) -> None:
        """Start the spares for this configuration that are not there yet (as a run begins)."""
        key = _key(resource, env)
        with self._lock:
            self._refill(key, resource, env)

    def _recycle(self, resource: "SandboxResource", env: dict[str, str], runtime: SandboxRuntime) -> SandboxRuntime:
        try:
            clean = runtime.recycled()
        except SandboxError as exc:
            runtime.close()
            self.unclean += 1
            self.last_unclean = str(exc)
            self.started += 1
            return resource._open_private(dict(env), reusable=True)
        self.recycled += 1
        return clean

    def _give_up(self, key: Hashable, resource: "SandboxResource", env: dict[str, str]) -> None:
        """A session holds no reusable sandbox after all: one more spare may start in its place."""
        with self._lock:
            self._lent[key] -= 1
            self._refill(key, resource, env)

    def _refill(self, key: Hashable, resource: "SandboxResource", env: dict[str, str]) -> None:
        """Spares up to `depth`, less the sandboxes in a session (they come back cleaned)."""
        if self._closed:
            return
        waiting = self._spares.setdefault(key, [])
        while len(waiting) + self._lent.get(key, 0) < self.depth:
            # the resource's teardown after its run stops only its own spare, never the pool's
            waiting.append(_Slot(self._starter.submit(resource._open_private, dict(env), True)))
            self.started += 1

    def __enter__(self) -> "SandboxPool":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop every spare (a sandbox still being cleaned first finishes); sandboxes lent to a
        session are stopped as they come back."""
        with self._lock:
            self._closed = True
            slots = [slot for waiting in self._spares.values() for slot in waiting]
            self._spares = {}
        for slot in slots:
            slot.close()
        self._starter.shutdown(wait=True)


def _key(resource: "SandboxResource", env: dict[str, str]) -> Hashable:
    config = resource.model_dump(exclude={"prestart_env"})
    return tuple(sorted((k, repr(v)) for k, v in config.items())), tuple(sorted(env.items()))


def sandbox_pool_resource(
    prestart_env: Optional[dict[str, str]] = None, *, depth: int = 1, pool: Optional[SandboxPool] = None
) -> dg.ResourceDefinition:
    """The `sandbox_pool` resource: `pool`, kept by its caller across runs, or else a pool of
    `depth` the run opens as it begins and stops at its end.  With `prestart_env`, each run's
    start has the pool start a sandbox of the run's `sandbox` resource with this environment,
    so that its interpreter is warm by the time a step asks for a session."""

    def run_pool(context: dg.InitResourceContext) -> Iterator[SandboxPool]:
        current = pool if pool is not None else SandboxPool(depth)
        try:
            if prestart_env is not None:
                current.prime(context.resources.sandbox, prestart_env)
            yield current
        finally:
            if pool is None:
                current.close()
                if context.log:
                    context.log.info(
                        f"sandbox pool stopped: {current.handed_out} session(s) served warm, "
                        f"{current.started} sandbox(es) started, {current.recycled} cleaned for another session"
                    )

    return dg.ResourceDefinition(
        resource_fn=run_pool,
        required_resource_keys={"sandbox"},
        description="sandboxes started ahead and cleaned between sessions"
        + ("" if pool is None else ", kept across the runs of this process"),
    )


__all__ = ["SandboxPool", "sandbox_pool_resource", "SandboxError"]
