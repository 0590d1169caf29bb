"""settings/factories.py: the resources built from the settings, a secret reaching Dagster only
by its variable's name."""

from __future__ import annotations

import dagster as dg

from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.resources.database.resource import DEFAULT_DATABASE_URL
from cataloger_dagster.settings.factories import resources
from cataloger_dagster.settings.model import DATABASE_VARIABLE, load_settings


def test_the_definitions_pass_the_settings_on(clean_env):
    clean_env.setenv("CATALOGER_SENSOR_INTERVAL_S", "42")
    clean_env.setenv("CATALOGER_REFRESH_CRON", "30 2 * * 0")
    clean_env.setenv("CATALOGER_SANDBOX_IMAGE", "my-sandbox:1")
    clean_env.setenv("CATALOGER_STORE", "elsewhere")
    defs = build_definitions(load_settings())
    assert defs.resolve_sensor_def("database_change_sensor").minimum_interval_seconds == 42
    assert defs.resolve_sensor_def("pass_rate_sensor").minimum_interval_seconds == 42
    assert defs.resolve_schedule_def("refresh_schedule").cron_schedule == "30 2 * * 0"
    assert defs.resources["sandbox"].image == "my-sandbox:1"
    assert defs.resources["store"].describe().endswith("/elsewhere")


def test_a_database_url_from_dotenv_reaches_dagster_only_by_name(clean_env, tmp_path):
    url = "postgres://u:pw-secret@db.example/prod"
    (tmp_path / ".env").write_text(f"CATALOGER_DATABASE={url}\n")
    clean_env.setenv(DATABASE_VARIABLE, "")  # so that the variable set below is removed afterwards
    clean_env.delenv(DATABASE_VARIABLE)
    settings = load_settings()
    assert settings.database == url  # for listing the tables
    assert "pw-secret" not in repr(settings)
    database = resources(settings)["database"]
    # what Dagster keeps in the job snapshot: the variable's name
    assert isinstance(database.url, dg.EnvVar) and database.url.env_var_name == DATABASE_VARIABLE
    with dg.build_resources({"database": database}) as built:  # a run resolves it from the environment
        assert built.database.url == url
    # nothing set: the demo database, no variable to read
    clean_env.delenv(DATABASE_VARIABLE)
    (tmp_path / ".env").unlink()
    assert resources(load_settings())["database"].url == DEFAULT_DATABASE_URL


def test_the_hash_key_reaches_every_resource_by_name_only(clean_env, tmp_path):
    from cataloger_dagster.core.sensitive.masking import protect
    from cataloger_dagster.resources.store import LocalStore
    from cataloger_dagster.settings.environment import CATALOG_VALUE_KEY_VARIABLE
    from cataloger_dagster.settings.factories import notifier_resource, plain_database

    clean_env.setenv("CATALOGER_SENSITIVE_VALUES", "hash")
    clean_env.setenv("CATALOGER_STORE", str(tmp_path / "store"))
    clean_env.setenv("CATALOGER_ALERT_NOTIFIER", "webhook")
    clean_env.setenv("CATALOGER_ALERT_WEBHOOK_URL", "http://127.0.0.1:9/hook")
    clean_env.setenv(CATALOG_VALUE_KEY_VARIABLE, "")  # so that the variable set below is removed afterwards
    # none set: the catalog's own key, kept in the store, the same for the notifier as for the store
    notifier = notifier_resource(load_settings())
    catalog = plain_database(load_settings()).database_name
    own = LocalStore(root=str(tmp_path / "store"), sensitive_values="hash").value_key(catalog)
    assert notifier.sensitive_values == "hash" and isinstance(notifier.sensitive_key, dg.EnvVar)
    assert notifier.sensitive_key.env_var_name == CATALOG_VALUE_KEY_VARIABLE and own not in repr(notifier)
    with dg.build_resources({"notifier": notifier}) as built:
        assert built.notifier.sensitive_key == own
    # one set in .env: every resource reads that one, by name
    (tmp_path / ".env").write_text("CATALOGER_SENSITIVE_KEY=set-in-dotenv\n")
    settings = load_settings()
    store = resources(settings)["store"]
    assert isinstance(store.sensitive_key, dg.EnvVar)
    assert store.value_policy(catalog).protect("ada@example.org") == protect("ada@example.org", "hash", "set-in-dotenv")
    with dg.build_resources({"notifier": notifier_resource(settings)}) as built:
        assert built.notifier.sensitive_key == "set-in-dotenv"
