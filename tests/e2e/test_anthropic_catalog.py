"""A full catalog of the demo database with the Anthropic agent, against the local stand-in."""

import json
from pathlib import Path

import dagster as dg
import pytest

from anthropic_standin import StandIn
from cataloger_dagster.cli.runner import catalog_database
from store_folders import run_folders

KEY = "sk-ant-test-SECRET123"


@pytest.fixture
def standin(monkeypatch):
    with StandIn() as s:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", s.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        yield s


def files_holding(root: Path, text: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_cold_and_warm_catalog_runs(standin, demo_db, tmp_path, local_sandbox, capfd):
    store, home = tmp_path / "store", tmp_path / "dagster_home"
    home.mkdir()
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        cold = catalog_database(database=f"duckdb://{demo_db}", store=str(store), agent="anthropic",
                                sandbox="local", exploration_rate=0.0, instance=instance)
        cold_tokens, cold_calls = standin.input_tokens(), len(standin.requests)
        cold_followups = [s for s, _ in standin.usages].count("followups")
        warm = catalog_database(database=f"duckdb://{demo_db}", store=str(store), agent="anthropic",
                                sandbox="local", exploration_rate=0.0, instance=instance)
    warm_tokens = standin.input_tokens() - cold_tokens
    assert not cold.failed and not warm.failed, [t.error for t in cold.failed + warm.failed]
    assert {s for s, _ in standin.usages} == {"understanding", "issues", "followups", "investigation"}
    # the smart-fix questions of an unchanged review are kept: asked in the cold run only
    assert cold_followups > 0 and [s for s, _ in standin.usages].count("followups") == cold_followups
    assert all(t.tokens > 0 for t in cold.tables)
    # the warm run reuses the understanding and the previous scripts: far fewer tokens
    assert 0 < warm_tokens < cold_tokens
    assert len(standin.requests) - cold_calls < cold_calls
    for c, w in zip(cold.tables, warm.tables):
        assert [i.id for i in c.issues] == [i.id for i in w.issues]
        assert c.pass_rate == w.pass_rate and (c.pass_rate is None or c.pass_rate == 1.0)
    table = next(t for t in warm.tables if t.issues)
    run = store / Path(table.html).relative_to(store).parts[0] / table.table
    first, second = (p.name for p in run_folders(run))
    metrics = json.loads((run / second / "catalog_script.metrics.json").read_text())
    assert metrics["agent"] == "anthropic" and metrics["based_on"] == first and metrics["pass_rate"] == 1.0
    assert json.loads((run / first / "understanding.json").read_text())["cache_key"].endswith(
        ":anthropic:" + standin_prompt_version())
    page = (run / first / "catalog.html").read_text()
    # the agent's token count is engineering detail: in the page's closed "Run details"
    assert "<dt>Tokens</dt>" in page.split('id="run-details"', 1)[1]
    pages = "".join(p.read_text() for p in store.rglob("catalog.html"))
    assert f"Smart fix · anthropic:{standin_prompt_version()}" in pages and "Stand-in: " in pages
    # the key reached the stand-in, and nowhere else
    assert standin.auth_headers == {f"Bearer {KEY}"}
    out, err = capfd.readouterr()
    assert KEY not in out + err
    assert files_holding(store, KEY) == [] and files_holding(home, KEY) == []
    assert all(KEY not in result for result in standin.tool_results.values())


def standin_prompt_version() -> str:
    from cataloger_dagster.resources.agent.anthropic.agent import prompt_version

    return prompt_version()


def test_a_timeout_falls_back_and_the_run_succeeds(standin, demo_db, tmp_path, local_sandbox, monkeypatch):
    monkeypatch.setenv("CATALOGER_ANTHROPIC_TIMEOUT_S", "0.5")
    monkeypatch.setenv("CATALOGER_ANTHROPIC_MAX_RETRIES", "0")
    standin.faults.append({"delay": 2.0, "stage": "understanding"})
    standin.faults.append({"malformed": True, "stage": "issues"})
    standin.faults.append({"malformed": True, "stage": "issues"})
    with dg.instance_for_test() as instance:
        report = catalog_database(database=f"duckdb://{demo_db}", store=str(tmp_path / "store"),
                                  agent="anthropic", sandbox="local", tables=["web_events"], instance=instance)
        assert not report.failed, report.tables[0].error
        found = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("table_understanding"), asset_partitions=["web_events"]),
            limit=1).records[0].asset_materialization
    assert "APITimeoutError" in found.metadata["fallback_reason"].value
    assert report.tables[0].pass_rate == 1.0
