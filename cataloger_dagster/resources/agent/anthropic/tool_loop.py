"""The Anthropic agent's investigation: a tool loop over one sandbox session (one tool that runs any code).

The model gets one tool, `execute_python`, bound to the table's persistent
sandbox session, plus a context JSON (`tables`, `previous_script`).
Each call runs as one sandbox cell, so the session script holds everything the
model ran and the next run is fed it unchanged.  The loop ends when the model
answers, when `max_turns` is reached or when the token budget is spent (the
last turn then forbids tools, so the model answers with what it has).  Issues
it leaves unanswered, or the whole table when the loop fails, go to the
heuristic investigator on the same session.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Optional

from pydantic import BaseModel, Json, ValidationError

from cataloger_dagster.core.models import CodeInvestigation, IssueModel
from cataloger_dagster.resources.agent.anthropic.prompts import StageFailed, render, to_json, user_message
from cataloger_dagster.core.investigate.codegen import literal
from cataloger_dagster.core.investigate.code import (
    ParsedScript,
    helpers_block,
    parse_records,
    retarget_setup,
    reusable_blocks,
    setup_block,
)
from cataloger_dagster.core.investigate.investigator import InvestigationRun, PreviousScript, run_investigations

TOOL = {
    "name": "execute_python",
    "description": (
        "Run Python code in the table's persistent sandbox interpreter (variables survive between calls). "
        "Returns stdout, stderr, the value of a final expression, and the error if the code failed."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"code": {"type": "string", "description": "Python source to run"}},
        "required": ["code"],
    },
}


# what code needs of an issue (the prose is the issues stage's business)
_FOR_CODE = ("id", "type", "severity", "affectedColumns", "affectedRows", "details")


class Finding(BaseModel):
    issue_id: str
    verdict: Literal["confirmed", "refuted", "inconclusive"]
    hypothesis: Optional[str] = None  # what was tested (the printed record's, when the model omits it)
    reason: Optional[str] = None  # the evidence that decided the verdict
    evidence: Json[dict[str, Any]]
    cells: list[str]


class InvestigationAnswer(BaseModel):
    investigations: list[Finding]


@dataclass
class _Cell:
    code: str
    ok: bool
    stdout: str
    error: Optional[str]
    ms: float


def _clip(text: Optional[str], limit: int) -> Optional[str]:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n... [{len(text) - limit} characters cut]"


CUT_EVIDENCE = {"cut": "the cell printed more than the model is shown"}


def _clip_stdout(text: Optional[str], limit: int) -> Optional[str]:
    """The cell's output within `limit`, every verdict kept: the records' evidence goes first, the
    largest first, so that a long record (names in every example row) never pushes the verdicts
    after it past the limit, where the model would not see them."""
    if text is None or len(text) <= limit:
        return text
    lines = text.split("\n")
    records = set(parse_records("\n".join(lines)))
    big = []
    for n, line in enumerate(lines):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict) and found.get("issue") in records and "evidence" in found:
            big.append((len(line), n, found))
    size = len(text)
    for length, n, found in sorted(big, key=lambda b: (-b[0], b[1])):
        if size <= limit:
            break
        lines[n] = json.dumps({**found, "evidence": CUT_EVIDENCE}, default=str)
        size += len(lines[n]) - length
    return _clip("\n".join(lines), limit)


def tool_result(result, limit: int) -> str:
    error = f"{result.error.type}: {result.error.message}" if result.error else None
    return json.dumps(
        {
            "ok": result.ok,
            "stdout": _clip_stdout(result.stdout, limit),
            "stderr": _clip(result.stderr, limit // 4),
            "result": _clip(result.result, limit // 4),
            "error": _clip(error, limit // 4),
            "timed_out": result.timed_out,
        }
    )


def _with_cache_mark(messages: list[dict]) -> list[dict]:
    """The conversation so far is a prefix of the next turn: mark its end for caching."""
    marked = [dict(m) for m in messages]
    last = dict(marked[-1])
    content = [dict(b) for b in last["content"]]
    content[-1]["cache_control"] = {"type": "ephemeral"}
    last["content"] = content
    marked[-1] = last
    return marked


def _echo(block) -> dict:
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return block.to_dict()  # thinking blocks go back as they came


def investigate_with_tools(
    agent,
    runtime,
    profile,
    understanding,
    issues: list[IssueModel],
    previous: Optional[PreviousScript],
    *,
    reviews: Optional[list[dict]] = None,
):
    usage = agent.usage()
    if not issues:
        return InvestigationRun(investigations=[]), usage
    parsed = reusable_blocks(previous.code, previous.table, issues) if previous is not None else None
    context: dict[str, Any] = {
        "tables": [profile.table],
        "previous_script": {"timestamp": previous.timestamp, "code": _shown(previous, parsed)}
        if previous is not None and parsed is not None
        else None,
    }
    if previous is not None and previous.table != profile.table:
        context["previous_script"]["table"] = previous.table
    if reviews:
        # what people said of the findings, with their notes: JSON for the model to read, never code to run
        context["reviews"] = reviews
    replay = _replayable(parsed, previous, profile.table)
    text = render(
        "investigation.user",
        table=literal(profile.table),
        count=len(issues),
        context=to_json(context),
        understanding=to_json(
            {
                "description": understanding.summary.description,
                "columns": {c.name: c.description for c in understanding.columns},
            }
        ),
        issues=to_json([i.model_dump(include=set(_FOR_CODE)) for i in issues]),
        setup=None if replay else setup_block(profile.table),
        replayed=REPLAY_ID if replay else None,
    )
    cells: dict[str, _Cell] = {}
    messages = [user_message(text)] + _replay(agent, runtime, issues, replay, cells)
    try:
        answer, stop = _loop(agent, runtime, profile, messages, usage, cells)
    except StageFailed as exc:
        usage.fallback_reason = f"investigation: {exc}; investigated by the heuristics"
        return run_investigations(runtime, profile.table, issues, previous), usage
    run = _collect(issues, answer, cells, parsed)
    missing = [i for i in issues if i.id not in {inv.issue_id for inv in run.investigations}]
    if missing:
        usage.fallback_reason = f"investigation: {stop}; {len(missing)} issues investigated by the heuristics"
        rest = run_investigations(runtime, profile.table, missing, None, explore=False)
        run.investigations += rest.investigations
    order = {i.id: n for n, i in enumerate(issues)}
    run.investigations.sort(key=lambda inv: order[inv.issue_id])
    return run, usage


REPLAY_ID = "toolu_previous_script_replay"


def _shown(previous: PreviousScript, parsed: ParsedScript) -> str:
    """The previous script as the model sees it: of an earlier format, only its reusable blocks."""
    if parsed.current_format:
        return previous.code
    blocks = [parsed.setup or "", *parsed.checks.values(), *parsed.investigations.values()]
    return "\n".join(b for b in blocks if b)


def _replayable(
    parsed: Optional[ParsedScript], previous: Optional[PreviousScript], table: str
) -> Optional[tuple[ParsedScript, str, bool]]:
    """The previous script's blocks, the setup to run them after (pointed at `table`) and whether
    the script was written for `table`; None when it has no setup this table can use."""
    if parsed is None or previous is None or not parsed.setup:
        return None
    same = previous.table == table
    setup = parsed.setup if same else retarget_setup(parsed.setup, table)
    return (parsed, setup, same) if setup else None


def _replay(
    agent,
    runtime,
    issues: list[IssueModel],
    replay: Optional[tuple[ParsedScript, str, bool]],
    cells: dict[str, "_Cell"],
) -> list[dict]:
    """Run what worked last time (its setup, checks and the investigations of current issues) as the
    conversation's first tool call, so a warm table needs one answer instead of a call and an answer."""
    if replay is None:
        return []
    parsed, setup, same = replay
    kept = [parsed.investigations[i.id] for i in issues if same and i.id in parsed.investigations]
    # today's helpers after the earlier setup: the checks of this version rely on them
    code = "\n".join([setup, helpers_block(), *parsed.checks.values(), *kept])
    result = runtime.execute(code)
    error = f"{result.error.type}: {result.error.message}" if result.error else None
    cells[REPLAY_ID] = _Cell(code, result.ok, result.stdout, error, result.duration_ms)
    return [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": REPLAY_ID, "name": TOOL["name"], "input": {"code": code}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": REPLAY_ID,
                    "is_error": not result.ok,
                    "content": tool_result(result, agent.tool_output_chars),
                }
            ],
        },
    ]


