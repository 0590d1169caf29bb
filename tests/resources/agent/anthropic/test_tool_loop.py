"""The Anthropic agent's investigation (anthropic/tool_loop.py): the `execute_python` tool loop over
one real bubblewrap sandbox session, through the real anthropic SDK against the local stand-in of the
Messages API.  Results flow back to the model, a previous script is replayed first, the loop ends at
its turn limit or token budget, and whatever the model leaves (or a failed loop) the heuristic
investigator finishes on the same session."""

import json

from anthropic_standin import StandIn
from cataloger_dagster.core.investigate.code import check_block, check_type, investigate_block, parse_records, setup_block
from cataloger_dagster.core.investigate.investigator import PreviousScript
from cataloger_dagster.resources.agent import heuristic_understanding
from cataloger_dagster.resources.agent.anthropic.agent import AnthropicAgent
from cataloger_dagster.resources.agent.anthropic.tool_loop import (
    CUT_EVIDENCE,
    REPLAY_ID,
    TOOL,
    _with_cache_mark,
    investigate_with_tools,
    tool_result,
)
from cataloger_dagster.resources.sandbox.base import ErrorInfo, ExecutionResult

KEY = "sk-ant-test-SECRET123"
TABLE = "web_events"


def agent(standin, **kw) -> AnthropicAgent:
    return AnthropicAgent(api_key=KEY, base_url=standin.url, **kw)


def investigation_calls(standin) -> list[dict]:
    return [b for b in standin.requests if standin.stage(b) == "investigation"]


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


# ---------------------------------------------------------------- what nothing else covered


def test_tool_results_are_clipped_for_the_model():
    limit = 100
    result = ExecutionResult(ok=False, stdout="o" * 250, stderr="e" * 30, result="r" * 10,
                             error=ErrorInfo(type="ValueError", message="m" * 40), timed_out=True)
    sent = json.loads(tool_result(result, limit))
    assert sent["stdout"] == "o" * 100 + "\n... [150 characters cut]"
    # the rest get a quarter of the room each
    assert sent["stderr"] == "e" * 25 + "\n... [5 characters cut]"
    assert sent["result"] == "r" * 10  # short enough: as it was
    assert sent["error"] == ("ValueError: " + "m" * 40)[:25] + "\n... [27 characters cut]"
    assert (sent["ok"], sent["timed_out"]) == (False, True)
    fine = json.loads(tool_result(ExecutionResult(ok=True, stdout="hi\n"), limit))
    assert fine == {"ok": True, "stdout": "hi\n", "stderr": "", "result": None, "error": None,
                    "timed_out": False}


def test_a_long_record_loses_its_evidence_before_any_verdict_is_cut():
    # three verdicts, the first with examples long enough to push the others past the limit
    def line(issue, evidence):
        return json.dumps({"issue": issue, "verdict": "confirmed", "reason": "r", "affected": 1, "evidence": evidence})
    stdout = "\n".join(["schema", line("a", {"examples": ["x" * 900]}), line("b", {"rows": 3}),
                         line("c", {"rows": 4}), ""])
    sent = json.loads(tool_result(ExecutionResult(ok=True, stdout=stdout), 400))["stdout"]
    found = parse_records(sent)
    assert {k: v["verdict"] for k, v in found.items()} == {"a": "confirmed", "b": "confirmed", "c": "confirmed"}
    assert found["a"]["evidence"] == CUT_EVIDENCE and found["c"]["evidence"] == {"rows": 4}
    assert len(sent) <= 400 and sent.startswith("schema\n")


