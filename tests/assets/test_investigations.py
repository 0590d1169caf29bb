"""The investigations stage and the feedback loop, end to end through Dagster."""

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.core.investigate.codegen import SCRIPT_HEADER
from cataloger_dagster.definitions import TABLE_ASSETS
from cataloger_dagster.core.investigate.learning import SCRIPT, rank_scripts, should_explore
from cataloger_dagster.core.investigate.code import parse_records
from cataloger_dagster.resources.store import ScriptRecord
from cataloger_dagster.settings.factories import resources
from shop import make_shop
from store_folders import run_folders

def catalog(db: Path, store: Path, instance, table: str, backend: str = "local", **config):
    res = resources(database=f"duckdb://{db}", store=str(store), sandbox=backend)
    if table not in instance.get_dynamic_partitions("tables"):
        instance.add_dynamic_partitions("tables", [table])
    result = dg.materialize(
        TABLE_ASSETS, partition_key=table, instance=instance, resources=res,
        run_config={"ops": {"investigations": {"config": {"exploration_rate": 0.0, **config}}}},
    )
    assert result.success
    return result.output_for_node("quality_issues"), result.output_for_node("investigations")


def run_folder(store: Path, table: str, index: int) -> Path:
    return run_folders(store / db_name() / table)[index]


def db_name() -> str:
    return "shop.duckdb"


@pytest.fixture
def shop(tmp_path):
    return make_shop(tmp_path / "shop.duckdb", "events")


def test_cold_then_warm_run(shop, tmp_path, sandbox_backend):
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        issues, cold = catalog(shop, store, instance, "events", sandbox_backend)
        found = {i.type for i in issues.issues}
        assert {"missing_values", "duplicate_rows", "orphan_references", "inconsistent_categories"} <= found
        # every issue proved with code and evidence
        assert [i.issue_id for i in cold.investigations] == [i.id for i in issues.issues]
        assert all(i.success and i.verdict == "confirmed" for i in cold.investigations), cold.investigations
        assert cold.pass_rate == 1.0 and cold.explored and cold.based_on is None
        by_id = {i.issue_id: i for i in cold.investigations}
        assert by_id["events_missing_values_page"].evidence["missing"] == 203  # 200, and 3 of the 30 repeated rows
        assert by_id["events_orphan_references_customer_id"].evidence["rows"] == 50 * 8
        assert by_id["events_duplicate_rows"].evidence["duplicate_rows"] == 30
        assert "check_missing_values" in by_id["events_missing_values_page"].code
        assert cold.cells == 1 + 2 * len(issues.issues)  # set up, then look and test per issue

        _, warm = catalog(shop, store, instance, "events", sandbox_backend)
        first = run_folder(store, "events", 0).name
        assert warm.based_on == first and not warm.explored
        assert warm.cells <= 3
        assert [(i.issue_id, i.verdict, i.evidence) for i in warm.investigations] == [
            (i.issue_id, i.verdict, i.evidence) for i in cold.investigations
        ]
        assert sorted(warm.reused) == sorted(by_id)
        metrics = json.loads((run_folder(store, "events", 1) / "catalog_script.metrics.json").read_text())
        assert metrics["based_on"] == first and metrics["cells"] == warm.cells and metrics["pass_rate"] == 1.0
        page = (run_folder(store, "events", 1) / "catalog.html").read_text()
        for inv in warm.investigations:
            assert inv.issue_id in page
        assert "check_orphan_references" in page and "confirmed" in page


