"""The fleet simulation (benchmarks/simulate_fleet.py) on small fleets whose answer is known."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "simulate_fleet.py"
_spec = importlib.util.spec_from_file_location("simulate_fleet", SCRIPT)
simulate_fleet = importlib.util.module_from_spec(_spec)
# dataclasses look their module up by name
sys.modules.setdefault("simulate_fleet", simulate_fleet)
_spec.loader.exec_module(simulate_fleet)

STAGE_SECONDS = {"run_start": 0.5, "table_profile": 2.0, "table_understanding": 0.25, "quality_issues": 1.0,
                 "investigations": 3.0, "recent_summary": 0.25, "catalog_page": 0.5, "index": 0.1}


@pytest.fixture
def costs(tmp_path) -> Path:
    small = {"rows": 1000, "columns": 5, "seconds": STAGE_SECONDS, "store_requests": 60,
             "run_storage_events": 120, "peak_mb": 300.0}
    large = {"rows": 1_000_000, "columns": 12, "seconds": {k: v * 4 for k, v in STAGE_SECONDS.items()},
             "store_requests": 60, "run_storage_events": 120, "peak_mb": 600.0}
    path = tmp_path / "per_table_costs.json"
    path.write_text(json.dumps({"measured": "2026-11-23", "machine": "test", "sizes": [small, large]}))
    return path


# no overheads beyond the measured stages, no jitter: the simulation's arithmetic shows
NO_QUEUE_DELAY = ["--dequeue-interval", "0", "--launch-seconds", "0"]
EXACT = [*NO_QUEUE_DELAY, "--pod-start", "0", "--jitter", "0"]


def run(costs: Path, *args: str) -> dict:
    return simulate_fleet.main([str(costs), "--databases", "1", *EXACT, *args])


def test_one_database_with_a_cap_of_one_takes_the_sum_of_its_tables(costs):
    tables, rps, eps = 40, 1000.0, 500.0
    result = run(costs, "--tables", str(tables), "--pool-cap", "1", "--mix", "1,0",
                 "--store-rps", str(rps), "--run-storage-eps", str(eps))
    per_table = sum(v for k, v in STAGE_SECONDS.items() if k != "index") + 60 / rps + 120 / eps
    index = STAGE_SECONDS["run_start"] + STAGE_SECONDS["index"] * tables + 120 / eps
    assert result["tables"] == tables
    assert result["wall_seconds"] == pytest.approx(tables * per_table + index, rel=1e-3)
    assert result["peak_pods"] == 1
    assert result["saturates_first"] == "sources"


def test_doubling_the_cap_halves_the_wall_until_the_pod_limit_binds(costs):
    walls = {cap: run(costs, "--tables", "400", "--pool-cap", str(cap), "--max-runs", "8")
             for cap in (1, 2, 4, 8, 16)}
    for cap in (2, 4, 8):
        assert walls[cap]["wall_seconds"] == pytest.approx(walls[cap // 2]["wall_seconds"] / 2, rel=0.1)
        assert walls[cap]["saturates_first"] == "sources"
    # past 8 run pods the database's cap no longer matters: the pods are the limit
    assert walls[16]["wall_seconds"] == pytest.approx(walls[8]["wall_seconds"], rel=0.05)
    assert walls[16]["peak_pods"] == 8
    assert walls[16]["saturates_first"] == "pods"


def test_a_starved_store_becomes_what_saturates_first(costs):
    fed = simulate_fleet.main([str(costs), "--tables", "2000", "--databases", "4", "--pool-cap", "4"])
    starved = simulate_fleet.main([str(costs), "--tables", "2000", "--databases", "4", "--pool-cap", "4",
                                   "--store-rps", "10"])
    assert fed["saturates_first"] == "sources"
    assert starved["saturates_first"] == "store"
    assert starved["saturated_fraction"]["store"] > 0.9
    assert starved["wall_seconds"] > 2 * fed["wall_seconds"]


def test_batches_pay_the_run_overhead_once(costs):
    args = [str(costs), "--tables", "1000", "--databases", "5", "--pool-cap", "4", "--pod-start", "10"]
    single = simulate_fleet.main(args)
    batched = simulate_fleet.main([*args, "--batch", "20", "--batch-shares-run-start"])
    assert batched["tables"] == single["tables"] == 1000
    assert batched["vcpu_hours"] < single["vcpu_hours"] * 0.8
    assert batched["usd_per_table"] < single["usd_per_table"]


def test_the_same_seed_gives_the_same_night(costs):
    args = [str(costs), "--tables", "3000", "--databases", "6"]
    assert simulate_fleet.main(args) == simulate_fleet.main(args)
    assert simulate_fleet.main(args)["wall_seconds"] != simulate_fleet.main([*args, "--seed", "7"])["wall_seconds"]


def test_a_costs_file_without_a_stage_says_which(tmp_path):
    path = tmp_path / "costs.json"
    seconds = {k: v for k, v in STAGE_SECONDS.items() if k != "investigations"}
    path.write_text(json.dumps({"sizes": [{"rows": 10, "columns": 2, "seconds": seconds,
                                           "store_requests": 1, "run_storage_events": 1, "peak_mb": 1}]}))
    with pytest.raises(SystemExit, match=r"10x2 lacks seconds for \['investigations'\]"):
        simulate_fleet.main([str(path)])


def test_each_run_pod_pays_its_start_and_the_import(costs):
    base = ["--tables", "30", "--pool-cap", "1", "--mix", "1,0"]
    bare = run(costs, *base)
    started = simulate_fleet.main([str(costs), "--databases", "1", *NO_QUEUE_DELAY, "--jitter", "0", *base,
                                   "--pod-start", "3", "--import-seconds", "2"])
    runs = 30 + 1   # the tables' and the index's
    assert started["wall_seconds"] == pytest.approx(bare["wall_seconds"] + runs * 5, rel=1e-3)
    assert started["assumptions"]["import_seconds"] == 2