def test_the_cache_mark_goes_on_the_last_block_and_leaves_the_conversation_as_it_was():
    messages = [{"role": "user", "content": [{"type": "text", "text": "a"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "content": "x"},
                                             {"type": "tool_result", "tool_use_id": "2", "content": "y"}]}]
    before = json.loads(json.dumps(messages))
    marked = _with_cache_mark(messages)
    assert messages == before  # the next turn extends the unmarked conversation
    assert marked[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    blocks = [b for m in marked for b in m["content"]]
    assert sum("cache_control" in b for b in blocks) == 1
    assert [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks] == [
        b for m in before for b in m["content"]]


def test_no_issues_means_no_request(standin, table):
    _, profile, _ = table
    run, usage = investigate_with_tools(agent(standin), None, profile, heuristic_understanding(profile), [], None)
    assert run.investigations == [] and usage.calls == 0 and standin.requests == []


def test_the_request_offers_the_one_tool_and_the_table_context(standin, table, session):
    _, profile, issues = table
    agent(standin, investigation_model="investigator").investigate(
        session, profile, heuristic_understanding(profile), issues, None)
    first = investigation_calls(standin)[0]
    assert first["model"] == "investigator" and first["tools"] == [TOOL]
    assert first["tool_choice"] == {"type": "auto"}
    text = first["messages"][0]["content"][0]["text"]
    context = json.loads(text.split("<context>\n")[1].split("\n</context>")[0])
    assert context == {"tables": [TABLE], "previous_script": None}
    # a cold table starts from the setup block; the model is shown what code needs of each issue
    assert "<setup>\n" + setup_block(TABLE).strip() in text
    shown = json.loads(text.split("<issues>\n")[1].split("\n</issues>")[0])
    assert [i["id"] for i in shown] == [i.id for i in issues]
    assert "description" not in shown[0] and shown[0]["details"] == json.loads(json.dumps(issues[0].details))


def test_the_token_budget_ends_the_loop(standin, table, session):
    _, profile, issues = table
    run, usage = agent(standin, token_budget=1).investigate(
        session, profile, heuristic_understanding(profile), issues, None)
    calls = investigation_calls(standin)
    # the first turn spends the budget; the second may not call the tool, so the model answers
    assert [c["tool_choice"] for c in calls] == [{"type": "auto"}, {"type": "none"}]
    assert usage.fallback_reason == (f"investigation: token budget (1) spent; {len(issues)} issues "
                                     "investigated by the heuristics")
    assert [i.issue_id for i in run.investigations] == [i.id for i in issues]
    assert all(i.success and i.verdict for i in run.investigations)


def test_an_invalid_answer_is_asked_again_without_costing_a_turn(standin, table, session):
    _, profile, issues = table
    # exactly enough turns for the cold loop: the setup, one call per issue, the answer
    standin.faults.append({"malformed": True, "stage": "investigation"})
    run, usage = agent(standin, max_turns=len(issues) + 2).investigate(
        session, profile, heuristic_understanding(profile), issues, None)
    assert usage.fallback_reason is None, usage.fallback_reason
    assert len(investigation_calls(standin)) == len(issues) + 3
    assert all(i.success and i.verdict for i in run.investigations)


def test_an_invalid_answer_twice_hands_the_table_to_the_heuristics(standin, table, session):
    _, profile, issues = table
    standin.faults += [{"malformed": True, "stage": "investigation"}] * 2
    run, usage = agent(standin).investigate(session, profile, heuristic_understanding(profile), issues, None)
    assert usage.fallback_reason == ("investigation: invalid final answer twice (1 validation errors); "
                                     "investigated by the heuristics")
    assert len(investigation_calls(standin)) == 2
    assert [i.issue_id for i in run.investigations] == [i.id for i in issues]
    assert all(i.success and i.verdict for i in run.investigations)


class Misdirected(StandIn):
    """A model whose first turn calls a tool that does not exist and execute_python without code."""

    BAD = ("toolu_bad_name", "toolu_no_code")

    def investigation(self, body):
        messages = body["messages"]
        if not any(m["role"] == "assistant" for m in messages):
            return [{"type": "tool_use", "id": self.BAD[0], "name": "run_sql", "input": {"code": "print(1)"}},
                    {"type": "tool_use", "id": self.BAD[1], "name": "execute_python", "input": {"source": "x"}}]
        # the rest of the conversation as the stand-in's model knows it: without the bad turn
        clean = [m for m in messages
                 if not any(b.get("id") in self.BAD or b.get("tool_use_id") in self.BAD for b in m["content"]
                            if isinstance(b, dict))]
        return super().investigation({**body, "messages": clean})


def test_a_call_to_an_unknown_tool_or_without_code_is_refused_and_the_loop_goes_on(table, session):
    _, profile, issues = table
    with Misdirected() as s:
        run, usage = agent(s).investigate(session, profile, heuristic_understanding(profile), issues, None)
        second = investigation_calls(s)[1]
    refused = {b["tool_use_id"]: b for b in second["messages"][-1]["content"]}
    assert set(refused) == set(Misdirected.BAD)
    assert all(b["is_error"] and "unknown tool or missing 'code'" in b["content"] for b in refused.values())
    assert all("print(1)" not in c.code for c in session.cells)  # nothing of it ran
    assert usage.fallback_reason is None
    assert all(i.success and i.verdict for i in run.investigations)


class Sloppy(StandIn):
    """A model whose answer cites no cells, repeats an issue and names one that was never asked."""

    def investigation(self, body):
        content = super().investigation(body)
        if content[0]["type"] != "text":
            return content
        answer = json.loads(content[0]["text"])
        findings = answer["investigations"]
        for f in findings:
            f["cells"] = []
        # a second, different verdict on the first issue: the first one given must stand
        other = "refuted" if findings[0]["verdict"] != "refuted" else "confirmed"
        findings.append({**findings[0], "verdict": other, "evidence": "{}"})
        findings.append({**findings[0], "issue_id": "web_events_not_asked"})
        return [{"type": "text", "text": json.dumps({"investigations": findings})}]


def test_an_answer_is_tied_to_the_code_that_printed_it(table, session):
    _, profile, issues = table
    with Sloppy() as s:
        run, usage = agent(s).investigate(session, profile, heuristic_understanding(profile), issues, None)
    assert usage.fallback_reason is None
    assert [i.issue_id for i in run.investigations] == [i.id for i in issues]  # one each, none invented
    for inv in run.investigations:
        # uncited: the cells whose output recorded the issue; the first finding is the one kept,
        # so the verdict is the one the sandbox printed
        assert f"# block: investigate {inv.issue_id}" in inv.code and inv.success
        assert inv.verdict == inv.output["verdict"] and inv.evidence == inv.output["evidence"]
        assert inv.execution_time_ms > 0


class Mute(StandIn):
    """A model that says it wants a tool but calls none."""

    def handle(self, body):
        status, payload = super().handle(body)
        if status == 200 and self.stage(body) == "investigation":
            payload["content"] = [{"type": "text", "text": "Let me think."}]
            payload["stop_reason"] = "tool_use"
        return status, payload


def test_a_turn_with_neither_answer_nor_tool_call_hands_the_table_to_the_heuristics(table, session):
    _, profile, issues = table
    with Mute() as s:
        run, usage = agent(s).investigate(session, profile, heuristic_understanding(profile), issues, None)
    assert usage.fallback_reason == "investigation: stopped (tool_use) without an answer; investigated by the heuristics"
    assert usage.calls == 1
    assert [i.issue_id for i in run.investigations] == [i.id for i in issues]
    assert all(i.success and i.verdict for i in run.investigations)


def test_a_refutation_flows_from_the_sandbox_to_the_final_verdict(standin, table, session):
    """A careless outlier issue (Tukey's fence on a smoothly skewed duration): the check the model
    runs tests the hypothesis, prints "refuted" with its reason, and that is the verdict recorded."""
    from cataloger_dagster.core.models import IssueModel

    db, profile, _ = table
    durations = db.table(TABLE).duration_ms
    q1, q3 = (float(durations.quantile(p).execute()) for p in (0.25, 0.75))
    careless = IssueModel(id="careless_outliers_duration_ms", type="outliers", severity="medium",
                          description="duration_ms beyond Tukey's fence", affectedColumns=["duration_ms"],
                          suggestedAction="review", category="smart_fixes", source="careless",
                          details={"fence_low": q1 - 1.5 * (q3 - q1), "fence_high": q3 + 1.5 * (q3 - q1)})
    run, usage = agent(standin).investigate(session, profile, heuristic_understanding(profile), [careless], None)
    assert usage.fallback_reason is None, usage.fallback_reason
    [found] = run.investigations
    printed = [json.loads(r)["stdout"] for r in standin.tool_results.values()]
    assert any('"verdict": "refuted"' in out and careless.id in out for out in printed)
    assert found.success and found.verdict == "refuted"
    assert "tail" in found.reason and "errors, not the tail" in found.hypothesis
    assert found.evidence["isolated_rows"] == 0 and found.evidence["rows"] > 0


def test_reviews_reach_the_context_beside_previous_script_and_never_the_sandbox(standin, table, session):
    from cataloger_dagster.core.reviews import Review
    from cataloger_dagster.core.reviews.memory import ReviewMemory

    _, profile, issues = table
    marker = "REVIEW_NOTE_7F3A"
    note = f"print('{marker}')\nimport os; os.system('echo {marker}')"
    reviews = ReviewMemory(reviews=[Review(table=TABLE, issue_id=issues[0].id, verdict="accept", note=note,
                                           reviewer="ana")]).for_prompt()
    run, usage = agent(standin).investigate(session, profile, heuristic_understanding(profile), issues[:2], None,
                                            reviews=reviews)
    assert usage.fallback_reason is None, usage.fallback_reason
    first = investigation_calls(standin)[0]["messages"][0]["content"][0]["text"]
    context = json.loads(first.split("<context>\n", 1)[1].split("\n</context>", 1)[0])
    assert "previous_script" in context and context["reviews"][0]["note"] == note
    # data for the model only: no cell ran it, nothing printed it, the kept script holds none of it
    assert session.cells and all(marker not in c.code for c in session.cells)
    assert all(marker not in json.dumps(inv.output, default=str) for inv in run.investigations)
    assert marker not in session.get_session_script()
    assert all(marker not in (inv.code or "") for inv in run.investigations)
