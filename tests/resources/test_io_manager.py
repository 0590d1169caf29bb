"""io_manager.py: TableIOManager.  A table's results (the outputs of table_profile,
table_understanding, quality_issues, investigations) are the store's JSON files, written once and
read back as their pydantic models; any other output is pickled, one file per table.

Through real Dagster materializations over a real local store: an output written in one run is
read back in a later run, each partition key (a table name, whatever it holds) gets its own file
named by `store_name` (in its asset's folder, or as its table's folder of the store), plain names
keep Dagster's default path, and without a `base_dir` the files go to the instance's storage.
"""

# (no `from __future__ import annotations`: Dagster reads the Config annotation of `upstream`
# when it is defined, and a string would not resolve in a module imported by --import-mode=importlib)
import datetime as dt
import pickle
from pathlib import Path

import dagster as dg

from cataloger_dagster.core.layout import store_name
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.io_manager import TableIOManager
from cataloger_dagster.resources.store import LocalStore


def with_store(tmp_path: Path, io_manager) -> dict:
    """The IO manager with the two resources it reads results through: a store and the database."""
    return {"io_manager": io_manager, "store": LocalStore(root=str(tmp_path / "store")),
            "database": DatabaseResource(url=f"duckdb:///{tmp_path / 'shop.duckdb'}")}

KEYS = ["orders", "a/b", "a", "x" * 300]
tables = dg.DynamicPartitionsDefinition(name="tables")


class Version(dg.Config):
    version: int


@dg.asset(partitions_def=tables)
def upstream(context: dg.AssetExecutionContext, config: Version) -> dict:
    # things JSON could not keep: a set, a tuple, a datetime
    return {"table": context.partition_key, "columns": ("id", "name"), "tags": {"pii", "fact"},
            "at": dt.datetime(2024, 5, 1, 12, 30), "version": config.version}


@dg.asset(partitions_def=tables)
def downstream(upstream: dict) -> str:
    return f"{upstream['table']} v{upstream['version']} {sorted(upstream['tags'])}"


def _home(tmp_path: Path) -> str:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return str(home)


def _run(instance, key: str, version: int, resources: dict, assets=None) -> dg.ExecuteInProcessResult:
    selection = assets or [upstream, downstream]
    run_config = {"ops": {"upstream": {"config": {"version": version}}}} if upstream in selection else None
    return dg.materialize([upstream, downstream], selection=selection, partition_key=key, instance=instance,
                          resources=resources, run_config=run_config)


def test_each_tables_output_is_its_own_file_and_is_read_back_by_a_later_run(tmp_path):
    base = tmp_path / "outputs"
    io_manager = with_store(tmp_path, TableIOManager(base_dir=str(base)))
    with dg.instance_for_test(temp_dir=_home(tmp_path)) as instance:
        instance.add_dynamic_partitions("tables", KEYS)
        for key in KEYS:
            assert _run(instance, key, 1, io_manager).success
        # one file per table in each asset's folder, named as the store names them
        for asset in ("upstream", "downstream"):
            files = sorted((base / asset).iterdir())
            assert [p.name for p in files] == sorted(store_name(k) for k in KEYS) and all(p.is_file() for p in files)
        assert (base / "upstream" / "orders").is_file()  # a plain name: where Dagster's default puts it
        assert store_name("a/b") != "a/b" and (base / "upstream" / store_name("a/b")).is_file()
        with (base / "upstream" / store_name("a/b")).open("rb") as f:
            assert pickle.load(f) == {"table": "a/b", "columns": ("id", "name"), "tags": {"pii", "fact"},
                                      "at": dt.datetime(2024, 5, 1, 12, 30), "version": 1}

        # a new upstream value for one table only; a later run of downstream alone reads it from disk
        assert _run(instance, "a", 2, io_manager, assets=[upstream]).success
        for key, version in (("a", 2), ("a/b", 1), ("x" * 300, 1)):
            later = _run(instance, key, 0, io_manager, assets=[downstream])
            assert later.success
            assert later.output_for_node("downstream") == f"{key} v{version} ['fact', 'pii']"


