"""A table's results live once, as the store's JSON, and are read one typed way.

Through real Dagster materializations over a real local store: the IO manager writes each
result into its table's run folder as its pydantic model and nothing beside it (no pickle), hands
the next asset the model read back from that file, in this run and in a later one, for hostile
table names and for runs over several tables.  A store written as before this change (the store's
own writers, understanding.json with its cache key beside the model, results without the fields
added since) reads through `core.results` and through the IO manager.
"""

# (no `from __future__ import annotations`: Dagster reads the asset functions' annotations)
import json
from pathlib import Path

import dagster as dg
import pytest

from cataloger_dagster.assets.common import per_table, table_ins
from cataloger_dagster.core.layout import INVESTIGATIONS, ISSUES, PROFILE, SCRIPT, UNDERSTANDING, store_name
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    ColumnSummaryModel,
    DatasetSummaryModel,
    DatasetUnderstandingModel,
    Fingerprint,
    InvestigationsResult,
    IssueModel,
    TableProfile,
)
from cataloger_dagster.core.results import (
    ResultError,
    ScriptMetrics,
    StoredUnderstanding,
    latest_results,
    load_result,
    load_run,
)
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.io_manager import TableIOManager
from cataloger_dagster.resources.store import LocalStore, table_prefix

DATABASE = "shop.duckdb"
KEYS = ["orders", "a/b", "a", "..", "x" * 300]
tables = dg.DynamicPartitionsDefinition(name="tables")


class Version(dg.Config):
    version: int = 1


def _issues(table: str, version: int) -> AnalysisResultModel:
    issue = IssueModel(id=f"missing:{table}", type="missing", severity="high", description=f"v{version}",
                       affectedColumns=["amount"], suggestedAction="fill it", category="quick_fixes")
    return AnalysisResultModel(issues=[issue], summary=f"{table} v{version}", completedAt="2026-11-27T10:00:00Z")


@dg.asset(partitions_def=tables, name="quality_issues", dagster_type=per_table(AnalysisResultModel))
def quality_issues(context: dg.AssetExecutionContext, config: Version) -> dg.Output:
    values = {t: _issues(t, config.version) for t in context.partition_keys}
    return dg.Output(values[context.partition_keys[0]] if len(values) == 1 else values)


@dg.asset(partitions_def=tables, ins=table_ins(quality_issues=AnalysisResultModel))
def issue_summary(context: dg.AssetExecutionContext, quality_issues) -> dict:
    found = quality_issues if len(context.partition_keys) > 1 else {context.partition_keys[0]: quality_issues}
    return {t: (type(v).__name__, v.summary) for t, v in found.items()}


def _resources(tmp_path: Path) -> dict:
    return {
        "io_manager": TableIOManager(base_dir=str(tmp_path / "outputs")),
        "store": LocalStore(root=str(tmp_path / "store")),
        "database": DatabaseResource(url=f"duckdb:///{tmp_path / DATABASE}"),
    }


def _home(tmp_path: Path) -> str:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return str(home)


def _materialize(instance, resources, selection, key=None, version=1, tags=None, raise_on_error=True):
    config = {"ops": {"quality_issues": {"config": {"version": version}}}} if quality_issues in selection else None
    return dg.materialize([quality_issues, issue_summary], selection=selection, partition_key=key, tags=tags,
                          instance=instance, resources=resources, run_config=config, raise_on_error=raise_on_error)


def test_a_result_is_its_tables_store_json_read_back_as_its_model_in_this_run_and_a_later_one(tmp_path):
    resources = _resources(tmp_path)
    store = resources["store"]
    with dg.instance_for_test(temp_dir=_home(tmp_path)) as instance:
        instance.add_dynamic_partitions("tables", KEYS)
        for key in KEYS:
            result = _materialize(instance, resources, [quality_issues, issue_summary], key)
            assert result.output_for_node("issue_summary") == {key: ("AnalysisResultModel", f"{key} v1")}
            # the one copy: the store's issues.json of the table's run folder, shown as the output's path
            prefix = table_prefix(DATABASE, key)
            [folder] = store.list_runs(prefix)
            path = tmp_path / "store" / store_name(DATABASE) / store_name(key) / folder / ISSUES
            assert AnalysisResultModel.model_validate_json(path.read_text()) == _issues(key, 1)
            materialization = result.asset_materializations_for_node("quality_issues")[0]
            assert materialization.metadata["path"].value == str(path)
        # no pickle of any result; the other output keeps its file per table
        assert not (tmp_path / "outputs" / "quality_issues").exists()
        assert {p.name for p in (tmp_path / "outputs" / "issue_summary").iterdir()} == {store_name(k) for k in KEYS}

        # a new result for one table; a later run of the downstream asset alone reads the newest
        assert _materialize(instance, resources, [quality_issues], "a", version=2).success
        for key, version in (("a", 2), ("a/b", 1), ("..", 1), ("x" * 300, 1)):
            later = _materialize(instance, resources, [issue_summary], key)
            assert later.output_for_node("issue_summary") == {key: ("AnalysisResultModel", f"{key} v{version}")}
        assert len(store.list_runs(table_prefix(DATABASE, "a"))) == 2


def test_a_run_over_several_tables_writes_each_result_in_its_own_folder(tmp_path):
    resources = _resources(tmp_path)
    range_tags = {"dagster/asset_partition_range_start": "orders", "dagster/asset_partition_range_end": ".."}
    with dg.instance_for_test(temp_dir=_home(tmp_path)) as instance:
        instance.add_dynamic_partitions("tables", KEYS)
        result = _materialize(instance, resources, [quality_issues, issue_summary], tags=range_tags, version=3)
        assert result.output_for_node("issue_summary") == {
            k: ("AnalysisResultModel", f"{k} v3") for k in ("orders", "a/b", "a", "..")
        }
    store = resources["store"]
    for key in ("orders", "a/b", "a", ".."):
        [(_, found)] = latest_results(store, table_prefix(DATABASE, key), ISSUES)
        assert found == _issues(key, 3)
    assert store.list_runs(table_prefix(DATABASE, "x" * 300)) == []  # outside the range


