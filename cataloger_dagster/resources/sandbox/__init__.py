"""SandboxResource: a persistent, isolated Python interpreter per table session."""

from __future__ import annotations

import shutil
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, Literal, Optional

import dagster as dg
from pydantic import PrivateAttr

from cataloger_dagster.resources.defaults import SANDBOX_IMAGE as DEFAULT_IMAGE

from .base import Cell, ErrorInfo, ExecutionResult, SandboxError, SandboxRuntime
from .datadir import make_private_dir, remove_stale

if TYPE_CHECKING:
    from .pool import SandboxPool

__all__ = ["SandboxResource", "SandboxRuntime", "ExecutionResult", "ErrorInfo", "Cell", "SandboxError", "DEFAULT_IMAGE"]


class SandboxResource(dg.ConfigurableResource):
    """Where the agents' untrusted Python runs; one session per table."""

    backend: Literal["local", "docker"] = "local"
    isolation: Literal["bwrap", "none"] = "bwrap"
    image: str = DEFAULT_IMAGE
    timeout_s: float = 30.0
    memory_mb: int = 2048
    pids: int = 256
    cpus: float = 1.0
    output_cap_bytes: int = 1024 * 1024
    tmp_size_mb: int = 256
    # code the interpreter runs at once in the background (heavy imports, a first
    # query), in its own namespace, so that the first cells need not wait for them
    warmup: str = ""
    # With this set, a sandbox with this environment starts as the run starts, so that
    # its interpreter is warm (imports, `warmup`) by the time a step asks for a session:
    # in an in-process run the earlier steps hide its start.  Only a session that asks
    # for no data_dir of its own (and the same env) is given it.  For a resource used
    # alone; the settings' resources start theirs through the `sandbox_pool` resource.
    prestart_env: Optional[dict[str, str]] = None

    _spare: Optional[SandboxRuntime] = PrivateAttr(default=None)
    _spare_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        if self.prestart_env is None:
            return
        try:
            self._spare = self._open_private(self.prestart_env)
        except SandboxError as exc:
            # not fatal here: the step that needs a sandbox starts one and reports the error itself
            if context.log:
                context.log.warning(f"could not start a sandbox ahead of time: {exc}")

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        with self._spare_lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            spare.close()

    def open_session(
        self, data_dir: str, env: Optional[dict[str, str]] = None, reusable: bool = False
    ) -> SandboxRuntime:
        """A started runtime; the caller must ``close()`` it (``session`` does).  A `reusable` one
        keeps a zygote (an interpreter with `warmup` done) that forks each session's worker, and
        can be cleaned for another session (``runtime.recycled()``)."""
        env = dict(env or {})
        remove_stale()  # what a killed run left in /tmp
        if self.backend == "local":
            from .local import start_local

            def start():
                return start_local(
                    data_dir=str(data_dir),
                    env=env,
                    isolation=self.isolation,
                    memory_mb=self.memory_mb,
                    pids=self.pids,
                    timeout_s=self.timeout_s,
                    tmp_size_mb=self.tmp_size_mb,
                    output_cap_bytes=self.output_cap_bytes,
                    warmup=self.warmup,
                    zygote=reusable,
                )
        elif self.backend == "docker":
            from .docker import start_docker

            def start():
                return start_docker(
                    data_dir=str(data_dir),
                    env=env,
                    image=self.image,
                    memory_mb=self.memory_mb,
                    pids=self.pids,
                    cpus=self.cpus,
                    timeout_s=self.timeout_s,
                    tmp_size_mb=self.tmp_size_mb,
                    output_cap_bytes=self.output_cap_bytes,
                    warmup=self.warmup,
                    zygote=reusable,
                )
        else:  # pragma: no cover - pydantic rejects it first
            raise SandboxError(f"unknown sandbox backend {self.backend!r}: use 'local' or 'docker'")
        runtime = SandboxRuntime(
            start, timeout_s=self.timeout_s, output_cap_bytes=self.output_cap_bytes, label=f"{self.backend} sandbox"
        )
        runtime.data_dir = str(data_dir)
        return runtime

    @contextmanager
    def session(
        self,
        data_dir: Optional[str] = None,
        env: Optional[dict[str, str]] = None,
        pool: Optional["SandboxPool"] = None,
    ) -> Iterator[SandboxRuntime]:
        """A session over `data_dir`, or, without one, over a private folder of its own
        (``runtime.data_dir``, empty, 0700 for the sandbox's user, removed afterwards) for
        the caller to fill.  Such a session takes its sandbox from `pool` (the `sandbox_pool`
        resource), warm and cleaned of any earlier session, and gives it back at its end."""
        runtime: Optional[SandboxRuntime]
        if data_dir is not None:
            runtime = self.open_session(data_dir, env)
        else:
            runtime = self._take_spare(env or {})
            if runtime is None and pool is not None:
                runtime = pool.take(self, env or {})
                try:
                    yield runtime
                finally:
                    pool.give_back(self, env or {}, runtime)
                return
            runtime = runtime or self._open_private(env or {})
        try:
            yield runtime
        finally:
            runtime.close()

    def _take_spare(self, env: dict[str, str]) -> Optional[SandboxRuntime]:
        with self._spare_lock:
            if self._spare is None or env != self.prestart_env:
                return None
            spare, self._spare = self._spare, None
            return spare

    def _open_private(self, env: dict[str, str], reusable: bool = False) -> SandboxRuntime:
        data_dir = make_private_dir()
        try:
            runtime = self.open_session(data_dir, env, reusable)
        except BaseException:
            shutil.rmtree(data_dir, ignore_errors=True)
            raise
        runtime.on_close(lambda: shutil.rmtree(data_dir, ignore_errors=True))
        return runtime
