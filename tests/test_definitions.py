import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import dagster as dg
import pytest

from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.definitions import ALL_ASSETS, TABLE_ASSETS, build_definitions, defs
from cataloger_dagster.settings.model import load_settings
from cataloger_dagster.settings.factories import resources
from store_folders import run_folders

ROOT = Path(__file__).resolve().parents[1]


def test_defs_have_the_designed_assets():
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert keys == {
        "table_profile", "table_understanding", "quality_issues", "investigations", "recent_summary",
        "catalog_page", "catalog_index",
    }
    assert isinstance(tables_partitions, dg.DynamicPartitionsDefinition) and tables_partitions.name == "tables"
    graph = defs.resolve_asset_graph()
    parents = lambda k: {p.to_user_string() for p in graph.get(dg.AssetKey(k)).parent_keys}  # noqa: E731
    assert parents("table_understanding") == {"table_profile"}
    assert parents("quality_issues") == {"table_profile", "table_understanding"}
    assert parents("investigations") == {"table_profile", "table_understanding", "quality_issues"}
    assert parents("catalog_page") == {"table_profile", "table_understanding", "quality_issues", "investigations"}
    assert parents("recent_summary") == {"table_profile", "quality_issues", "investigations"}
    assert parents("catalog_index") == {"catalog_page"}


@pytest.mark.slow
def test_workspace_yaml_loads_defs():
    out = subprocess.run(
        [str(Path(sys.executable).parent / "dagster"), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "deprecat" not in (out.stdout + out.stderr).lower()


@pytest.mark.slow
def test_loading_the_code_location_on_a_local_store_leaves_the_slow_imports_for_later(tmp_path):
    """Every run, and every step in a process of its own, loads the code location: dagster-aws
    (seconds: all its components) only for an S3 store, inflect (seconds: its type checks) only
    when a name is first made singular or plural."""
    probe = ("import sys; import cataloger_dagster.definitions as d; "
             "from cataloger_dagster.core import text; "
             "before = sorted(m for m in ('dagster_aws', 'inflect') if m in sys.modules); "
             "word = text.plural('category'); "
             "from cataloger_dagster.resources.store import store_from_url; "
             "store_from_url('s3://bucket/prefix'); "
             "print(before, word, sorted(m for m in ('dagster_aws', 'inflect') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "CATALOGER_STORE": str(tmp_path / "store")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "categories", "['dagster_aws',", "'inflect']"]


@pytest.mark.slow
def test_materialize_every_asset_for_two_partitions(demo_db, tmp_path):
    store_root = tmp_path / "store"
    res = resources(database=f"duckdb://{demo_db}", store=str(store_root))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["customers", "orders"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for table in ("customers", "orders"):
                result = dg.materialize(TABLE_ASSETS, partition_key=table, instance=instance, resources=res)
                assert result.success
            index = dg.materialize(ALL_ASSETS, selection=["catalog_index"], instance=instance, resources=res)
            assert index.success
        bad = [w for w in caught if issubclass(w.category, (DeprecationWarning, dg.BetaWarning, dg.PreviewWarning))]
        assert not bad, [str(w.message) for w in bad]
        # the design's store layout
        for table in ("customers", "orders"):
            runs = run_folders(store_root / "demo.duckdb" / table)
            assert len(runs) == 1
            names = {p.name for p in runs[0].iterdir()}
            assert {"profile.json", "understanding.json", "issues.json", "investigations.json", "catalog.html",
                    "catalog_script.py", "catalog_script.metrics.json"} <= names
        index_html = (store_root / "demo.duckdb" / "index.html").read_text()
        assert "customers" in index_html and "orders" in index_html
        # metadata the UI shows
        mat = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("table_profile"), asset_partitions=["orders"]), limit=1
        ).records[0].asset_materialization
        assert mat.metadata["dagster/row_count"].value > 0
        assert "dagster/column_schema" in mat.metadata

        # a second run writes a new folder, leaves the first intact, reuses the understanding
        first = run_folders(store_root / "demo.duckdb" / "orders")[0]
        before = {str(p.relative_to(first)): p.read_bytes() for p in first.rglob("*") if p.is_file()}
        assert any(name.startswith("fixes/") for name in before)   # the smart-fix scripts too
        again = dg.materialize(TABLE_ASSETS, partition_key="orders", instance=instance, resources=res)
        assert again.success
        runs = run_folders(store_root / "demo.duckdb" / "orders")
        assert len(runs) == 2 and runs[0] == first
        assert {str(p.relative_to(first)): p.read_bytes() for p in first.rglob("*") if p.is_file()} == before
        reused = again.asset_materializations_for_node("table_understanding")[0].metadata["reused_from"].value
        assert reused == first.name


def test_a_table_runs_in_one_process_with_its_sandbox_started_ahead(monkeypatch, local_sandbox):
    # the chain of a table's assets has nothing to run side by side; in one process the
    # sandbox pool can start the sandbox's interpreter as the run begins (CATALOGER_SANDBOX_PRESTART)
    job = defs.resolve_job_def("catalog_table")
    assert job.executor_def.name == "in_process"
    # the investigations name the pool in their signature: it reaches them as a resource
    assert {"sandbox", "sandbox_pool"} <= defs.resolve_assets_def("investigations").op.required_resource_keys
    assert isinstance(defs.resources["sandbox_pool"], dg.ResourceDefinition)
    for prestart, primed in ((None, 1), ("0", 0)):
        if prestart is None:
            monkeypatch.delenv("CATALOGER_SANDBOX_PRESTART", raising=False)
        else:
            monkeypatch.setenv("CATALOGER_SANDBOX_PRESTART", prestart)
        res = resources(sandbox=local_sandbox)
        assert res["sandbox"].prestart_env is None   # the pool starts it, never the resource alone
        with dg.build_resources({"sandbox": res["sandbox"], "sandbox_pool": res["sandbox_pool"]}) as built:
            pool = built.sandbox_pool
            assert pool.started == primed and not pool.closed
        assert pool.closed   # a pool of its own: stopped with the resources


def _our_processes() -> set[int]:
    """This process's children (a sandbox's bubblewrap, or its supervisor without it)."""
    me, found = os.getpid(), set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            data = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2:].split()
        if int(fields[1]) == me and fields[0] != b"Z":
            found.add(int(entry))
    return found


@pytest.mark.slow
def test_a_run_of_the_definitions_takes_its_sandbox_from_the_pool_and_stops_it(demo_db, tmp_path, local_sandbox):
    """A run as `dagster dev` launches it, the definitions' job with their resources: the pool
    resource starts the sandbox as the run begins, the investigations take it warm from there,
    and the pool is stopped at the run's end, its sandboxes with it."""
    settings = load_settings(database=f"duckdb://{demo_db}", store=str(tmp_path / "store"), sandbox=local_sandbox)
    run_defs = build_definitions(settings)
    before = _our_processes()
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["orders"])
        result = run_defs.resolve_job_def("catalog_table").execute_in_process(
            partition_key="orders", instance=instance, raise_on_error=False
        )
        assert result.success
        stopped = [e.user_message for e in instance.all_logs(result.run_id) if "sandbox pool stopped" in e.user_message]
    assert len(stopped) == 1, stopped
    served, started = (int(n) for n in re.findall(r"(\d+) (?:session|sandbox)", stopped[0]))
    assert served >= 1 and started == 1   # the sandbox it started ahead served the investigations
    assert result.asset_materializations_for_node("investigations")[0].metadata["sandbox_cells"].value > 0
    assert _our_processes() <= before, "a sandbox process outlived the run"