def _loop(agent, runtime, profile, messages, usage, cells) -> tuple[Optional[InvestigationAnswer], str]:
    client = agent.client()
    system = agent.system(profile, "investigation")
    retried = False
    turn = 0
    why = f"turn limit ({agent.max_turns}) reached"
    while turn < agent.max_turns:
        turn += 1
        spent = usage.input_tokens + usage.output_tokens + usage.cache_read_tokens + usage.cache_creation_tokens
        last = turn == agent.max_turns or spent >= agent.token_budget
        why = (
            f"token budget ({agent.token_budget:,}) spent"
            if spent >= agent.token_budget
            else f"turn limit ({agent.max_turns}) reached"
            if last
            else "answered"
        )
        try:
            message, answer = agent.call(
                client,
                model=agent.investigation_model,
                system=system,
                messages=_with_cache_mark(messages),
                usage=usage,
                answer=InvestigationAnswer,
                tools=[TOOL],
                tool_choice={"type": "none"} if last else {"type": "auto"},
            )
        except ValidationError as exc:
            if retried:
                raise StageFailed(f"invalid final answer twice ({exc.error_count()} validation errors)") from None
            retried = True
            turn -= 1  # asking again for the answer is not a turn of work
            continue
        if answer is not None:
            return answer, why
        messages.append({"role": "assistant", "content": [_echo(b) for b in message.content]})
        results = []
        for block in message.content:
            if block.type != "tool_use":
                continue
            code = block.input.get("code") if isinstance(block.input, dict) else None
            if block.name != TOOL["name"] or not isinstance(code, str):
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": block.id,
                        "is_error": True,
                        "content": "unknown tool or missing 'code': call execute_python(code)",
                    }
                )
                continue
            result = runtime.execute(code)
            error = f"{result.error.type}: {result.error.message}" if result.error else None
            cells[block.id] = _Cell(code, result.ok, result.stdout, error, result.duration_ms)
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block.id,
                    "is_error": not result.ok,
                    "content": tool_result(result, agent.tool_output_chars),
                }
            )
        if not results:
            raise StageFailed(f"stopped ({message.stop_reason}) without an answer")
        messages.append({"role": "user", "content": results})
        if last:
            break
    return None, why