def test_stored_script_runs_standalone_on_the_source_database(shop, tmp_path, local_sandbox):
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        _, result = catalog(shop, store, instance, "events")
    script = run_folder(store, "events", 0) / SCRIPT
    env = {"PATH": os.environ["PATH"], "DB_CONNECTION_STRING": f"duckdb://{shop}?read_only=true"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    records = parse_records(out.stdout)
    assert {k: (v["verdict"], v["evidence"]) for k, v in records.items()} == {
        i.issue_id: (i.verdict, json.loads(json.dumps(i.evidence, default=str))) for i in result.investigations
    }


def test_old_code_that_fails_is_relearned_and_not_fed_forward_again(shop, tmp_path, local_sandbox):
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        catalog(shop, store, instance, "events")
        with duckdb.connect(str(shop)) as con:
            con.execute("ALTER TABLE events DROP COLUMN x")  # the old duplicate-rows check compares it
        issues, second = catalog(shop, store, instance, "events")
        first = run_folder(store, "events", 0).name
        assert second.based_on == first
        assert "events_duplicate_rows" in second.relearned  # the failure was seen in this run
        dup = next(i for i in second.investigations if i.issue_id == "events_duplicate_rows")
        assert dup.success and dup.verdict == "confirmed"
        assert second.pass_rate == 1.0
        # the script that failed is kept (nothing is overwritten) but no longer chosen
        assert (run_folder(store, "events", 0) / SCRIPT).is_file()
        _, third = catalog(shop, store, instance, "events")
        assert third.based_on == run_folder(store, "events", 1).name
        assert third.relearned == [] and third.cells <= 3

        with duckdb.connect(str(shop)) as con:
            con.execute("ALTER TABLE events RENAME COLUMN page TO page_name")
        issues, fourth = catalog(shop, store, instance, "events")
        renamed = next(i for i in fourth.investigations if i.issue_id == "events_missing_values_page_name")
        assert renamed.success and renamed.verdict == "confirmed" and renamed.evidence["missing"] > 0
        assert "events_missing_values_page_name" not in fourth.reused


def test_a_script_of_the_format_before_literals_keeps_the_table_warm(shop, tmp_path, local_sandbox):
    """Stores written before format 2 (names only as literals) are still read: their blocks that
    this version writes the same way are reused."""
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        _, cold = catalog(shop, store, instance, "events")
        script = run_folder(store, "events", 0) / SCRIPT
        code = script.read_text()
        assert code.startswith(SCRIPT_HEADER + "\n")
        script.write_text(code.replace(SCRIPT_HEADER, "# Session script exported by cataloger SandboxResource", 1))
        _, warm = catalog(shop, store, instance, "events")
    assert warm.based_on == run_folder(store, "events", 0).name and warm.cells <= 3
    assert sorted(warm.reused) == sorted(i.issue_id for i in cold.investigations) and warm.relearned == []


def test_explore_config_ignores_earlier_scripts(shop, tmp_path, local_sandbox):
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        issues, cold = catalog(shop, store, instance, "events")
        _, again = catalog(shop, store, instance, "events", explore=True)
    assert again.explored and again.based_on is None and again.cells == cold.cells
    metrics = json.loads((run_folder(store, "events", 1) / "catalog_script.metrics.json").read_text())
    assert metrics["explored"] is True and "explore requested" in metrics["why"]


def test_a_new_table_starts_from_the_most_similar_tables_script(tmp_path, local_sandbox):
    db = make_shop(tmp_path / "shop.duckdb", "events", "events_copy")
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        _, first = catalog(db, store, instance, "events")
        _, other = catalog(db, store, instance, "events_copy")
    assert other.based_on_table == "events" and not other.explored
    assert other.cells <= 3 < first.cells
    assert other.pass_rate == 1.0
    same = lambda run, prefix: {i.issue_id.removeprefix(prefix): (i.verdict, i.evidence)  # noqa: E731
                                for i in run.investigations}
    assert same(other, "events_copy_") == same(first, "events_")


def record(ts, **metrics):
    return ScriptRecord(timestamp=ts, code="", metrics=metrics or None, uri=ts)


def test_ranking_prefers_pass_rate_then_coverage_then_schema_then_time():
    current = {"a", "b"}
    records = [
        record("1", pass_rate=0.5, answered=["a", "b"], seconds=1, investigations=2),
        record("2", pass_rate=1.0, answered=["a"], seconds=1, investigations=1),
        record("3", pass_rate=1.0, answered=["a", "b"], seconds=9, investigations=2, schema_hash="s"),
        record("4", pass_rate=1.0, answered=["a", "b"], seconds=5, investigations=2, schema_hash="old"),
        record("5"),
    ]
    order = [r.timestamp for r in rank_scripts(records, current_ids=current, schema_hash="s")]
    assert order == ["3", "4", "2", "1"]  # "5" has no metrics to say who wrote it: not ranked
    # a later run that found "3" failing on two issues lowers it below the rest
    records.append(record("6", pass_rate=1.0, answered=["a"], seconds=20, investigations=2,
                          based_on="3", relearned=["a", "b"], schema_hash="s"))
    order = [r.timestamp for r in rank_scripts(records, current_ids=current, schema_hash="s")]
    assert order.index("3") > order.index("4")


def test_exploration_is_seeded_and_near_its_rate():
    decisions = [should_explore(0.1, 7, "orders", n) for n in range(2000)]
    assert decisions == [should_explore(0.1, 7, "orders", n) for n in range(2000)]
    assert 0.07 < sum(decisions) / len(decisions) < 0.13
    assert not any(should_explore(0.0, 7, "orders", n) for n in range(100))
    assert decisions != [should_explore(0.1, 8, "orders", n) for n in range(2000)]


def test_a_sampled_snapshot_says_so_and_scales_its_counts_to_the_table(shop, tmp_path, local_sandbox):
    from cataloger_dagster.resources.database.resource import DatabaseResource

    import duckdb

    with duckdb.connect(str(shop), read_only=True) as con:
        total = con.execute("SELECT count(*) FROM events").fetchone()[0]
    limit = total // 4
    res = resources(database=f"duckdb://{shop}", store=str(tmp_path / "store"), sandbox="local")
    res["database"] = DatabaseResource(url=f"duckdb://{shop}", snapshot_row_limit=limit)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("tables", ["events"])
    result = dg.materialize(TABLE_ASSETS, partition_key="events", instance=instance, resources=res,
                            run_config={"ops": {"investigations": {"config": {"exploration_rate": 0.0}}}})
    assert result.success
    issues = {i.id: i for i in result.output_for_node("quality_issues").issues}
    found = result.output_for_node("investigations").investigations
    counted = [inv for inv in found if inv.affected is not None]
    assert counted and all(inv.sample == {"rows_seen": limit, "table_rows": total, "seed": 42} for inv in found)
    for inv in counted:
        assert inv.affected_in_table == round(inv.affected * total / limit)
        issue_rows = issues[inv.issue_id].affectedRows
        # the issue counted the table, the sandbox a quarter of it: never a silent disagreement
        if issue_rows is not None and abs(inv.affected_in_table - issue_rows) > max(2, 0.1 * issue_rows):
            assert inv.count_note and f"{issue_rows:,}" in inv.count_note
    page = (run_folder(tmp_path / "store", "events", -1) / "catalog.html").read_text()
    assert f"the check saw {limit:,} of {total:,} rows" in page


def test_history_findings_are_not_investigated_and_cost_no_pass_rate(shop, tmp_path, local_sandbox):
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        catalog(shop, store, instance, "events")
        with duckdb.connect(str(shop)) as con:
            con.execute("ALTER TABLE events ADD COLUMN channel VARCHAR DEFAULT 'web'")
        issues, run = catalog(shop, store, instance, "events")
        history = [i.id for i in issues.issues if i.source == "history"]
        assert history == ["events_schema_change"]
        investigated = {i.issue_id for i in run.investigations}
        assert investigated == {i.id for i in issues.issues} - set(history) and run.pass_rate == 1.0
