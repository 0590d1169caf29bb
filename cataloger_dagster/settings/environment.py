"""The process's environment, beyond the settings: the variables of other programs the package
looks at, the one variable it sets, and the secrets a record must never show.

The settings themselves are read by `CatalogerSettings` (model.py); no other module of the
package reads the environment (tests/settings/test_environment.py checks it).  The other
programs' variables are read by those programs too; the package looks at them only here.
"""

from __future__ import annotations

import os

from cataloger_dagster.core.redaction import environment_secrets
from cataloger_dagster.settings.model import DATABASE_VARIABLE

API_KEY_VARIABLE = "ANTHROPIC_API_KEY"
# the key of the `hash` policy of the catalog being run (a secret: its name says so to
# `environment_secrets`)
CATALOG_VALUE_KEY_VARIABLE = "CATALOGER_CATALOG_VALUE_KEY"


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


def use_catalog_value_key(key: str) -> None:
    """Make `key` (the `hash` policy's key: the one set, in the environment or in .env, else the
    catalog's own) this process's CATALOG_VALUE_KEY_VARIABLE: resources reach it by that name only
    (`dg.EnvVar`), so that Dagster never keeps it."""
    os.environ[CATALOG_VALUE_KEY_VARIABLE] = key


def anthropic_key_set() -> bool:
    """Whether ANTHROPIC_API_KEY holds a key; its value is read by Dagster at run time (a `dg.EnvVar`)."""
    return bool(os.environ.get(API_KEY_VARIABLE))


def secret_values() -> tuple[str, ...]:
    """The values of the environment variables whose names say they are secrets: what a
    record kept for people (an MCP run capsule, a run's log) must never show.  Read for
    redaction only (core/redaction.py's `Redactor`)."""
    return environment_secrets(os.environ)
