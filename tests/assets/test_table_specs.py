"""assets/table_specs.py: the user's tables as external assets of Dagster's catalog, built from the
store of a real catalog run (the shop database: `events` references `customers`, and a third
table's name holds characters no asset key may)."""

from __future__ import annotations

import logging
import re
import shutil

import dagster as dg
import pytest

from cataloged_shop import ODD, TABLES, duckdb_tables
from cataloger_dagster.assets.table_specs import key_part, stored_table_specs, table_key, table_specs
from cataloger_dagster.core.layout import ISSUES, PROFILE, UNDERSTANDING, table_prefix
from cataloger_dagster.core.models import DatasetUnderstandingModel
from cataloger_dagster.core.shown import markdown_text
from cataloger_dagster.definitions import build_definitions
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.resources.store.cataloged import read_cataloged_tables
from cataloger_dagster.settings.model import load_settings

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

DATABASE = "shop.duckdb"
KEY_PART = re.compile(r"[A-Za-z0-9_]+\Z")


@pytest.fixture
def shop(cataloged_shop):
    return cataloged_shop


def specs_of(store_path, **options) -> dict[str, dg.AssetSpec]:
    options = {"owners": {}, "lineage": False, **options}
    specs = stored_table_specs(LocalStore(root=str(store_path)), DATABASE, **options)
    return {spec.metadata["table"]: spec for spec in specs}


def latest_run(store_path, table: str):
    store = LocalStore(root=str(store_path))
    prefix = table_prefix(DATABASE, table)
    return store, prefix, store.list_runs(prefix)[-1]


def test_each_cataloged_table_is_an_asset_with_its_schema_row_count_and_description(shop):
    database, store_path = shop
    specs = specs_of(store_path)
    truth = duckdb_tables(database)
    assert set(specs) == set(TABLES) == set(truth)
    for table, spec in specs.items():
        rows, columns = truth[table]
        assert spec.key == dg.AssetKey(["catalog", "shop_duckdb", key_part(table)])
        assert spec.metadata["dagster/row_count"] == rows
        schema = spec.metadata["dagster/column_schema"]
        assert isinstance(schema, dg.TableSchema) and [c.name for c in schema.columns] == columns
        store, prefix, run = latest_run(store_path, table)
        understanding = DatasetUnderstandingModel.model_validate(store.read_json(prefix, run, UNDERSTANDING))
        meanings = {c.name: c.description for c in understanding.columns}
        assert all(c.description == markdown_text(meanings[c.name]) for c in schema.columns)
        assert spec.description == markdown_text(understanding.summary.description)
        assert spec.metadata["page"].path == store.uri(prefix, run, "catalog.html")
        assert spec.group_name == "tables" and "table" in spec.kinds
    # the catalog's findings, by severity, as the stored issues hold them (events has planted defects)
    store, prefix, run = latest_run(store_path, "events")
    stored = [i["severity"] for i in store.read_json(prefix, run, ISSUES)["issues"]]
    events = specs["events"]
    assert sum(events.metadata[f"findings_{s}"] for s in ("high", "medium", "low")) <= len(stored)
    assert events.metadata["findings_high"] >= 1 and events.tags["cataloger/worst_finding"] == "high"
    assert specs["customers"].tags["cataloger/worst_finding"] in ("none", "low", "medium", "high")
    # and they load as Dagster's own external assets
    graph = dg.Definitions(assets=list(specs.values())).resolve_asset_graph()
    assert all(graph.get(spec.key).is_external for spec in specs.values())


def test_a_name_no_key_may_hold_becomes_a_valid_distinct_key_and_keeps_its_name(shop):
    _, store_path = shop
    spec = specs_of(store_path)[ODD]
    assert all(KEY_PART.match(part) for part in spec.key.path), spec.key
    assert spec.metadata["table"] == ODD
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]{0,63}", value) for value in spec.tags.values()), spec.tags
    # deterministic, and two names that differ only in such characters never share a key
    assert key_part(ODD) == key_part(ODD) and key_part("a-b") != key_part("a.b") != key_part("a_b")
    assert key_part("orders") == "orders" and KEY_PART.match(key_part("é")) and KEY_PART.match(key_part("x" * 300))


