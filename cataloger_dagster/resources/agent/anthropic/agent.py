"""AnthropicAgent: Claude understands, reviews issues and investigates (one model call per stage).

Every stage answers through the API's structured outputs (a JSON schema made
from a Pydantic model by the SDK's `transform_schema`), validated with
Pydantic.  An answer that fails validation is asked for once more; a second
failure, or an API error left after the SDK's own retries, hands the stage to
the heuristic agent with `fallback_reason` set.  The table context (profile
and sample rows) is one system block shared by the three stages and marked for
prompt caching.  The prompts are in `prompts`, the investigation tool loop in `tool_loop`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Optional, TypeVar

from pydantic import BaseModel, Field, ValidationError

from cataloger_dagster.core.fixes.followups import from_answer, offer, smart_issues, with_followups
from cataloger_dagster.core.investigate.codegen import literal
from cataloger_dagster.core.redaction import Redactor
from cataloger_dagster.core.sensitive.masking import DEFAULT_POLICY, Policy, ValuePolicy
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    ColumnSummaryModel,
    DatasetSummaryModel,
    DatasetUnderstandingModel,
    IssueModel,
    TableProfile,
)
from cataloger_dagster.resources.agent.anthropic.prompts import (  # noqa: F401  (prompt_version, render: re-exported)
    StageFailed,
    prompt_version,
    render,
    to_json,
    user_message,
)
from cataloger_dagster.resources.agent.anthropic.tool_loop import investigate_with_tools
from cataloger_dagster.core.issues.analysis import heuristic_analysis
from cataloger_dagster.core.reviews.memory import review_with_memory
from cataloger_dagster.core.understanding import heuristic_understanding, structure_observations
from cataloger_dagster.core.writeback.documented import Documented, with_documentation
from cataloger_dagster.resources.agent.base import AgentResource, AgentUsage
from cataloger_dagster.resources.extras import require
from cataloger_dagster.resources.value_policy import value_policy

M = TypeVar("M", bound=BaseModel)


# ---------------------------------------------------------------------------
# what the model is asked to return: core.models' field names, with strict types
# (the API's JSON schemas take no free-form `Any`; details stay the detectors')
# ---------------------------------------------------------------------------

Scalar = Optional[str | int | float | bool]


class _Column(BaseModel):
    name: str
    dataType: Literal["string", "numeric", "date", "categorical", "boolean"]
    description: str
    sampleValues: list[Scalar]


class UnderstandingAnswer(BaseModel):
    summary: DatasetSummaryModel
    columns: list[_Column]
    suggested_context: str


class _Issue(BaseModel):
    id: str
    type: str
    severity: Literal["low", "medium", "high"]
    description: str
    affectedColumns: list[str]
    suggestedAction: str
    category: Literal["quick_fixes", "smart_fixes"]
    affectedRows: Optional[int] = None
    temporalPattern: Optional[str] = None


class IssuesAnswer(BaseModel):
    issues: list[_Issue]
    summary: str
    completedAt: str


class _Option(BaseModel):
    action: str  # the key of one of the choices offered for the issue
    label: str


class _Followup(BaseModel):
    issue_id: str
    prompt: str
    examples: Optional[str] = None
    options: list[_Option]


class FollowupsAnswer(BaseModel):
    followups: list[_Followup]


def compact_profile(profile: TableProfile) -> dict:
    """What the model needs of the profile: no histograms, few top values."""
    keep = (
        "name",
        "dtype",
        "kind",
        "count",
        "nulls",
        "null_fraction",
        "distinct",
        "min",
        "max",
        "mean",
        "semantic_type",
        "pattern_counts",
    )
    columns = []
    for col in profile.columns:
        item = {
            k: v
            for k, v in col.model_dump(include=set(keep)).items()
            if v is not None and not (isinstance(v, (dict, list)) and not v)
        }
        if col.top_values:
            item["top_values"] = [[v.value, v.count] for v in col.top_values[:5]]
        columns.append(item)
    return {
        "table": profile.table,
        "row_count": profile.row_count,
        "column_count": profile.column_count,
        "fingerprint": profile.fingerprint.value,
        "columns": columns,
        "sample_rows": profile.sample_rows,
    }


class AnthropicAgent(AgentResource):
    """Claude through the anthropic SDK; the heuristic agent whenever it fails."""

    api_key: str = Field(description="Anthropic API key: pass dg.EnvVar('ANTHROPIC_API_KEY'), never the value")
    base_url: Optional[str] = Field(default=None, description="None: the SDK reads ANTHROPIC_BASE_URL itself")
    # cost-aware routing: a cheap model reads, a stronger one investigates
    understanding_model: str = "claude-haiku-5-5"
    issues_model: str = "claude-sonnet-5-5"
    investigation_model: str = "claude-opus-5-5"
    max_tokens: int = 8192
    max_turns: int = 12
    token_budget: int = 400_000
    timeout_s: float = 120.0
    max_retries: int = 2
    # The SDK 2.x removed sampling parameters and its API version rejects them, so
    # temperature is sent (as an extra body field) only when set, for endpoints that accept it.
    temperature: Optional[float] = None
    # a cell's output shown to the model; a record now carries its hypothesis and reason, so a
    # batch of replayed investigations prints about twice what it did
    tool_output_chars: int = 8000
    # what a sensitive column's value becomes in a request (the same policy as the store's)
    sensitive_values: Policy = DEFAULT_POLICY
    sensitive_key: Optional[str] = Field(
        default=None, description="the `hash` policy's key: pass dg.EnvVar(...), never the value"
    )

    @property
    def kind(self) -> str:
        return "anthropic"

    @property
    def masking(self) -> ValuePolicy:
        return value_policy(self.sensitive_values, self.sensitive_key)

    @property
    def prompt_version(self) -> str:
        return prompt_version()

    @property
    def review_mark(self) -> str:
        return f"(Reviewed by Claude, prompts {self.prompt_version}.)"

    # ------------------------------------------------------------------ plumbing
    def client(self):
        require("anthropic", "the anthropic agent")
        import anthropic

        return anthropic.Anthropic(
            api_key=self.api_key, base_url=self.base_url or None, max_retries=self.max_retries, timeout=self.timeout_s
        )

    def usage(self) -> AgentUsage:
        return AgentUsage(agent=self.kind, prompt_version=self.prompt_version)

    def system(self, profile: TableProfile, stage: str) -> list[dict]:
        # names go into prompts as literals: a table name is data, never an instruction or code
        context = render(
            "context.system", database=literal(profile.database), table_context=to_json(compact_profile(profile))
        )
        return [
            # identical for every stage of the table, so it is cached once and read after
            {"type": "text", "text": context, "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": render(f"{stage}.system", table=literal(profile.table))},
        ]

    def redact(self, text: str) -> str:
        return Redactor(secrets=[self.api_key]).text(text)

    def call(
        self,
        client,
        *,
        model: str,
        system: list[dict],
        messages: list[dict],
        usage: AgentUsage,
        answer: type[BaseModel],
        **extra: Any,
    ):
        """One request with structured output; returns (message, validated answer or None)."""
        import anthropic

        body = {"temperature": self.temperature} if self.temperature is not None else None
        try:
            message = client.messages.create(
                model=model,
                max_tokens=self.max_tokens,
                # every request passes here: no personal value that proves its class reaches the
                # model in clear, whatever part of the profile, an issue or a tool result held it.
                # The model's own turns go back as it wrote them: it saw only masked values, and
                # the code it wrote is what ran in the sandbox
                system=self.masking.value(system),
                messages=[m if m.get("role") == "assistant" else self.masking.value(m) for m in messages],
                output_config={"format": {"type": "json_schema", "schema": anthropic.transform_schema(answer)}},
                extra_body=body,
                **extra,
            )
        except anthropic.APIError as exc:
            raise StageFailed(self.redact(f"{type(exc).__name__}: {exc}")) from None
        usage.calls += 1
        u = message.usage
        usage.input_tokens += u.input_tokens or 0
        usage.output_tokens += u.output_tokens or 0
        usage.cache_read_tokens += u.cache_read_input_tokens or 0
        usage.cache_creation_tokens += u.cache_creation_input_tokens or 0
        if message.stop_reason == "tool_use":
            return message, None
        text = "".join(b.text for b in message.content if b.type == "text")
        return message, answer.model_validate_json(text)

    def ask(self, *, model: str, system: list[dict], messages: list[dict], usage: AgentUsage, answer: type[M]) -> M:
        """A structured answer, asked for a second time when the first fails validation."""
        client = self.client()
        for attempt in (1, 2):
            try:
                _, parsed = self.call(client, model=model, system=system, messages=messages, usage=usage, answer=answer)
                if parsed is not None:
                    return parsed
                problem = "the model called a tool where an answer was due"
            except ValidationError as exc:
                problem = f"invalid {answer.__name__}: {exc.error_count()} validation errors"
            if attempt == 2:
                raise StageFailed(problem)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ stages
    def understand(
        self, profile: TableProfile, documented: Documented | None = None
    ) -> tuple[DatasetUnderstandingModel, AgentUsage]:
        usage = self.usage()
        # the owners' documentation goes to the model as JSON: data, never instructions
        text = render(
            "understanding.user",
            table=literal(profile.table),
            documented=to_json(documented.for_prompt()) if documented else "",
        )
        try:
            got = self.ask(
                model=self.understanding_model,
                system=self.system(profile, "understanding"),
                messages=[user_message(text)],
                usage=usage,
                answer=UnderstandingAnswer,
            )
            return _understanding(profile, got), usage
        except Exception as exc:  # any failure of the model's stage: the heuristics answer
            usage.fallback_reason = f"understanding: {_reason(exc)}"
            return with_documentation(heuristic_understanding(profile), documented), usage

    def review_issues(self, profile, understanding, detected, *, previous=None, memory=None, documented=None):
        usage = self.usage()
        result = review_with_memory(
            lambda raised: self._review(profile, understanding, raised, _Known(previous, memory, documented), usage),
            detected,
            profile,
            memory,
        )
        return result, usage

    def _review(self, profile, understanding, detected, known: "_Known", usage) -> AnalysisResultModel:
        previous, memory, documented = known.previous, known.memory, known.documented
        if previous is not None and _unchanged(previous, detected, self.review_mark, self.masking):
            # the detectors see exactly what this prompt version reviewed last time: nothing to ask
            return previous.model_copy(update={"issues": _refreshed(previous, detected)})
        # people's reviews are data for the model (JSON), beside what it reviewed last time
        text = render(
            "issues.user",
            table=literal(profile.table),
            understanding=to_json(understanding.model_dump()),
            detected=to_json([i.model_dump(exclude={"review", "precision"}) for i in detected]),
            previous=to_json([i.id for i in previous.issues]) if previous else "",
            reviews=to_json(memory.for_prompt()) if memory and memory.reviews else "",
            documented=to_json(documented.for_prompt()) if documented else "",
        )
        try:
            got = self.ask(
                model=self.issues_model,
                system=self.system(profile, "issues"),
                messages=[user_message(text)],
                usage=usage,
                answer=IssuesAnswer,
            )
            result = _analysis(profile, got, detected)
            return result.model_copy(update={"summary": f"{result.summary} {self.review_mark}"})
        except Exception as exc:  # any failure of the model's stage: the heuristics answer
            usage.fallback_reason = f"issues: {_reason(exc)}"
            return heuristic_analysis(profile, detected, previous=previous)

    def smart_fix_followups(self, profile, analysis, target):
        """Claude words each smart-fix question and picks 2-4 of the choices drawn from the
        evidence; the scripts behind them stay the ones `core.fixes` wrote.  A follow-up this
        prompt version already wrote for the issue is kept (rebuilt on today's scripts), so an
        unchanged table costs no call; any failure leaves the heuristic follow-ups."""
        usage = self.usage()
        source = f"anthropic:{self.prompt_version}"
        offers = {i.id: offer(i, profile, target) for i in smart_issues(analysis)}
        made: dict = {}
        for issue in smart_issues(analysis):
            kept = issue.followup
            if kept is not None and kept.source == source:
                again = from_answer(
                    offers[issue.id],
                    prompt=kept.prompt,
                    examples=kept.examples,
                    options=[(o.key, o.label) for o in kept.options],
                    source=source,
                )
                if again is not None:
                    made[issue.id] = again
        todo = [i for i in smart_issues(analysis) if i.id not in made]
        if todo:
            asked = [
                {
                    "issue_id": i.id,
                    "type": i.type,
                    "description": i.description,
                    "affectedColumns": i.affectedColumns,
                    "affectedRows": i.affectedRows,
                    "evidence_question": offers[i.id].prompt,
                    "examples": offers[i.id].examples,
                    "choices": [{"action": c.key, "does": c.action.description} for c in offers[i.id].choices],
                }
                for i in todo
            ]
            text = render("followups.user", table=literal(profile.table), issues=to_json(asked))
            try:
                got = self.ask(
                    model=self.issues_model,
                    system=self.system(profile, "followups"),
                    messages=[user_message(text)],
                    usage=usage,
                    answer=FollowupsAnswer,
                )
                wanted = {i.id for i in todo}
                for answer in got.followups:
                    if answer.issue_id not in wanted or answer.issue_id in made:
                        continue
                    written = from_answer(
                        offers[answer.issue_id],
                        prompt=answer.prompt,
                        examples=answer.examples,
                        options=[(o.action, o.label) for o in answer.options],
                        source=source,
                    )
                    if written is not None:
                        made[answer.issue_id] = written
            except Exception as exc:  # any failure of the model's stage: the evidence's follow-ups stand
                usage.fallback_reason = f"followups: {_reason(exc)}"
        return with_followups(analysis, profile, target, made), usage

    def investigate(self, runtime, profile, understanding, issues, previous, *, reviews=None):
        return investigate_with_tools(self, runtime, profile, understanding, issues, previous, reviews=reviews)


def _reason(exc: Exception) -> str:
    return str(exc) if isinstance(exc, StageFailed) else f"{type(exc).__name__}: {exc}"


def _understanding(profile: TableProfile, got: UnderstandingAnswer) -> DatasetUnderstandingModel:
    by_name = {c.name: c for c in got.columns}
    fallback = {c.name: c for c in heuristic_understanding(profile).columns}
    # one column per real column, in the table's order: a name the model got wrong is not shown
    columns = [
        ColumnSummaryModel.model_validate(by_name[c.name].model_dump()) if c.name in by_name else fallback[c.name]
        for c in profile.columns
    ]
    # the data's shape (families, NULLs another column explains) is a fact the profile found:
    # said once, whatever the model wrote
    shape = [s for s in structure_observations(profile) if s not in got.summary.observations]
    summary = got.summary.model_copy(
        update={
            "name": profile.table,
            "rowCount": profile.row_count,
            "columnCount": profile.column_count,
            "observations": [*got.summary.observations, *shape],
        }
    )
    return DatasetUnderstandingModel(summary=summary, columns=columns, suggested_context=got.suggested_context)


_FINDING = ("id", "type", "affectedColumns", "affectedRows", "details")
_VOLATILE = ("now",)  # when the detector looked, not what it found


def _unchanged(previous: AnalysisResultModel, detected: list[IssueModel], mark: str, values: ValuePolicy) -> bool:
    if not previous.summary.endswith(mark):
        return False

    def finding(issue: IssueModel) -> dict:
        found = issue.model_dump(include=set(_FINDING))
        found["details"] = {k: v for k, v in found["details"].items() if k not in _VOLATILE}
        # as the store keeps it: a stored finding's personal values are masked, a fresh one's not yet
        return json.loads(to_json(values.object(found)))

    before = {i.id: finding(i) for i in previous.issues if i.source == "detector"}
    return before == {i.id: finding(i) for i in detected}


def _refreshed(previous: AnalysisResultModel, detected: list[IssueModel]) -> list[IssueModel]:
    ids = {i.id for i in detected}
    return [i for i in previous.issues if i.source != "detector" or i.id in ids]


def _analysis(profile: TableProfile, got: IssuesAnswer, detected: list[IssueModel]) -> AnalysisResultModel:
    """The detectors' issues always stay (with their details); the model explains and may add."""
    columns = {c.name for c in profile.columns}
    reviewed = {i.id: i for i in got.issues}
    issues = []
    for found in detected:
        review = reviewed.pop(found.id, None)
        if review is None:
            issues.append(found)
            continue
        issues.append(
            found.model_copy(
                update={
                    "description": review.description,
                    "suggestedAction": review.suggestedAction,
                    "severity": review.severity,
                    "category": review.category,
                    "temporalPattern": review.temporalPattern or found.temporalPattern,
                }
            )
        )
    for added in reviewed.values():
        if added.affectedColumns and set(added.affectedColumns) <= columns:
            issues.append(IssueModel(**added.model_dump(), source="agent:anthropic"))
    return AnalysisResultModel(issues=issues, summary=got.summary, completedAt=got.completedAt)


@dataclass(frozen=True)
class _Known:
    """What a review of the issues starts from besides the detectors: the previous review, the
    people's reviews and the owners' documentation."""

    previous: Optional[AnalysisResultModel] = None
    memory: Any = None
    documented: Optional[Documented] = None