def test_without_a_base_dir_the_outputs_go_to_the_instances_storage(tmp_path):
    with dg.instance_for_test(temp_dir=_home(tmp_path)) as instance:
        instance.add_dynamic_partitions("tables", ["a/b"])
        assert _run(instance, "a/b", 3, with_store(tmp_path, TableIOManager())).success
        storage = Path(instance.storage_directory())
        assert storage.is_relative_to(tmp_path / "home")
        with (storage / "downstream" / store_name("a/b")).open("rb") as f:
            assert pickle.load(f) == "a/b v3 ['fact', 'pii']"


def test_an_unpartitioned_asset_keeps_its_key_path(tmp_path):
    @dg.asset(key_prefix=["catalog"])
    def summary() -> list[int]:
        return [1, 2, 3]

    @dg.asset(ins={"summary": dg.AssetIn(key=["catalog", "summary"])})
    def total(summary: list[int]) -> int:
        return sum(summary)

    io_manager = with_store(tmp_path, TableIOManager(base_dir=str(tmp_path)))
    with dg.instance_for_test(temp_dir=_home(tmp_path)) as instance:
        assert dg.materialize([summary, total], instance=instance, resources=io_manager).success
        later = dg.materialize([summary, total], selection=[total], instance=instance, resources=io_manager)
    assert later.output_for_node("total") == 6
    with (tmp_path / "catalog" / "summary").open("rb") as f:
        assert pickle.load(f) == [1, 2, 3]


def test_a_tables_run_stores_no_debug_lines_for_its_outputs_and_shows_each_outputs_path(tmp_path):
    base = tmp_path / "outputs"
    with dg.instance_for_test(temp_dir=_home(tmp_path)) as instance:
        instance.add_dynamic_partitions("tables", ["a/b"])
        result = _run(instance, "a/b", 1, with_store(tmp_path, TableIOManager(base_dir=str(base))))
        assert result.success
        logs = instance.all_logs(result.run_id)
    # every record in the run storage costs a write; the files' paths are in the outputs' metadata
    assert [r.user_message for r in logs if r.dagster_event is None and r.level <= 10] == []
    handled = [r.dagster_event for r in logs if r.dagster_event and r.dagster_event.event_type_value == "HANDLED_OUTPUT"]
    assert len(handled) == 2
    for asset in ("upstream", "downstream"):
        materialization = result.asset_materializations_for_node(asset)[-1]
        assert materialization.metadata["path"].value == str(base / asset / store_name("a/b"))
    assert [e.event_type_value for e in result.all_events].count("LOADED_INPUT") == 1


@dg.asset(partitions_def=tables)
def several(context: dg.AssetExecutionContext) -> dict:
    return {table: f"value of {table}" for table in context.partition_keys}


@dg.asset(partitions_def=tables)
def wrong_shape(context: dg.AssetExecutionContext) -> dict:
    return {context.partition_keys[0]: "only the first"}


def test_a_run_over_several_tables_writes_each_its_own_file_and_reads_them_back(tmp_path):
    base = tmp_path / "outputs"
    io_manager = with_store(tmp_path, TableIOManager(base_dir=str(base)))
    range_tags = {"dagster/asset_partition_range_start": "orders", "dagster/asset_partition_range_end": "a"}
    with dg.instance_for_test(temp_dir=_home(tmp_path)) as instance:
        instance.add_dynamic_partitions("tables", KEYS)
        assert dg.materialize([several], instance=instance, tags=range_tags, resources=io_manager).success
        for key in ("orders", "a/b", "a"):
            assert pickle.loads((base / "several" / store_name(key)).read_bytes()) == f"value of {key}"
        assert not (base / "several" / store_name("x" * 300)).exists()   # outside the range

        # an output over several tables that does not map each of them fails its step, saying so
        bad = dg.materialize([wrong_shape], instance=instance, tags=range_tags, raise_on_error=False,
                             resources=io_manager)
        assert not bad.success
        failure = next(e for e in bad.all_events if e.is_step_failure)
        assert "must map each of them to its value" in str(failure.step_failure_data.error.to_string())
        assert not (base / "wrong_shape").exists()