def test_an_empty_or_absent_store_lists_no_table_and_no_error(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    (tmp_path / "empty").mkdir()
    assert specs_of(tmp_path / "empty") == {}
    assert specs_of(tmp_path / "never_written") == {}
    assert not caplog.records


def test_a_corrupt_stored_file_leaves_that_table_out_with_a_warning_naming_it(shop, tmp_path, caplog):
    _, store_path = shop
    copy = tmp_path / "store"
    shutil.copytree(store_path, copy)
    _, prefix, run = latest_run(copy, "events")
    (copy / prefix / run / PROFILE).write_text("{not json")
    _, prefix, run = latest_run(copy, ODD)
    (copy / prefix / run / UNDERSTANDING).write_text('{"summary": "a text where an object belongs"}')
    caplog.set_level(logging.WARNING)
    specs = specs_of(copy)
    assert set(specs) == {"customers"}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2 and all("\n" not in w for w in warnings), warnings
    assert any("'events'" in w and "profile.json" in w for w in warnings), warnings
    assert any(repr(ODD) in w and "understanding.json" in w for w in warnings), warnings
    # the value that broke the model is the table's data: named by where, never quoted
    assert not any("a text where an object belongs" in w for w in warnings)


def test_references_become_lineage_only_when_asked(shop):
    _, store_path = shop
    assert all(not spec.deps for spec in specs_of(store_path).values())
    linked = specs_of(store_path, lineage=True)
    assert [d.asset_key for d in linked["events"].deps] == [table_key(DATABASE, "customers")]
    assert linked["events"].metadata["references"] == "customers"
    assert not linked["customers"].deps and not linked[ODD].deps
    graph = dg.Definitions(assets=list(linked.values())).resolve_asset_graph()
    assert graph.get(table_key(DATABASE, "events")).parent_keys == {table_key(DATABASE, "customers")}


def test_owners_come_from_the_settings_as_dagster_takes_them(shop):
    _, store_path = shop
    specs = specs_of(store_path, owners={"events": "sales", "customers": "team:crm", "*": "ana@example.com"})
    assert specs["events"].owners == ["team:sales"]
    assert specs["customers"].owners == ["team:crm"]
    assert specs[ODD].owners == ["ana@example.com"]
    assert all(not spec.owners for spec in specs_of(store_path).values())


def test_two_tables_whose_keys_would_be_one_keep_the_first(shop, caplog):
    _, store_path = shop
    entries, _ = read_cataloged_tables(LocalStore(root=str(store_path)), DATABASE)
    twin = next(e for e in entries if e.table == "customers")
    caplog.set_level(logging.WARNING)
    specs = table_specs([*entries, twin], owners={}, lineage=False)
    assert len(specs) == len(entries)
    assert any("'customers'" in r.getMessage() and "catalog/shop_duckdb/customers" in r.getMessage()
               for r in caplog.records)


def test_the_definitions_list_the_tables_beside_the_partitioned_pipeline(shop, monkeypatch):
    database, store_path = shop
    # the definitions make the settings' database URL this process's CATALOGER_DATABASE: restored after
    monkeypatch.setenv("CATALOGER_DATABASE", f"duckdb://{database}")
    defs = build_definitions(load_settings(store=str(store_path), table_lineage=True))
    graph = defs.resolve_asset_graph()
    for table in TABLES:
        node = graph.get(table_key(DATABASE, table))
        assert node.is_external and not node.is_materializable and not node.is_partitioned
    assert graph.get(table_key(DATABASE, "events")).parent_keys == {table_key(DATABASE, "customers")}
    for name in ("table_profile", "table_understanding", "quality_issues", "investigations", "catalog_page"):
        assert graph.get(dg.AssetKey(name)).is_partitioned, name
    assert not graph.get(dg.AssetKey("catalog_index")).is_partitioned
