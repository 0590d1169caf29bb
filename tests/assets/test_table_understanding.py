"""assets/table_understanding.py: the understanding of a table, materialized by Dagster on the shop
database, and its cache: reused while the fingerprint, the agent and its prompts are unchanged,
recomputed as soon as one of them changes.

The Anthropic agent runs against the local stand-in of the Messages API (tests/support).
"""

import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from anthropic_standin import StandIn
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.assets.table_understanding import cache_key, table_understanding
from cataloger_dagster.core.models import DatasetUnderstandingModel
from cataloger_dagster.core.results import StoredUnderstanding
from cataloger_dagster.resources.agent.anthropic.agent import prompt_version
from cataloger_dagster.settings.factories import resources
from shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")


@pytest.fixture
def shop(tmp_path):
    db = make_shop(tmp_path / "shop.duckdb")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events"])
        yield db, tmp_path / "store", instance


def understand(db, store, instance, agent="heuristic"):
    res = resources(database=f"duckdb://{db}", store=str(store), agent=agent)
    result = dg.materialize([table_profile, table_understanding], partition_key="events", instance=instance,
                            resources=res)
    assert result.success
    meta = result.asset_materializations_for_node("table_understanding")[0].metadata
    profile_meta = result.asset_materializations_for_node("table_profile")[0].metadata
    folder = store / "shop.duckdb" / "events" / profile_meta["run_folder"].value
    return result.output_for_node("table_profile"), result.output_for_node("table_understanding"), meta, folder


def test_describes_the_table_and_stores_it_with_its_cache_key(shop):
    profile, understanding, meta, folder = understand(*shop)
    assert isinstance(understanding, DatasetUnderstandingModel)
    assert understanding.summary.rowCount == 2030 and understanding.summary.columnCount == 5
    assert [c.name for c in understanding.columns] == [c.name for c in profile.columns]
    assert all(c.description for c in understanding.columns)

    stored = json.loads((folder / "understanding.json").read_text())
    key = stored.pop("cache_key")
    assert key == f"{profile.fingerprint.value}:heuristic:1"
    # the output Dagster hands on is the stored result, read as its model
    assert isinstance(understanding, StoredUnderstanding) and understanding.cache_key == key
    assert StoredUnderstanding.model_validate({**stored, "cache_key": key}) == understanding
    assert Path(meta["understanding"].value) == folder / "understanding.json"
    assert meta["reused_from"].value == "" and meta["agent"].value == "heuristic" and meta["tokens"].value == 0
    assert meta["description"].value == understanding.summary.description
    assert meta["dagster/row_count"].value == 2030


@pytest.mark.slow
def test_unchanged_table_reuses_the_understanding_and_a_change_recomputes_it(shop):
    db, store, instance = shop
    _, first, _, first_folder = understand(db, store, instance)
    _, again, meta, second_folder = understand(db, store, instance)
    assert meta["reused_from"].value == first_folder.name
    assert again == first
    # each run's folder is complete: the reused understanding is written again
    assert (second_folder / "understanding.json").read_text() == (first_folder / "understanding.json").read_text()

    with duckdb.connect(str(db)) as con:
        con.execute("INSERT INTO events SELECT * FROM events WHERE event_id = 100")
    profile, changed, meta, _ = understand(db, store, instance)
    assert meta["reused_from"].value == ""
    assert changed.summary.rowCount == profile.row_count == 2031


@pytest.fixture
def standin(monkeypatch):
    with StandIn() as s:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", s.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-understanding")
        yield s


@pytest.mark.slow
def test_another_agent_does_not_reuse_the_heuristic_understanding(shop, standin):
    db, store, instance = shop
    understand(db, store, instance)
    profile, _, meta, folder = understand(db, store, instance, agent="anthropic")
    assert meta["reused_from"].value == "" and meta["agent"].value == "anthropic"
    assert meta["tokens"].value > 0 and [s for s, _ in standin.usages] == ["understanding"]
    key = json.loads((folder / "understanding.json").read_text())["cache_key"]
    assert key == f"{profile.fingerprint.value}:anthropic:{prompt_version()}"
    # the same agent again reuses it without a call
    _, _, meta, _ = understand(db, store, instance, agent="anthropic")
    assert meta["reused_from"].value == folder.name and meta["tokens"].value == 0
    assert len(standin.usages) == 1
    # only the latest understanding is looked at: back on the heuristic, it is recomputed
    _, _, meta, _ = understand(db, store, instance)
    assert meta["reused_from"].value == ""


def test_cache_key_holds_fingerprint_agent_and_prompt_version(shop, standin):
    db, store, instance = shop
    profile, _, _, _ = understand(db, store, instance)
    heuristic = resources(agent="heuristic")["agent"]
    anthropic = resources(agent="anthropic")["agent"]
    assert cache_key(profile, heuristic) == f"{profile.fingerprint.value}:heuristic:1"
    assert cache_key(profile, anthropic) == f"{profile.fingerprint.value}:anthropic:{prompt_version()}"
    changed = profile.model_copy(update={"fingerprint": profile.fingerprint.model_copy(update={"value": "other"})})
    assert cache_key(changed, heuristic) == "other:heuristic:1"


def test_the_tables_own_documentation_is_kept_and_a_change_of_it_recomputes(shop, monkeypatch):
    db, store, instance = shop
    with duckdb.connect(str(db)) as con:
        column = con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'events' LIMIT 1").fetchone()[0]
        con.execute(f"COMMENT ON COLUMN events.{column} IS 'Written by the table''s owners.'")
    profile, understanding, _, _ = understand(db, store, instance)
    assert {c.name: c.description for c in understanding.columns}[column] == "Written by the table's owners."
    assert understanding.cache_key.startswith(f"{profile.fingerprint.value}:heuristic:1:")
    manifest = store.parent / "manifest.json"
    manifest.write_text(json.dumps({"nodes": {"model.shop.events": {
        "resource_type": "model", "name": "events", "description": "Every event, as dbt documents it.", "columns": {}}}}))
    monkeypatch.setenv("CATALOGER_DBT_MANIFEST", str(manifest))
    _, again, meta, _ = understand(db, store, instance)
    assert meta["reused_from"].value == ""  # the documentation changed: understood again
    assert again.summary.description == "Every event, as dbt documents it."
