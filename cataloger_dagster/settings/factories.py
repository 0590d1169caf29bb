"""The resources built from the settings, and the resources of a run: `resources(settings)`.

Each factory takes the settings (default: the environment's) and the one value a caller may
give instead.  A secret (the database URL, an API key, a webhook URL, an SMTP password) reaches
Dagster only by the name of its variable (`dg.EnvVar`): Dagster stores every resource's
configured values in the job snapshot of each run and shows them in the UI, and reads a
`dg.EnvVar` from the environment only when the run starts.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from cataloger_dagster.resources.agent import AgentResource, HeuristicAgent
from cataloger_dagster.resources.agent.anthropic.agent import AnthropicAgent
from cataloger_dagster.resources.database.resource import DEFAULT_DATABASE_URL, DatabaseResource
from cataloger_dagster.resources.database.snapshots import SNAPSHOT_URL
from cataloger_dagster.resources.extras import MissingExtra, require
from cataloger_dagster.resources.io_manager import TableIOManager
from cataloger_dagster.resources.notifier import (
    JsonWebhookNotifier,
    NoNotifier,
    NotifierResource,
    SlackWebhookNotifier,
    SmtpNotifier,
)
from cataloger_dagster.resources.run_state import RunSharedState
from cataloger_dagster.resources.sandbox import SandboxResource
from cataloger_dagster.resources.sandbox.pool import SandboxPool, sandbox_pool_resource
from cataloger_dagster.resources.store import CatalogStore, store_from_url
from cataloger_dagster.settings.environment import (
    API_KEY_VARIABLE,
    CATALOG_VALUE_KEY_VARIABLE,
    anthropic_key_set,
    use_catalog_value_key,
    use_database,
)
from cataloger_dagster.settings.model import (
    DATABASE_VARIABLE,
    CatalogerSettings,
    SettingsError,
    settings_with,
    variable,
)


def database_resource(url: str | None = None, settings: CatalogerSettings | None = None) -> DatabaseResource:
    settings = settings_with(settings, database=url)
    if "database" not in settings.model_fields_set:
        return DatabaseResource(
            url=DEFAULT_DATABASE_URL,
            name=settings.name,
            sensitive_values=settings.sensitive_values,
            dbt_manifest=settings.dbt_manifest,
        )
    use_database(settings.database)
    # Dagster stores every resource's configured values in the job snapshot of each run
    # and shows them in the UI; a dg.EnvVar is stored and shown by its name, and read from
    # the environment only when the run starts.
    return DatabaseResource(
        url=dg.EnvVar(DATABASE_VARIABLE),
        name=settings.name,
        sensitive_values=settings.sensitive_values,
        dbt_manifest=settings.dbt_manifest,
    )


def plain_database(settings: CatalogerSettings | None = None) -> DatabaseResource:
    """The settings' database as a resource used outside Dagster (to list tables, to name the
    catalog, for the MCP server): the URL itself, which never reaches Dagster, the catalog's
    name and the sensitive-values policy."""
    settings = settings_with(settings)
    return DatabaseResource(url=settings.database, name=settings.name, sensitive_values=settings.sensitive_values)


def sensitive_key(settings: CatalogerSettings) -> Any:
    """The `hash` policy's key as the store takes it: when one is set (in the environment or in
    .env), by a variable's name (Dagster reads it at run time); else None (the store's own key of
    the catalog)."""
    if not settings.sensitive_key:
        return None
    use_catalog_value_key(settings.sensitive_key)
    return dg.EnvVar(CATALOG_VALUE_KEY_VARIABLE)


def run_sensitive_key(settings: CatalogerSettings) -> Any:
    """The `hash` policy's key as the resources without a store take it (the agent, the
    notifier), by a variable's name: the one set, else the store's key of the catalog, made
    this process's CATALOG_VALUE_KEY_VARIABLE; None under another policy (no key is used)."""
    if settings.sensitive_values != "hash":
        return None
    key = settings.sensitive_key or store_resource(settings=settings).value_key(plain_database(settings).database_name)
    use_catalog_value_key(key)
    return dg.EnvVar(CATALOG_VALUE_KEY_VARIABLE)


def store_resource(url: str | None = None, settings: CatalogerSettings | None = None) -> CatalogStore:
    settings = settings_with(settings, store=url)
    return store_from_url(
        settings.store, sensitive_values=settings.sensitive_values, sensitive_key=sensitive_key(settings)
    )


def agent_resource(kind: str | None = None, settings: CatalogerSettings | None = None) -> AgentResource:
    settings = settings_with(settings, agent=kind)
    if settings.agent == "heuristic":
        return HeuristicAgent(**_review_options(settings))
    return anthropic_agent(settings)


def _review_options(settings: CatalogerSettings) -> dict:
    # every agent applies the reviews alike (core.reviews.memory)
    return {
        "review_tolerance": settings.review_tolerance,
        "review_precision_dismissals": settings.review_precision_dismissals,
    }


# the AnthropicAgent fields the settings give, each from CATALOGER_ANTHROPIC_<FIELD>
ANTHROPIC_FIELDS = (
    "understanding_model",
    "issues_model",
    "investigation_model",
    "max_turns",
    "token_budget",
    "timeout_s",
    "max_retries",
    "temperature",
)


