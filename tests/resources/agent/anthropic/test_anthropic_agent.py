"""AnthropicAgent against the local stand-in of the Messages API, through the real SDK and sandbox."""

import json
import os

import pytest

from anthropic_standin import StandIn
from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.resources.agent import heuristic_understanding
from cataloger_dagster.resources.agent.anthropic.agent import AnthropicAgent, prompt_version
from cataloger_dagster.resources.agent.anthropic.tool_loop import REPLAY_ID
from cataloger_dagster.resources.database import SNAPSHOT_URL, DatabaseResource
from cataloger_dagster.core.investigate.code import check_block, check_type, investigate_block, setup_block
from cataloger_dagster.core.investigate.investigator import PreviousScript
from cataloger_dagster.resources.sandbox import SandboxResource
from cataloger_dagster.settings import agent_resource

KEY = "sk-ant-test-SECRET123"
TABLE = "web_events"


@pytest.fixture(scope="module")
def table(demo_db):
    db = DatabaseResource(url=f"duckdb://{demo_db}")
    profile = compute_profile(db.table(TABLE), database=db.database_name, table_name=TABLE,
                              fingerprint=db.fingerprint(TABLE))
    issues = detect_issues(db.table(TABLE), profile, catalog=db.catalog())
    assert issues, "the demo's web_events has planted issues"
    return db, profile, issues


@pytest.fixture
def standin():
    with StandIn() as s:
        yield s


def agent(standin, **kw) -> AnthropicAgent:
    return AnthropicAgent(api_key=KEY, base_url=standin.url, **kw)


@pytest.fixture
def session(table, tmp_path, local_sandbox):
    db, profile, issues = table
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(data, 0o755)
    sandbox = SandboxResource(backend="local", isolation="bwrap")
    with sandbox.session(str(data), env={"DB_CONNECTION_STRING": SNAPSHOT_URL}) as rt:
        db.write_snapshot(TABLE, str(data))
        yield rt


def test_understanding_is_validated_and_cached_context_is_reused(standin, table):
    _, profile, issues = table
    a = agent(standin)
    understanding, usage = a.understand(profile)
    assert usage.fallback_reason is None and usage.calls == 1
    assert [c.name for c in understanding.columns] == [c.name for c in profile.columns]
    assert "stand-in" in understanding.suggested_context  # the model's answer, not the heuristics'
    assert usage.cache_creation_tokens > 0 and usage.prompt_version == prompt_version() == a.prompt_version
    body = standin.requests[-1]
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    # the issues stage shares the table context block: cached for the same model
    b = agent(standin, issues_model=a.understanding_model)
    result, usage2 = b.review_issues(profile, understanding, issues)
    assert usage2.cache_read_tokens >= usage.cache_creation_tokens > 0
    assert {i.id for i in result.issues} == {i.id for i in issues}
    assert all(i.details == d.details for i, d in zip(sorted(result.issues, key=lambda i: i.id),
                                                       sorted(issues, key=lambda i: i.id)))
    assert all(f"Bearer {KEY}" == h for h in standin.auth_headers)


def test_overloaded_then_success_is_retried_by_the_sdk(standin, table):
    _, profile, _ = table
    standin.faults += [{"status": 529}, {"status": 429}]
    understanding, usage = agent(standin, max_retries=2).understand(profile)
    assert usage.fallback_reason is None and usage.calls == 1
    assert len(standin.requests) == 3  # two refused, the third answered
    assert "stand-in" in understanding.suggested_context


def test_errors_past_the_retries_fall_back_with_the_reason(standin, table):
    _, profile, _ = table
    standin.faults += [{"status": 500}] * 2
    understanding, usage = agent(standin, max_retries=1).understand(profile)
    assert usage.fallback_reason.startswith("understanding: InternalServerError")
    assert understanding == heuristic_understanding(profile)
    assert KEY not in usage.fallback_reason


def test_timeout_falls_back(standin, table):
    _, profile, _ = table
    standin.faults.append({"delay": 3.0})
    understanding, usage = agent(standin, timeout_s=0.5, max_retries=0).understand(profile)
    assert "APITimeoutError" in usage.fallback_reason
    assert understanding == heuristic_understanding(profile)


def test_malformed_output_is_asked_again_once_then_falls_back(standin, table):
    _, profile, issues = table
    understanding = heuristic_understanding(profile)
    standin.faults.append({"malformed": True, "stage": "issues"})
    result, usage = agent(standin).review_issues(profile, understanding, issues)
    assert usage.fallback_reason is None and usage.calls == 2
    assert result.summary.startswith("Reviewed")

    standin.faults += [{"malformed": True, "stage": "issues"}] * 2
    result, usage = agent(standin).review_issues(profile, understanding, issues)
    assert usage.calls == 2 and "invalid IssuesAnswer" in usage.fallback_reason
    assert {i.id for i in result.issues} == {i.id for i in issues}  # the heuristics' review