def test_a_missing_result_fails_the_step_naming_the_table_and_what_to_do(tmp_path):
    resources = _resources(tmp_path)
    with dg.instance_for_test(temp_dir=_home(tmp_path)) as instance:
        instance.add_dynamic_partitions("tables", ["a/b"])
        bad = _materialize(instance, resources, [issue_summary], "a/b", raise_on_error=False)
    assert not bad.success
    failure = next(e for e in bad.all_events if e.is_step_failure)
    text = failure.step_failure_data.error.to_string()
    assert "no issues.json of table 'a/b'" in text and "materialize the table's partition" in text


# ---------------------------------------------------------------- a store as written before


def _profile(table: str) -> TableProfile:
    return TableProfile(database=DATABASE, table=table, row_count=3, column_count=0, columns=[], sample_rows=[],
                        fingerprint=Fingerprint(schema_hash="h", row_count=3, value=f"fp-{table}"),
                        profiled_at="2026-01-01T00:00:00Z")


def _understanding(table: str) -> DatasetUnderstandingModel:
    return DatasetUnderstandingModel(
        summary=DatasetSummaryModel(name=table, description=f"the {table}", rowCount=3, columnCount=1,
                                    observations=[]),
        columns=[ColumnSummaryModel(name="id", dataType="numeric", description="its id", sampleValues=[1, 2])],
        suggested_context="",
    )


def _old_store(tmp_path: Path, table: str) -> tuple[LocalStore, str, str]:
    """A run folder written with the store's writers as they were used before results went through
    the IO manager: the models' JSON, understanding.json as a dict with its cache key, and results
    without the fields added since (null patterns, degradations, rules, set-aside issues)."""
    store = LocalStore(root=str(tmp_path / "store"))
    prefix = table_prefix(DATABASE, table)
    ts = store.open_run(prefix, "an-earlier-run", table=table)
    profile = _profile(table).model_dump(mode="json")
    for newer in ("null_patterns", "degradations", "approximate", "queries", "duration_s"):
        profile.pop(newer)
    store.write_json(prefix, ts, PROFILE, profile)
    store.write_json(prefix, ts, UNDERSTANDING, {**_understanding(table).model_dump(), "cache_key": "fp:heuristic:1"})
    issues = _issues(table, 1).model_dump(mode="json")
    for newer in ("degradations", "reviewed", "quieted", "rules"):
        issues.pop(newer)
    for issue in issues["issues"]:
        for newer in ("followup", "review", "precision", "details", "source"):
            issue.pop(newer)
    store.write_json(prefix, ts, ISSUES, issues)
    store.write_json(prefix, ts, INVESTIGATIONS, {"table": table, "investigations": [
        {"code": "print(1)", "success": True, "output": None, "issue_id": f"missing:{table}", "verdict": "confirmed"}]})
    store.write_script_with_metrics(prefix, ts, SCRIPT, "print(1)\n", {"pass_rate": 1.0, "cells": 2, "why": "old"})
    return store, prefix, ts


def test_an_old_store_reads_through_the_loader_with_the_newer_fields_defaulted(tmp_path):
    store, prefix, ts = _old_store(tmp_path, "a/b")
    run = load_run(store, prefix, ts)
    assert run.profile == _profile("a/b")
    assert run.profile.null_patterns == [] and run.profile.degradations == []
    assert isinstance(run.understanding, StoredUnderstanding) and run.understanding.cache_key == "fp:heuristic:1"
    assert DatasetUnderstandingModel.model_validate(run.understanding.model_dump()) == _understanding("a/b")
    assert run.issues == _issues("a/b", 1) and run.issues.rules == [] and run.issues.issues[0].source == "detector"
    assert isinstance(run.investigations, InvestigationsResult)
    assert run.investigations.investigations[0].verdict == "confirmed" and run.investigations.explored is True
    assert run.metrics == ScriptMetrics(pass_rate=1.0, cells=2, why="old") and run.metrics.explored is None
    assert [ts_ for ts_, _ in latest_results(store, prefix, PROFILE)] == [ts]
    assert load_result(store, prefix, ts, "issues.json") == run.issues


def test_an_old_store_reads_through_the_io_manager(tmp_path):
    _old_store(tmp_path, "a/b")
    with dg.instance_for_test(temp_dir=_home(tmp_path)) as instance:
        instance.add_dynamic_partitions("tables", ["a/b"])
        result = _materialize(instance, _resources(tmp_path), [issue_summary], "a/b")
    assert result.output_for_node("issue_summary") == {"a/b": ("AnalysisResultModel", "a/b v1")}


def test_a_result_its_model_cannot_read_is_a_one_line_error_naming_the_file(tmp_path):
    store, prefix, ts = _old_store(tmp_path, "orders")
    folder = tmp_path / "store" / store_name(DATABASE) / "orders"
    broken = next(p for p in folder.iterdir() if p.is_dir())
    (broken / PROFILE).unlink()
    (broken / PROFILE).write_text(json.dumps({"table": "orders", "row_count": "many"}))
    with pytest.raises(ResultError) as raised:
        load_run(store, prefix, ts).profile
    message = str(raised.value)
    assert "\n" not in message and f"{prefix}/{ts}/{PROFILE}" in message and "TableProfile" in message
    assert "rerun the table" in message