def _collect(
    issues, answer: Optional[InvestigationAnswer], cells: dict[str, _Cell], parsed: Optional[ParsedScript]
) -> InvestigationRun:
    known = {i.id for i in issues}
    old = parsed.investigations if parsed is not None else {}
    run = InvestigationRun(investigations=[])
    for finding in answer.investigations if answer else []:
        if finding.issue_id not in known or finding.issue_id in {i.issue_id for i in run.investigations}:
            continue
        used = [cells[c] for c in finding.cells if c in cells]
        if not used:  # no citation: the cells whose output recorded this issue
            used = [c for c in cells.values() if finding.issue_id in parse_records(c.stdout)]
        records = [parse_records(c.stdout).get(finding.issue_id) for c in used]
        output = next((r for r in reversed(records) if r), None)
        failed = [c.error for c in used if not c.ok]
        code = "\n".join(c.code.rstrip("\n") + "\n" for c in used)
        run.investigations.append(
            CodeInvestigation(
                code=code,
                success=bool(used) and not failed,
                output=output or finding.model_dump(mode="json"),
                error=failed[0] if failed else (None if used else "the answer cites no code that ran"),
                execution_time_ms=round(sum(c.ms for c in used), 2),
                issue_id=finding.issue_id,
                verdict=finding.verdict,
                evidence=finding.evidence,
                # what the check that printed it tested, and why it decided so
                hypothesis=finding.hypothesis or _said(output, "hypothesis"),
                reason=finding.reason or _said(output, "reason"),
                affected=output.get("affected") if output and isinstance(output.get("affected"), int) else None,
            )
        )
        block = old.get(finding.issue_id)
        if block is not None:
            (run.reused if block.strip() in code and not failed else run.relearned).append(finding.issue_id)
    return run


def _said(record: Optional[dict], key: str) -> Optional[str]:
    value = (record or {}).get(key)
    return value if isinstance(value, str) and value else None
