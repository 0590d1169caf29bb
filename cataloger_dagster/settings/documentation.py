"""The settings' documentation, generated from their fields: the settings table of
docs/settings.md (`settings_table`) and `.env.example` (`env_example`);
tests/settings/test_documentation.py fails when they drift.
"""

from __future__ import annotations

from typing import Any

from cataloger_dagster.settings.model import CatalogerSettings, variable

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
        "# Generated from cataloger_dagster/settings/model.py (CatalogerSettings); the environment wins over .env.",
        "",
    ]
    for field, info in CatalogerSettings.model_fields.items():
        lines += [f"# {info.description}", f"# {variable(field)}={_shown(info.default)}", ""]
    lines.append("# Read by other programs")
    for name, meaning in OTHER_VARIABLES.items():
        lines += [f"# {meaning}", f"# {name}=", ""]
    return "\n".join(lines)
