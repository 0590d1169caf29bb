"""Settings from the environment (a `.env` file in the working directory is read too).

Every setting has an embedded default that needs nothing beyond `pip install`:
the demo DuckDB database, a local store, the heuristic agent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import dagster as dg

from cataloger_dagster.resources.agent import AgentResource, HeuristicAgent
from cataloger_dagster.resources.database import DEFAULT_DATABASE_URL, SNAPSHOT_URL, DatabaseResource
from cataloger_dagster.resources.io_manager import TableIOManager
from cataloger_dagster.resources.sandbox import DEFAULT_IMAGE, SandboxResource
from cataloger_dagster.resources.script_store import ScriptStore, script_store_from_url

DEFAULT_STORE = "catalog"


def env_number(env: Mapping[str, str], name: str, default: float, *, whole: bool = True,
               low: float | None = None, high: float | None = None, example: str = "") -> float:
    """A number from `env[name]` (blank: `default`), with an error that says what to set."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw) if whole else float(raw)
    except ValueError:
        kind = "a whole number" if whole else "a number"
        raise ValueError(f"{name}={raw!r} is not {kind}: set it to {example}") from None
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name}={value} must be {bounds}")
    return value


DATABASE_VARIABLE = "CATALOGER_DATABASE"


def _env(name: str, default: str) -> str | dg.EnvVar:
    # Dagster stores every resource's configured values in the job snapshot of each run
    # and shows them in the UI; a dg.EnvVar is stored and shown by its name, and read from
    # the environment only when the run starts.
    return dg.EnvVar(name) if os.environ.get(name) else default


def use_database(url: str | None) -> None:
    """Make `url` this process's CATALOGER_DATABASE, the only way a URL reaches Dagster.

    A database URL may hold a password: given to a resource as a plain string, it would be
    kept in Dagster's run storage (the job snapshot).  One database per process, then.
    """
    if url is not None:
        os.environ[DATABASE_VARIABLE] = url


def database_url(url: str | None = None) -> str:
    return url or os.environ.get(DATABASE_VARIABLE) or DEFAULT_DATABASE_URL


def database_resource(url: str | None = None) -> DatabaseResource:
    use_database(url)
    return DatabaseResource(url=_env(DATABASE_VARIABLE, DEFAULT_DATABASE_URL))


def store_resource(url: str | None = None) -> ScriptStore:
    return script_store_from_url(url or os.environ.get("CATALOGER_STORE") or DEFAULT_STORE)


def agent_resource(kind: str | None = None) -> AgentResource:
    kind = (kind or os.environ.get("CATALOGER_AGENT") or "heuristic").lower()
    if kind == "heuristic":
        return HeuristicAgent()
    if kind == "anthropic":
        return anthropic_agent()
    raise ValueError(f"unknown CATALOGER_AGENT {kind!r}: use 'heuristic' or 'anthropic'")


# optional overrides of AnthropicAgent's fields: env var -> (field, type)
ANTHROPIC_SETTINGS = {
    "CATALOGER_ANTHROPIC_UNDERSTANDING_MODEL": ("understanding_model", str),
    "CATALOGER_ANTHROPIC_ISSUES_MODEL": ("issues_model", str),
    "CATALOGER_ANTHROPIC_INVESTIGATION_MODEL": ("investigation_model", str),
    "CATALOGER_ANTHROPIC_MAX_TURNS": ("max_turns", int),
    "CATALOGER_ANTHROPIC_TOKEN_BUDGET": ("token_budget", int),
    "CATALOGER_ANTHROPIC_TIMEOUT_S": ("timeout_s", float),
    "CATALOGER_ANTHROPIC_MAX_RETRIES": ("max_retries", int),
    "CATALOGER_ANTHROPIC_TEMPERATURE": ("temperature", float),
}


def anthropic_agent() -> AgentResource:
    from cataloger_dagster.resources.agent.anthropic.agent import AnthropicAgent

    if not os.environ.get("ANTHROPIC_API_KEY"):
        raise ValueError("CATALOGER_AGENT=anthropic needs the ANTHROPIC_API_KEY environment variable: set it "
                         "(and ANTHROPIC_BASE_URL to reach a proxy), or use CATALOGER_AGENT=heuristic")
    options = {}
    for name, (field, kind) in ANTHROPIC_SETTINGS.items():
        if os.environ.get(name):
            try:
                options[field] = kind(os.environ[name])
            except ValueError:
                raise ValueError(f"{name}={os.environ[name]!r} is not a valid {kind.__name__}") from None
    # dg.EnvVar: Dagster reads the key at run time and shows only the variable's name
    return AnthropicAgent(api_key=dg.EnvVar("ANTHROPIC_API_KEY"), **options)


# The investigations' first cell imports ibis and queries DuckDB; a fresh
# interpreter spends most of a second on first-use costs (imports, the SQL
# compiler's set-up), so it starts on them while the snapshot is written.
IBIS_WARMUP = "import ibis\nibis.duckdb.connect().sql('SELECT 1 AS x').count().execute()\n"


def sandbox_resource(backend: str | None = None) -> SandboxResource:
    backend = (backend or os.environ.get("CATALOGER_SANDBOX") or "local").lower()
    isolation = os.environ.get("CATALOGER_SANDBOX_ISOLATION") or "bwrap"
    image = os.environ.get("CATALOGER_SANDBOX_IMAGE") or DEFAULT_IMAGE
    if backend not in ("local", "docker"):
        raise ValueError(f"unknown CATALOGER_SANDBOX {backend!r}: use 'local' or 'docker'")
    if isolation not in ("bwrap", "none"):
        raise ValueError(f"unknown CATALOGER_SANDBOX_ISOLATION {isolation!r}: use 'bwrap' or 'none'")
    # the investigations' sandbox starts with the run, warm by the time that step comes
    prestart = (os.environ.get("CATALOGER_SANDBOX_PRESTART") or "1").lower() not in ("0", "false", "no")
    return SandboxResource(backend=backend, isolation=isolation, image=image, warmup=IBIS_WARMUP,
                           prestart_env={"DB_CONNECTION_STRING": SNAPSHOT_URL} if prestart else None)


def resources(
    *, database: str | None = None, store: str | None = None, agent: str | None = None,
    sandbox: str | None = None,
) -> dict:
    return {
        "database": database_resource(database),
        "store": store_resource(store),
        "agent": agent_resource(agent),
        "sandbox": sandbox_resource(sandbox),
        # table names as partition keys never become raw paths (see TableIOManager)
        "io_manager": TableIOManager(),
    }
