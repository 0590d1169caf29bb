"""CatalogerSettings: every setting, in one object read from the environment (and a `.env` file
in the working directory), with the errors that name the variable and what to set.

`CatalogerSettings` is read once, by `definitions.py` (the code location) and by the
`cataloger` command, and passed to what needs it: the resources built from it
(`settings/factories.py`), the sensors, the schedule and the asset checks.  Every setting has
an embedded default that needs nothing beyond `pip install`: the demo DuckDB database, a local
store, the heuristic agent.

A database URL may hold a password, so its field is kept out of the settings' repr; it reaches
Dagster only by the name of its variable (`factories.database_resource`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from cataloger_dagster.resources.agent.anthropic.agent import AnthropicAgent
from cataloger_dagster.resources.database.resource import DEFAULT_DATABASE_URL
from cataloger_dagster.resources.defaults import DEBIAN_MIRROR, DEFAULT_STORE
from cataloger_dagster.resources.sandbox import DEFAULT_IMAGE

PREFIX = "CATALOGER_"
DATABASE_VARIABLE = "CATALOGER_DATABASE"


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
    guardrails_cron: str = Field(
        "0 */6 * * *",
        description="when the guardrails schedule (off by default) runs every table's guardrail suite: "
        "plain SQL against the database, no agent and no sandbox",
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
        "shape (`xxxx@xxxxxxx.xxx`), `hash` a keyed digest equal for equal values, `drop` nothing",
    )
    sensitive_key: Optional[str] = Field(
        None,
        repr=False,
        description="the secret key of the `hash` policy's digests (an HMAC), so that no one without it "
        "finds a value back from its digest by trying likely values; unset: a key generated once per "
        "catalog and kept in the catalog's folder of the store (`value.key`). A credential: read by "
        "Dagster through `dg.EnvVar`, never logged or stored elsewhere",
    )
    dbt_manifest: Optional[str] = Field(
        None,
        json_schema_extra=_hint("a path, e.g. target/manifest.json"),
        description="a dbt project's `manifest.json`: its models' and sources' descriptions are context for the "
        "understanding and the issues agents (beside the database's own comments), and a check one of its tests "
        "makes (not_null, unique, accepted_values, relationships) is left out of the table's guardrails",
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


def settings_with(settings: CatalogerSettings | None, **overrides: Any) -> CatalogerSettings:
    """`settings` with `overrides` (None: unchanged); without settings (tests and scripts that
    give none), the environment's."""
    return load_settings(**overrides) if settings is None else settings.replace(**overrides)