def test_investigation_tool_loop_results_flow_back(standin, table, session):
    _, profile, issues = table
    understanding = heuristic_understanding(profile)
    standin.probe = "import os\nprint(sorted(os.environ.items()))"
    run, usage = agent(standin).investigate(session, profile, understanding, issues, None)
    assert usage.fallback_reason is None, usage.fallback_reason
    # the sandbox never sees the key; the probe really ran there
    probe = json.loads(standin.tool_results[next(iter(standin.tool_results))])
    assert "DB_CONNECTION_STRING" in probe["stdout"] and KEY not in probe["stdout"]
    assert "ANTHROPIC" not in probe["stdout"]
    # one call per issue after the probe and the setup; every result came back to the model
    calls = [b for b in standin.requests if standin.stage(b) == "investigation"]
    assert len(standin.tool_results) == 2 + len(issues) == len(calls) - 1
    assert [i.issue_id for i in run.investigations] == [i.id for i in issues]
    for inv in run.investigations:
        # the verdict the model gave is what the sandbox printed for that issue
        assert inv.success and inv.verdict == inv.output["verdict"] and inv.evidence == inv.output["evidence"]
        assert f"# block: investigate {inv.issue_id}" in inv.code
    script = session.get_session_script()
    assert all(f"# block: investigate {i.id}" in script for i in issues)
    assert usage.calls == len(calls) and usage.cache_read_tokens > 0


def test_previous_script_is_replayed_and_reused(standin, table, session, tmp_path):
    _, profile, issues = table
    understanding = heuristic_understanding(profile)
    cold, _ = agent(standin).investigate(session, profile, understanding, issues, None)
    previous = PreviousScript(timestamp="2024-01-01T00:00:00Z", code=session.get_session_script(), table=TABLE)
    before = len(standin.requests)
    warm, usage = agent(standin).investigate(session, profile, understanding, issues, previous)
    sent = standin.requests[before:]
    assert len(sent) == 1  # the replay answered everything: one request, no new tool call
    context = sent[0]["messages"][0]["content"][0]["text"]
    assert previous.code.splitlines()[5] in context and "2024-01-01T00:00:00Z" in context
    assert sent[0]["messages"][1]["content"][0]["id"] == REPLAY_ID
    assert sorted(warm.reused) == sorted(i.id for i in issues) and usage.fallback_reason is None
    assert [(i.issue_id, i.verdict, i.evidence) for i in warm.investigations] == [
        (i.issue_id, i.verdict, i.evidence) for i in cold.investigations]


def test_an_old_format_script_is_shown_and_replayed_only_by_the_blocks_fit_to_rerun(standin, table, session):
    """A script of the version that wrote ids raw into markers: its blocks this version would write
    the same way are replayed; one a name could have broken into is neither shown nor run."""
    _, profile, issues = table
    poisoned, rest = issues[0], issues[1:]
    kinds = sorted({check_type(i) for i in issues})
    blocks = [setup_block(TABLE), *(check_block(k) for k in kinds),
              f"# block: investigate {poisoned.id}\nprint('PAYLOAD RAN')\n"
              + investigate_block(poisoned, issues).split("\n", 1)[1],
              *(investigate_block(i, issues) for i in rest)]
    old = ("# Session script exported by cataloger SandboxResource\n# local sandbox, exported 2024-01-01T00:00:00Z\n"
           + "\n".join(f"# %% cell {n}\n{b}" for n, b in enumerate(blocks, 1)))
    previous = PreviousScript(timestamp="2024-01-01T00:00:00Z", code=old, table=TABLE)
    run, usage = agent(standin).investigate(session, profile, heuristic_understanding(profile), issues, previous)
    assert usage.fallback_reason is None
    first = standin.requests[0]["messages"]
    assert "PAYLOAD" not in first[0]["content"][0]["text"] and "PAYLOAD" not in first[1]["content"][0]["input"]["code"]
    assert all("PAYLOAD" not in c.code for c in session.cells)
    assert sorted(run.reused) == sorted(i.id for i in rest) and run.relearned == []
    assert all(i.success and i.verdict for i in run.investigations)


def test_turn_limit_ends_the_loop_and_the_heuristics_finish(standin, table, session):
    _, profile, issues = table
    run, usage = agent(standin, max_turns=2).investigate(
        session, profile, heuristic_understanding(profile), issues, None)
    calls = [b for b in standin.requests if standin.stage(b) == "investigation"]
    assert len(calls) == 2 and calls[-1]["tool_choice"] == {"type": "none"}
    assert "turn limit (2) reached" in usage.fallback_reason
    assert [i.issue_id for i in run.investigations] == [i.id for i in issues]
    assert all(i.success and i.verdict for i in run.investigations)


def test_investigation_api_failure_falls_back_to_the_heuristic_loop(standin, table, session):
    _, profile, issues = table
    standin.faults += [{"status": 529, "stage": "investigation"}] * 3
    run, usage = agent(standin, max_retries=1).investigate(
        session, profile, heuristic_understanding(profile), issues, None)
    assert usage.fallback_reason.startswith("investigation: OverloadedError")
    assert all(i.success and i.verdict for i in run.investigations)
    assert "check_" in run.investigations[0].code


def test_settings_select_the_agent_and_need_the_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        agent_resource("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("CATALOGER_AGENT", "anthropic")
    monkeypatch.setenv("CATALOGER_ANTHROPIC_MAX_TURNS", "5")
    res = agent_resource()
    assert isinstance(res, AnthropicAgent) and res.kind == "anthropic" and res.max_turns == 5
    assert KEY not in repr(res)  # an EnvVar until Dagster resolves it
