"""The sensitive-values policy as resources hold it: a key given by its variable's name is read
from the environment, and the store keeps a key of its own per catalog when none is set."""

from __future__ import annotations

import dagster as dg

from cataloger_dagster.core.layout import VALUE_KEY, store_name
from cataloger_dagster.core.sensitive.masking import protect
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.resources.value_policy import key_value, value_policy


def test_a_key_given_by_name_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("CATALOGER_TEST_VALUE_KEY", "from-the-environment")
    assert key_value(dg.EnvVar("CATALOGER_TEST_VALUE_KEY")) == "from-the-environment"
    assert key_value("plain") == "plain" and key_value(None) == ""
    policy = value_policy("hash", dg.EnvVar("CATALOGER_TEST_VALUE_KEY"))
    assert policy.protect("ada@example.org") == protect("ada@example.org", "hash", "from-the-environment")


def test_the_store_keeps_one_key_per_catalog_and_only_for_hash(tmp_path):
    masked = LocalStore(root=str(tmp_path / "m"))
    masked.write_json("shop.duckdb/orders", "2026-01-01T00:00:00.000000Z", "x.json", {"to": "ada@example.org"})
    assert not list((tmp_path / "m").rglob(VALUE_KEY))  # no policy but `hash` makes a key

    store = LocalStore(root=str(tmp_path / "h"), sensitive_values="hash")
    first, other = store.value_key("shop.duckdb"), store.value_key("crm.duckdb")
    assert len(first) == 64 and first != other
    kept = (tmp_path / "h" / store_name("shop.duckdb") / VALUE_KEY).read_text()
    assert kept == first
    # another store object over the same folder (the next run, the MCP server) finds the same key
    again = LocalStore(root=str(tmp_path / "h"), sensitive_values="hash")
    assert again.value_key("shop.duckdb") == first
    uri = again.write_json("shop.duckdb/orders", "2026-01-01T00:00:00.000000Z", "x.json", {"to": "ada@example.org"})
    text = (tmp_path / "h" / "shop.duckdb" / "orders" / "2026-01-01T00:00:00.000000Z" / "x.json").read_text()
    assert uri.endswith("x.json") and protect("ada@example.org", "hash", first) in text and "ada@" not in text
    # a key set wins, and the catalog's own is left as it is
    given = LocalStore(root=str(tmp_path / "h"), sensitive_values="hash", sensitive_key="set-by-the-user")
    assert given.value_key("shop.duckdb") == "set-by-the-user" and kept == first
