"""Every setting, in one object read from the environment (and a `.env` file in the working directory).

`CatalogerSettings` is read once, by `definitions.py` (the code location) and by the
`cataloger` command, and passed to what needs it: the resources built here, the sensors,
the schedule and the asset checks.  No other module of the package reads the environment
(tests/test_settings.py checks it).  Every setting has an embedded default that needs
nothing beyond `pip install`: the demo DuckDB database, a local store, the heuristic agent.

The settings table of docs/settings.md and `.env.example` are generated from the fields
(`settings_table`, `env_example`); tests/test_settings.py fails when they drift.

A database URL may hold a password, so it reaches Dagster only by the name of its
variable (`dg.EnvVar("CATALOGER_DATABASE")`); the settings hold it for listing tables.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Optional

import dagster as dg
from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from cataloger_dagster.core.redaction import environment_secrets
from cataloger_dagster.resources.agent import AgentResource, HeuristicAgent
from cataloger_dagster.resources.agent.anthropic.agent import AnthropicAgent
from cataloger_dagster.resources.database import DEFAULT_DATABASE_URL, SNAPSHOT_URL, DatabaseResource
from cataloger_dagster.resources.defaults import DEBIAN_MIRROR, DEFAULT_STORE
from cataloger_dagster.resources.extras import MissingExtra, require
from cataloger_dagster.resources.io_manager import TableIOManager
from cataloger_dagster.resources.run_state import RunSharedState
from cataloger_dagster.resources.notifier import (
    JsonWebhookNotifier,
    NoNotifier,
    NotifierResource,
    SlackWebhookNotifier,
    SmtpNotifier,
)
from cataloger_dagster.resources.sandbox import DEFAULT_IMAGE, SandboxResource
from cataloger_dagster.resources.store import CatalogStore, store_from_url

PREFIX = "CATALOGER_"
DATABASE_VARIABLE = "CATALOGER_DATABASE"
API_KEY_VARIABLE = "ANTHROPIC_API_KEY"


def _agent_default(field: str) -> Any:
    # AnthropicAgent's own defaults, so that the two cannot disagree
    return AnthropicAgent.model_fields[field].default


def _hint(text: str) -> dict:
    """What to set, for the error message of a value that is not a number."""
    return {"hint": text}


class CatalogerSettings(BaseSettings):
    """The settings; each field is the environment variable CATALOGER_<FIELD NAME>."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX,
        env_file=".env",
        env_file_encoding="utf-8",
        # CATALOGER_TEST_* and other variables of the tests or of later versions are not errors
        extra="ignore",
        frozen=True,
    )

    database: str = Field(
        DEFAULT_DATABASE_URL,
        repr=False,
        description="the database to catalog, any ibis URL: `duckdb://`, `sqlite://`, "
        "`postgres://user:pw@host/db?schema=s`, `mysql://user:pw@host/db` (the `mysql` extra)",
    )
    name: Optional[str] = Field(
        None,
        description="the catalog's name, its folder in the store (`--name`); default: the database file's "
        "name with its extension (`bikes.duckdb`), or a server's `host_port/database/schema`.  A catalog holds one "
        "database's results: a name another database already uses is refused unless given here",
    )
    database_concurrency: int = Field(
        4,
        ge=1,
        json_schema_extra=_hint("a number of runs, e.g. 4"),
        description="how many catalog runs may query the database at once: the limit of its Dagster pool "
        "`cataloger/<database>` (runs beyond it wait queued; needs dagster.yaml's `concurrency: pools: "
        "granularity: run`, as in deploy/dagster.yaml).  Set, the sensors apply it on each tick; unset, it is "
        "only the first limit of a pool that has none, so one set in the UI or with `dagster instance "
        "concurrency set` stays",
    )
    store: str = Field(
        DEFAULT_STORE, description="where catalog pages, results and scripts go: a folder, or `s3://bucket/prefix`"
    )
    reviewer: Optional[str] = Field(
        None,
        description="who `cataloger review` and the `review_issue` job record as the reviewer when "
        "none is given (default: the OS user)",
    )
    agent: Literal["heuristic", "anthropic"] = Field(
        "heuristic", description="`heuristic` (offline) or `anthropic` (needs `ANTHROPIC_API_KEY`)"
    )
    anthropic_understanding_model: str = Field(
        _agent_default("understanding_model"), description="the Anthropic agent's model that describes a table"
    )
    anthropic_issues_model: str = Field(
        _agent_default("issues_model"), description="the Anthropic agent's model that reviews the issues"
    )
    anthropic_investigation_model: str = Field(
        _agent_default("investigation_model"),
        description="the Anthropic agent's model that investigates (the strongest: it writes the code)",
    )
    anthropic_max_turns: int = Field(
        _agent_default("max_turns"),
        json_schema_extra=_hint("a number of turns, e.g. 12"),
        description="turns of the investigation tool loop; past them the heuristics finish the table",
    )
    anthropic_token_budget: int = Field(
        _agent_default("token_budget"),
        json_schema_extra=_hint("a number of tokens, e.g. 400000"),
        description="tokens the investigation tool loop may use per table; past them the heuristics finish it",
    )
    anthropic_timeout_s: float = Field(
        _agent_default("timeout_s"),
        json_schema_extra=_hint("a number of seconds, e.g. 120"),
        description="seconds before an Anthropic API call times out",
    )
    anthropic_max_retries: int = Field(
        _agent_default("max_retries"),
        json_schema_extra=_hint("a number of retries, e.g. 2"),
        description="retries of a failed Anthropic API call (by the SDK) before the heuristics take over",
    )
    anthropic_temperature: Optional[float] = Field(
        _agent_default("temperature"),
        json_schema_extra=_hint("a number, e.g. 0.2"),
        description="sampling temperature, sent only when set (the current API rejects it; for proxies that accept it)",
    )
    pass_rate_threshold: float = Field(
        0.8,
        ge=0.0,
        le=1.0,
        json_schema_extra=_hint("a share of investigations, such as 0.8"),
        description="below it `pass_rate_sensor` reruns the table with `explore` (relearning), and the "
        "`pass_rate_at_least_threshold` check fails",
    )
    relearn_cooldown_s: int = Field(
        3600,
        ge=0,
        json_schema_extra=_hint("a number of seconds, e.g. 3600"),
        description="seconds between two relearning runs of a table, so that one that keeps failing does not loop",
    )
    relearn_max_attempts: int = Field(
        2,
        ge=0,
        json_schema_extra=_hint("a number of runs, e.g. 2"),
        description="relearning runs per table fingerprint; then it waits until the data changes",
    )
    review_tolerance: float = Field(
        0.5,
        ge=0.0,
        json_schema_extra=_hint("a share of rows, such as 0.5"),
        description="a dismissed finding stays quiet while its affected rows grow by at most this share (0.5: "
        '+50%) and it touches no new column; beyond, it comes back "worse since dismissed"; an expected one '
        "comes back on a change of this share either way",
    )
    review_precision_dismissals: int = Field(
        3,
        ge=0,
        json_schema_extra=_hint("a number of dismissals, e.g. 3"),
        description="after this many dismissals of a detector on similar columns (same kind and semantic type) "
        "of the database, its findings there are one severity lower, and its low ones are no longer raised "
        "(0: never)",
    )
    sandbox: Literal["local", "docker"] = Field(
        "local", description="where investigations run: `local` (bubblewrap) or `docker`"
    )
    sandbox_isolation: Literal["bwrap", "none"] = Field(
        "bwrap", description="`none` runs the local sandbox without bubblewrap (with a warning)"
    )
    sandbox_image: str = Field(
        DEFAULT_IMAGE, description="the Docker backend's image (`cataloger sandbox build-image`)"
    )
    sandbox_prestart: bool = Field(
        True,
        description="start the investigations' sandbox as each run begins, so its interpreter is "
        "warm when the step comes (`0`: started by the step)",
    )
    sandbox_recipe: Optional[Path] = Field(
        None,
        description="the folder holding the sandbox image's Dockerfile (default: the one shipped with the package)",
    )
    debian_mirror: str = Field(
        DEBIAN_MIRROR, description="the Debian mirror of `cataloger sandbox build-image --debootstrap-base`"
    )
    run_batch: int = Field(
        20,
        ge=1,
        json_schema_extra=_hint("a number of tables, e.g. 20"),
        description="tables `cataloger run` catalogs per Dagster run (a range of partitions; a table that "
        "fails is run again alone, so it never fails another)",
    )
    run_jobs: int = Field(
        1,
        ge=1,
        json_schema_extra=_hint("a number of processes, e.g. 2"),
        description="Dagster runs `cataloger run` makes at once, one worker process each (with DAGSTER_HOME "
        "set; the database's pool limit still holds)",
    )
    sensor_interval_s: int = Field(
        300,
        ge=1,
        json_schema_extra=_hint("a number of seconds, e.g. 300"),
        description="seconds between two looks of `database_change_sensor` for new, changed and dropped "
        "tables (and between two ticks of `pass_rate_sensor`)",
    )
    refresh_cron: str = Field(
        "0 3 * * *", description="when the refresh schedule (off by default) recatalogs every table"
    )
    freshness_hours: float = Field(
        48.0,
        gt=0.0,
        json_schema_extra=_hint("a number of hours, e.g. 48"),
        description="the `catalog_is_fresh` check warns when a table was last profiled longer ago than this",
    )
    table_owners: dict[str, str] = Field(
        {},
        json_schema_extra=_hint('a JSON object, e.g. {"orders": "team-sales"}'),
        description="who owns which table, as a JSON object from table name to owner (`*`: every other "
        "table); `alert_sensor` groups its messages by owner",
    )
    table_lineage: bool = Field(
        False,
        description="draw the references the catalog found between tables (a column whose values are "
        "another table's keys) as lineage between the tables' assets in Dagster's catalog (`catalog/<database>/"
        "<table>`; `1` to turn on)",
    )
    sensitive_values: Literal["mask", "hash", "drop"] = Field(
        "mask",
        description="what the values of a column holding personal or secret data become wherever they "
        "leave the database (pages, sample rows, prompts, MCP results, alerts, logs): `mask` keeps their "
        "shape (`xxxx@xxxxxxx.xxx`), `hash` a digest equal for equal values, `drop` nothing",
    )
    alert_notifier: Literal["none", "slack", "webhook", "email"] = Field(
        "none",
        description="where `alert_sensor` sends alerts: `slack` (a Slack-compatible incoming webhook), "
        "`webhook` (JSON POSTed to a URL), `email` (SMTP) or `none`",
    )
    alert_webhook_url: Optional[str] = Field(
        None,
        repr=False,
        description="the `slack` or `webhook` notifier's URL; a credential: read by Dagster "
        "through `dg.EnvVar`, never logged or stored",
    )
    alert_smtp_host: Optional[str] = Field(None, description="the `email` notifier's SMTP server")
    alert_smtp_port: int = Field(
        25, ge=1, le=65535, json_schema_extra=_hint("a port, e.g. 587"), description="the SMTP server's port"
    )
    alert_smtp_tls: Literal["none", "starttls"] = Field(
        "none", description="`starttls` upgrades the SMTP connection with STARTTLS before logging in"
    )
    alert_smtp_user: Optional[str] = Field(None, description="the SMTP login, when the server wants one")
    alert_smtp_password: Optional[str] = Field(
        None, repr=False, description="the SMTP password; read by Dagster through `dg.EnvVar`, never logged or stored"
    )
    alert_email_from: str = Field("cataloger@localhost", description="the alerts' sender address")
    alert_email_to: Optional[str] = Field(None, description="the alerts' recipients, separated by commas")
    alert_attempts: int = Field(
        3,
        ge=1,
        json_schema_extra=_hint("a number of tries, e.g. 3"),
        description="tries of one delivery (with doubling backoff) before it is recorded "
        "as failed in `<store>/<database>/alerts/`",
    )
    alert_backoff_s: float = Field(
        1.0,
        ge=0.0,
        json_schema_extra=_hint("a number of seconds, e.g. 1"),
        description="seconds before the second try of a delivery, doubled each time",
    )

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, data: Any) -> Any:
        # as before this object: "VAR=" or "VAR= " means the default, and " 45 " means 45
        if not isinstance(data, dict):
            return data
        return {
            k: v.strip() if isinstance(v, str) else v
            for k, v in data.items()
            if not (isinstance(v, str) and not v.strip())
        }

    @field_validator("agent", "sandbox", "alert_notifier", mode="before")
    @classmethod
    def _any_case(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @field_validator("sandbox_prestart", mode="before")
    @classmethod
    def _off_only_when_said(cls, value: Any) -> Any:
        # only 0, false and no turn it off, as documented since the setting exists
        return value.lower() not in ("0", "false", "no") if isinstance(value, str) else value

    def replace(self, **values: Any) -> CatalogerSettings:
        """These settings with the given values (None: unchanged), validated; the environment is not read again."""
        given = {k: v for k, v in values.items() if v is not None}
        if not given:
            return self
        return _validated(lambda: type(self).model_validate({**self.model_dump(exclude_unset=True), **given}))


class SettingsError(ValueError):
    """A setting's value is not valid; the message names each variable and what to set."""


def variable(field: str) -> str:
    """The environment variable of a field."""
    return PREFIX + field.upper()


def default(field: str) -> Any:
    return CatalogerSettings.model_fields[field].default


def _problem(error: dict) -> str:
    field = str(error["loc"][0]) if error.get("loc") else ""
    name = variable(field) if field in CatalogerSettings.model_fields else field
    raw, kind, ctx = error.get("input"), error["type"], error.get("ctx") or {}
    info = CatalogerSettings.model_fields.get(field)
    extra = info.json_schema_extra if info else None  # a dict here, never the callable pydantic allows
    hint = (extra.get("hint") if isinstance(extra, dict) else None) or "a valid value"
    if kind in ("int_parsing", "int_from_float", "int_type"):
        return f"{name}={raw!r} is not a whole number: set it to {hint}"
    if kind in ("float_parsing", "float_type", "finite_number"):
        return f"{name}={raw!r} is not a number: set it to {hint}"
    if kind in ("greater_than_equal", "less_than_equal"):
        low, high = _bounds(field)
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        return f"{name}={raw} must be {bounds}"
    if kind == "literal_error":
        return f"unknown {name} {raw!r}: use {ctx.get('expected', 'one of the documented values')}"
    return f"{name}={raw!r}: {error['msg']}"


def _bounds(field: str) -> tuple[Any, Any]:
    low = high = None
    for rule in CatalogerSettings.model_fields[field].metadata:
        low = getattr(rule, "ge", low)
        high = getattr(rule, "le", high)
    return low, high


def _validated(make):
    try:
        return make()
    except ValidationError as exc:
        raise SettingsError("; ".join(_problem(e) for e in exc.errors())) from None


def load_settings(**overrides: Any) -> CatalogerSettings:
    """The settings from the environment and `.env` (the environment wins), with `overrides`
    (None: not overridden) above both; a clear error for any invalid value."""
    return _validated(lambda: CatalogerSettings(**{k: v for k, v in overrides.items() if v is not None}))


def _settings(settings: CatalogerSettings | None, **overrides: Any) -> CatalogerSettings:
    # the helpers below also serve tests and scripts that give no settings: the environment, then
    return load_settings(**overrides) if settings is None else settings.replace(**overrides)


# ---------------------------------------------------------------- variables of other programs
# Read by their own programs too; the package looks at them only here.


def dagster_home() -> str | None:
    """DAGSTER_HOME: Dagster's own variable (DagsterInstance.get() reads it)."""
    return os.environ.get("DAGSTER_HOME") or None


def python_environment(first_path: str) -> dict[str, str]:
    """This process's environment for a child Python that imports from `first_path` first (the
    folder holding this package: a checkout run in place, not only an installed one)."""
    paths = [first_path, os.environ.get("PYTHONPATH")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def use_database(url: str | None) -> None:
    """Make `url` this process's CATALOGER_DATABASE, the only way a URL reaches Dagster.

    A database URL may hold a password: given to a resource as a plain string, it would be
    kept in Dagster's run storage (the job snapshot).  One database per process, then.
    """
    if url is not None:
        os.environ[DATABASE_VARIABLE] = url


# ---------------------------------------------------------------- resources
# Each takes the settings (default: the environment's) and the one value a caller may give instead.


def database_resource(url: str | None = None, settings: CatalogerSettings | None = None) -> DatabaseResource:
    settings = _settings(settings, database=url)
    if "database" not in settings.model_fields_set:
        return DatabaseResource(
            url=DEFAULT_DATABASE_URL, name=settings.name, sensitive_values=settings.sensitive_values
        )
    use_database(settings.database)
    # Dagster stores every resource's configured values in the job snapshot of each run
    # and shows them in the UI; a dg.EnvVar is stored and shown by its name, and read from
    # the environment only when the run starts.
    return DatabaseResource(
        url=dg.EnvVar(DATABASE_VARIABLE), name=settings.name, sensitive_values=settings.sensitive_values
    )


def plain_database(settings: CatalogerSettings | None = None) -> DatabaseResource:
    """The settings' database as a resource used outside Dagster (to list tables, to name the
    catalog): the URL itself, which never reaches Dagster, and the catalog's name."""
    settings = _settings(settings)
    return DatabaseResource(url=settings.database, name=settings.name)


def store_resource(url: str | None = None, settings: CatalogerSettings | None = None) -> CatalogStore:
    return store_from_url(_settings(settings, store=url).store)


def agent_resource(kind: str | None = None, settings: CatalogerSettings | None = None) -> AgentResource:
    settings = _settings(settings, agent=kind)
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
    settings = _settings(settings)
    if not os.environ.get(API_KEY_VARIABLE):
        raise SettingsError(
            "CATALOGER_AGENT=anthropic needs the ANTHROPIC_API_KEY environment variable: set it "
            "(and ANTHROPIC_BASE_URL to reach a proxy), or use CATALOGER_AGENT=heuristic"
        )
    _require("anthropic", "CATALOGER_AGENT=anthropic")
    options = {field: getattr(settings, f"anthropic_{field}") for field in ANTHROPIC_FIELDS}
    # dg.EnvVar: Dagster reads the key at run time and shows only the variable's name
    return AnthropicAgent(api_key=dg.EnvVar(API_KEY_VARIABLE), **options, **_review_options(settings))


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
    settings = _settings(settings, sandbox=backend)
    if settings.sandbox == "docker":
        _require("docker", "CATALOGER_SANDBOX=docker")
    # the investigations' sandbox starts with the run, warm by the time that step comes
    return SandboxResource(
        backend=settings.sandbox,
        isolation=settings.sandbox_isolation,
        image=settings.sandbox_image,
        warmup=IBIS_WARMUP,
        prestart_env={"DB_CONNECTION_STRING": SNAPSHOT_URL} if settings.sandbox_prestart else None,
    )


def notifier_resource(settings: CatalogerSettings | None = None) -> NotifierResource:
    """The notifier of CATALOGER_ALERT_NOTIFIER; its secrets reach Dagster only by their variable's name."""
    settings = _settings(settings)
    retry: dict[str, Any] = {"attempts": settings.alert_attempts, "backoff_s": settings.alert_backoff_s}
    kind = settings.alert_notifier
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
) -> dict:
    """The resources of `settings` (default: the environment's), with the given values instead."""
    settings = _settings(settings, database=database, store=store, agent=agent, sandbox=sandbox)
    return {
        "database": database_resource(settings=settings),
        "store": store_resource(settings=settings),
        "agent": agent_resource(settings=settings),
        "sandbox": sandbox_resource(settings=settings),
        "notifier": notifier_resource(settings),
        # table names as partition keys never become raw paths (see TableIOManager)
        "io_manager": TableIOManager(),
        # shared by the tables these resources catalog, one after another (resources/run_state.py)
        "run_state": RunSharedState(),
    }


# ---------------------------------------------------------------- documentation

# Variables that other programs read themselves; documented next to the settings.
OTHER_VARIABLES = {
    "ANTHROPIC_API_KEY": "the Anthropic agent's key (read through `dg.EnvVar`, never passed to the sandbox or stored)",
    "ANTHROPIC_BASE_URL": "an optional proxy for the Anthropic API (read by the SDK)",
    "DAGSTER_HOME": "Dagster's state: runs, partitions, sensors (`make` sets it to `.dagster_home`)",
    "DOCKER_HOST": "the Docker engine of the `docker` sandbox (read by the docker SDK)",
}


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def settings_table() -> str:
    """The settings table of docs/settings.md (markdown)."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for field, info in CatalogerSettings.model_fields.items():
        shown = _shown(info.default)
        rows.append(f"| `{variable(field)}` | {f'`{shown}`' if shown else ''} | {info.description} |")
    for name, meaning in OTHER_VARIABLES.items():
        rows.append(f"| `{name}` | | {meaning} |")
    return "\n".join(rows) + "\n"


def env_example() -> str:
    """The text of `.env.example`: every setting at its default, commented out."""
    lines = [
        "# Copy to .env (read by `cataloger` and by `dagster dev`) and uncomment what you change.",
        "# Generated from cataloger_dagster/settings.py (CatalogerSettings); the environment wins over .env.",
        "",
    ]
    for field, info in CatalogerSettings.model_fields.items():
        lines += [f"# {info.description}", f"# {variable(field)}={_shown(info.default)}", ""]
    lines.append("# Read by other programs")
    for name, meaning in OTHER_VARIABLES.items():
        lines += [f"# {meaning}", f"# {name}=", ""]
    return "\n".join(lines)


def secret_values() -> tuple[str, ...]:
    """The values of the environment variables whose names say they are secrets: what a
    record kept for people (an MCP run capsule, a run's log) must never show.  Read for
    redaction only (core/redaction.py's `Redactor`)."""
    return environment_secrets(os.environ)
