"""Settings from the environment (a `.env` file in the working directory is read too).

Every setting has an embedded default that needs nothing beyond `pip install`:
the demo DuckDB database, a local store, the heuristic agent.
"""

from __future__ import annotations

import os

import dagster as dg

from cataloger_dagster.resources.agent import AgentResource, HeuristicAgent
from cataloger_dagster.resources.database import DEFAULT_DATABASE_URL, DatabaseResource
from cataloger_dagster.resources.sandbox import DEFAULT_IMAGE, SandboxResource
from cataloger_dagster.resources.script_store import ScriptStore, script_store_from_url

DEFAULT_STORE = "catalog"


def _env(name: str, default: str) -> str | dg.EnvVar:
    # dg.EnvVar keeps the value (a URL may hold a password) out of the UI's config view
    return dg.EnvVar(name) if os.environ.get(name) else default


def database_resource(url: str | None = None) -> DatabaseResource:
    return DatabaseResource(url=url if url is not None else _env("CATALOGER_DATABASE", DEFAULT_DATABASE_URL))


def store_resource(url: str | None = None) -> ScriptStore:
    return script_store_from_url(url or os.environ.get("CATALOGER_STORE") or DEFAULT_STORE)


def agent_resource(kind: str | None = None) -> AgentResource:
    kind = (kind or os.environ.get("CATALOGER_AGENT") or "heuristic").lower()
    if kind == "heuristic":
        return HeuristicAgent()
    raise ValueError(f"unknown CATALOGER_AGENT {kind!r}: use 'heuristic'")


def sandbox_resource(backend: str | None = None) -> SandboxResource:
    backend = (backend or os.environ.get("CATALOGER_SANDBOX") or "local").lower()
    isolation = os.environ.get("CATALOGER_SANDBOX_ISOLATION") or "bwrap"
    image = os.environ.get("CATALOGER_SANDBOX_IMAGE") or DEFAULT_IMAGE
    if backend not in ("local", "docker"):
        raise ValueError(f"unknown CATALOGER_SANDBOX {backend!r}: use 'local' or 'docker'")
    if isolation not in ("bwrap", "none"):
        raise ValueError(f"unknown CATALOGER_SANDBOX_ISOLATION {isolation!r}: use 'bwrap' or 'none'")
    # the investigations' first cell imports ibis: start loading it with the interpreter
    return SandboxResource(backend=backend, isolation=isolation, image=image, preload=["ibis"])


def resources(
    *, database: str | None = None, store: str | None = None, agent: str | None = None,
    sandbox: str | None = None,
) -> dict:
    return {
        "database": database_resource(database),
        "store": store_resource(store),
        "agent": agent_resource(agent),
        "sandbox": sandbox_resource(sandbox),
    }