def anthropic_agent(settings: CatalogerSettings | None = None) -> AgentResource:
    settings = settings_with(settings)
    if not anthropic_key_set():
        raise SettingsError(
            "CATALOGER_AGENT=anthropic needs the ANTHROPIC_API_KEY environment variable: set it "
            "(and ANTHROPIC_BASE_URL to reach a proxy), or use CATALOGER_AGENT=heuristic"
        )
    _require("anthropic", "CATALOGER_AGENT=anthropic")
    options = {field: getattr(settings, f"anthropic_{field}") for field in ANTHROPIC_FIELDS}
    # dg.EnvVar: Dagster reads the key at run time and shows only the variable's name
    return AnthropicAgent(
        api_key=dg.EnvVar(API_KEY_VARIABLE),
        sensitive_values=settings.sensitive_values,
        sensitive_key=run_sensitive_key(settings),
        **options,
        **_review_options(settings),
    )


def _require(extra: str, what: str) -> None:
    try:
        require(extra, what)
    except MissingExtra as exc:
        raise SettingsError(str(exc)) from None


# The investigations' first cell imports ibis and queries DuckDB; a fresh
# interpreter spends most of a second on first-use costs (imports, the SQL
# compiler's set-up), so it starts on them while the snapshot is written.
IBIS_WARMUP = "import ibis\nibis.duckdb.connect().sql('SELECT 1 AS x').count().execute()\n"


def sandbox_resource(backend: str | None = None, settings: CatalogerSettings | None = None) -> SandboxResource:
    settings = settings_with(settings, sandbox=backend)
    if settings.sandbox == "docker":
        _require("docker", "CATALOGER_SANDBOX=docker")
    return SandboxResource(
        backend=settings.sandbox,
        isolation=settings.sandbox_isolation,
        image=settings.sandbox_image,
        warmup=IBIS_WARMUP,
    )


def sandbox_pool(settings: CatalogerSettings | None = None, pool: SandboxPool | None = None) -> dg.ResourceDefinition:
    """The investigations' sandboxes: `pool`, kept by the caller across its runs, or else one
    each run opens and stops.  The investigations' sandbox starts with the run, warm by the
    time that step comes (CATALOGER_SANDBOX_PRESTART)."""
    settings = settings_with(settings)
    prestart = {"DB_CONNECTION_STRING": SNAPSHOT_URL} if settings.sandbox_prestart else None
    return sandbox_pool_resource(prestart, pool=pool)


def notifier_resource(settings: CatalogerSettings | None = None) -> NotifierResource:
    """The notifier of CATALOGER_ALERT_NOTIFIER; its secrets reach Dagster only by their variable's name."""
    settings = settings_with(settings)
    retry: dict[str, Any] = {"attempts": settings.alert_attempts, "backoff_s": settings.alert_backoff_s}
    kind = settings.alert_notifier
    if kind != "none":  # the alerts' text under the store's policy
        retry.update(sensitive_values=settings.sensitive_values, sensitive_key=run_sensitive_key(settings))
    if kind in ("slack", "webhook"):
        if not settings.alert_webhook_url:
            raise SettingsError(
                f"CATALOGER_ALERT_NOTIFIER={kind} needs {variable('alert_webhook_url')}: set it "
                "to the webhook's URL, or set CATALOGER_ALERT_NOTIFIER=none"
            )
        backend = SlackWebhookNotifier if kind == "slack" else JsonWebhookNotifier
        return backend(url=dg.EnvVar(variable("alert_webhook_url")), **retry)
    if kind == "email":
        recipients = [r.strip() for r in (settings.alert_email_to or "").split(",") if r.strip()]
        if not settings.alert_smtp_host or not recipients:
            raise SettingsError(
                f"CATALOGER_ALERT_NOTIFIER=email needs {variable('alert_smtp_host')} and "
                f"{variable('alert_email_to')}: set them, or set CATALOGER_ALERT_NOTIFIER=none"
            )
        password = dg.EnvVar(variable("alert_smtp_password")) if settings.alert_smtp_password else None
        return SmtpNotifier(
            host=settings.alert_smtp_host,
            port=settings.alert_smtp_port,
            starttls=settings.alert_smtp_tls == "starttls",
            username=settings.alert_smtp_user,
            password=password,
            sender=settings.alert_email_from,
            recipients=recipients,
            **retry,
        )
    return NoNotifier(**retry)


def resources(
    settings: CatalogerSettings | None = None,
    *,
    database: str | None = None,
    store: str | None = None,
    agent: str | None = None,
    sandbox: str | None = None,
    kept_sandboxes: SandboxPool | None = None,
) -> dict:
    """The resources of `settings` (default: the environment's), with the given values instead;
    `kept_sandboxes`: a pool the caller keeps across its runs (default: one per run)."""
    settings = settings_with(settings, database=database, store=store, agent=agent, sandbox=sandbox)
    return {
        "database": database_resource(settings=settings),
        "store": store_resource(settings=settings),
        "agent": agent_resource(settings=settings),
        "sandbox": sandbox_resource(settings=settings),
        "sandbox_pool": sandbox_pool(settings, kept_sandboxes),
        "notifier": notifier_resource(settings),
        # table names as partition keys never become raw paths (see TableIOManager)
        "io_manager": TableIOManager(),
        # shared by the tables these resources catalog, one after another (resources/run_state.py)
        "run_state": RunSharedState(),
    }
