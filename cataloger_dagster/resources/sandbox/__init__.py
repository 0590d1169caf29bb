"""SandboxResource: a persistent, isolated Python interpreter per table session."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Literal, Optional

import dagster as dg

from .base import Cell, ErrorInfo, ExecutionResult, SandboxError, SandboxRuntime

DEFAULT_IMAGE = "cataloger-sandbox:latest"

__all__ = ["SandboxResource", "SandboxRuntime", "ExecutionResult", "ErrorInfo", "Cell",
           "SandboxError", "DEFAULT_IMAGE"]


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

    def open_session(self, data_dir: str, env: Optional[dict[str, str]] = None) -> SandboxRuntime:
        """A started runtime; the caller must ``close()`` it (``session`` does)."""
        env = dict(env or {})
        if self.backend == "local":
            from .local import start_local

            def start():
                return start_local(data_dir=str(data_dir), env=env, isolation=self.isolation,
                                   memory_mb=self.memory_mb, pids=self.pids, timeout_s=self.timeout_s,
                                   tmp_size_mb=self.tmp_size_mb, output_cap_bytes=self.output_cap_bytes,
                                   warmup=self.warmup)
        elif self.backend == "docker":
            from .docker import start_docker

            def start():
                return start_docker(data_dir=str(data_dir), env=env, image=self.image,
                                    memory_mb=self.memory_mb, pids=self.pids, cpus=self.cpus,
                                    timeout_s=self.timeout_s, tmp_size_mb=self.tmp_size_mb,
                                    output_cap_bytes=self.output_cap_bytes, warmup=self.warmup)
        else:  # pragma: no cover - pydantic rejects it first
            raise SandboxError(f"unknown sandbox backend {self.backend!r}: use 'local' or 'docker'")
        return SandboxRuntime(start, timeout_s=self.timeout_s, output_cap_bytes=self.output_cap_bytes,
                              label=f"{self.backend} sandbox, data {data_dir}")

    @contextmanager
    def session(self, data_dir: str, env: Optional[dict[str, str]] = None) -> Iterator[SandboxRuntime]:
        runtime = self.open_session(data_dir, env)
        try:
            yield runtime
        finally:
            runtime.close()
