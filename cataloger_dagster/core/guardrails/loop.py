"""The loop a failing guardrail closes: its failure asks for a catalog run, and that run's
investigation of the finding it guards decides what becomes of it.

- confirmed: the guardrail stands as the run builds it, and the suite records the failure and
  the confirmation together (the finding's history shows both);
- refuted: what it measured was not a problem, so its band is relearned from that level
  (`tolerance.relearned`) and the suite says so.

A failure with no finding behind it (a moved profile fact) needs no verdict: the run's profile
joins the history its band is drawn from."""

from __future__ import annotations

from typing import Mapping, Sequence

from cataloger_dagster.core.guardrails import tolerance
from cataloger_dagster.core.guardrails.model import FollowUp, GuardrailCheck, GuardrailResult, GuardrailSuite


def latest_failures(checks: Sequence[GuardrailCheck], suite: GuardrailSuite) -> dict[str, tuple[str, GuardrailResult]]:
    """{guardrail name: (when, its latest failure)} of `suite` over the checks that ran it; a
    guardrail that could not run has no measure and is left out."""
    failed: dict[str, tuple[str, GuardrailResult]] = {}
    for check in checks:
        if check.suite_version != suite.version or check.built_at != suite.built_at:
            continue
        for result in check.failing:
            if result.error is None and result.measured is not None:
                failed[result.name] = (check.checked_at, result)
    return failed


def follow_up(
    previous: GuardrailSuite,
    built: GuardrailSuite,
    checks: Sequence[GuardrailCheck],
    verdicts: Mapping[str, str],
) -> GuardrailSuite:
    """`built` (this run's suite) with the failures of `previous` since it was built followed up
    by this run's verdicts (finding id -> verdict)."""
    guardrails = {g.name: g for g in built.guardrails}
    followed: list[FollowUp] = []
    for name, (when, result) in sorted(latest_failures(checks, previous).items()):
        before = previous.named(name)
        verdict = verdicts.get(before.guards) if before and before.guards else None
        if before is None or verdict not in ("confirmed", "refuted"):
            continue
        measured = float(result.measured or 0.0)
        seen = dict(
            guardrail=name, guards=before.guards, failed_at=when, measured=measured, low=result.low, high=result.high
        )
        if verdict == "confirmed":
            followed.append(FollowUp(outcome="confirmed", **seen))  # type: ignore[arg-type]
            continue
        low, high = tolerance.relearned(before.measure, measured, before.low, before.high)
        guardrails[name] = before.model_copy(
            update={
                "low": low,
                "high": high,
                "pinned_by": "finding",
                "why": f"{before.why} Relearned: it failed at {measured:g} on {when} and the investigation "
                "of its finding refuted that as a problem, so that level is now its own.",
            }
        )
        followed.append(FollowUp(outcome="relearned", new_low=low, new_high=high, **seen))  # type: ignore[arg-type]
    return built.model_copy(update={"guardrails": list(guardrails.values()), "followed_up": followed})


def started_failing(check: GuardrailCheck, earlier: Sequence[GuardrailCheck]) -> list[GuardrailResult]:
    """The guardrails failing in `check` that held (or had not run) in the latest earlier check
    of the same suite: a failure asks for one catalog run and one alert, not one per check while
    it lasts."""
    same = [c for c in earlier if c.suite_version == check.suite_version and c.built_at == check.built_at]
    before = {r.name for r in same[-1].failing} if same else set()
    return [r for r in check.failing if r.name not in before]
