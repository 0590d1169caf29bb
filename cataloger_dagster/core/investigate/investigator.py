"""The heuristic agent's investigation loop, driving one sandbox session.

Cold (no earlier script): set up, then for each issue look at the data and
run its check, one cell at a time, as an agent exploring from scratch does.
Warm (an earlier script of this table): run the earlier setup, checks and the
investigations of the issues still current as ONE cell; whatever that does not
answer (new issues, or old code that now fails) is investigated afresh in one
more cell.  Transfer (the script of a similar table): reuse its setup and
checks, then investigate every issue in one cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from cataloger_dagster.core.models import CodeInvestigation, IssueModel
from cataloger_dagster.core.investigate.checks import CHECKS
from cataloger_dagster.core.investigate.code import (
    check_block,
    check_type,
    explore_block,
    helpers_block,
    investigate_block,
    parse_records,
    retarget_setup,
    reusable_blocks,
    setup_block,
)

if TYPE_CHECKING:  # the runtime is passed in; core never imports resources at run time
    from cataloger_dagster.resources.sandbox import SandboxRuntime


@dataclass
class PreviousScript:
    """The `previous_script` context a run starts from, plus the table it was written for."""

    timestamp: str
    code: str
    table: str


@dataclass
class InvestigationRun:
    investigations: list[CodeInvestigation]
    reused: list[str] = field(default_factory=list)  # answered by the earlier script
    relearned: list[str] = field(default_factory=list)  # the earlier script failed on them
    refreshed: list[str] = field(default_factory=list)  # rerun with the detector's current arguments
    reuse_error: Optional[str] = None  # the earlier script could not run at all


@dataclass
class _Answer:
    outcome: dict
    code: str
    cell_ok: bool
    cell_error: Optional[str]
    ms: float


def run_investigations(
    runtime: SandboxRuntime,
    table: str,
    issues: list[IssueModel],
    previous: Optional[PreviousScript] = None,
    *,
    explore: bool = True,
) -> InvestigationRun:
    answers: dict[str, _Answer] = {}
    run = InvestigationRun(investigations=[])
    defined: set[str] = set()
    warm = False

    def execute(code: str, ids: list[str], code_of: dict[str, str]) -> bool:
        result = runtime.execute(code)
        records = parse_records(result.stdout)
        error = (
            None if result.ok else (f"{result.error.type}: {result.error.message}" if result.error else "cell failed")
        )
        share = result.duration_ms / max(1, len(ids))
        for issue_id in ids:
            if issue_id in records:
                answers[issue_id] = _Answer(records[issue_id], code_of[issue_id], result.ok, error, share)
            elif result.timed_out or not result.ok:
                answers[issue_id] = _Answer({}, code_of[issue_id], False, error, share)
        return result.ok

    if previous is not None and issues:
        parsed = reusable_blocks(previous.code, previous.table, issues)
        # a check of ours that has since improved is rerun in today's version
        stale = {k for k, block in parsed.checks.items() if k in CHECKS and block != check_block(k)}
        parsed.checks = {k: b for k, b in parsed.checks.items() if k not in stale}
        by_id = {i.id: i for i in issues}
        parsed.investigations = {
            k: b for k, b in parsed.investigations.items() if k not in by_id or check_type(by_id[k]) not in stale
        }
        same_table = previous.table == table
        setup = parsed.setup if same_table or not parsed.setup else retarget_setup(parsed.setup, table)
        if setup:
            kept = [i for i in issues if same_table and i.id in parsed.investigations]
            blocks = [setup, helpers_block(), *parsed.checks.values(), *(parsed.investigations[i.id] for i in kept)]
            code_of = {i.id: parsed.checks.get(check_type(i), "") + parsed.investigations[i.id] for i in kept}
            if execute("\n".join(blocks), [i.id for i in kept], code_of):
                warm = True
                defined = set(parsed.checks)
                for issue in kept:
                    answer = answers.get(issue.id)
                    if answer is None or not answer.outcome.get("verdict"):
                        run.relearned.append(issue.id)  # the earlier code fails on today's table
                        answers.pop(issue.id, None)
                    elif parsed.investigations[issue.id] != investigate_block(issue, issues):
                        run.refreshed.append(issue.id)  # it ran, but the detector sees it differently now
                        answers.pop(issue.id, None)
                    else:
                        run.reused.append(issue.id)
            else:
                answers.clear()
                run.reuse_error = "the earlier script's setup failed here; explored afresh"
        elif parsed.setup:
            run.reuse_error = (
                f"the setup of {previous.table}'s script names no TABLE to point at this table; explored afresh"
            )
        else:
            run.reuse_error = "the earlier script has no setup block; explored afresh"

    if not warm:
        runtime.execute(setup_block(table))
    todo = [i for i in issues if i.id not in answers]
    if warm:
        # one batch: fresh checks for what the earlier script lacked or got wrong
        kinds = sorted({check_type(i) for i in todo if check_type(i) not in defined or i.id in run.relearned})
        if todo:
            code_of = {i.id: check_block(check_type(i)) + investigate_block(i, issues) for i in todo}
            blocks = [check_block(k) for k in kinds] + [investigate_block(i, issues) for i in todo]
            execute("\n".join(blocks), [i.id for i in todo], code_of)
    else:
        for issue in todo:
            kind = check_type(issue)
            if explore:
                runtime.execute(explore_block(issue))
            code = (check_block(kind) if kind not in defined else "") + investigate_block(issue, issues)
            if execute(code, [issue.id], {issue.id: check_block(kind) + investigate_block(issue, issues)}):
                defined.add(kind)

    for issue in issues:
        answer = answers.get(issue.id)
        run.investigations.append(_investigation(issue, answer))
    return run


def _investigation(issue: IssueModel, answer: Optional[_Answer]) -> CodeInvestigation:
    if answer is None:
        return CodeInvestigation(
            code="", success=False, output=None, issue_id=issue.id, error="no result: the investigation did not run"
        )
    outcome = answer.outcome
    error = outcome.get("error") or (None if answer.cell_ok else answer.cell_error)
    verdict = outcome.get("verdict")
    return CodeInvestigation(
        code=answer.code,
        success=error is None and answer.cell_ok,
        output=outcome or None,
        error=error,
        execution_time_ms=round(answer.ms, 2),
        issue_id=issue.id,
        verdict=verdict if verdict in ("confirmed", "refuted", "inconclusive") else None,
        evidence=outcome.get("evidence") or {},
        hypothesis=_text(outcome.get("hypothesis")),
        reason=_text(outcome.get("reason")),
        affected=outcome.get("affected") if isinstance(outcome.get("affected"), int) else None,
    )


def _text(value) -> Optional[str]:
    return value if isinstance(value, str) and value else None
