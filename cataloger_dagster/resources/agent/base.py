"""AgentResource: who understands a table, reviews its issues and investigates them.

The interface every agent implements: `heuristic.HeuristicAgent` (offline,
deterministic, the default and every other agent's fallback) and
`anthropic.AnthropicAgent`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Optional

import dagster as dg
from pydantic import BaseModel, Field

from cataloger_dagster.core.fixes.followups import with_followups
from cataloger_dagster.core.fixes.sql import FixTarget
from cataloger_dagster.core.models import AnalysisResultModel, DatasetUnderstandingModel, IssueModel, TableProfile
from cataloger_dagster.core.investigate.investigator import InvestigationRun, PreviousScript
from cataloger_dagster.core.reviews.memory import DEFAULT_TOLERANCE, ReviewMemory
from cataloger_dagster.core.reviews.precision import DEFAULT_DISMISSALS
from cataloger_dagster.core.writeback.documented import Documented
from cataloger_dagster.resources.sandbox import SandboxRuntime


class AgentUsage(BaseModel):
    """What one stage cost, and whether it fell back to the heuristics."""

    agent: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    prompt_version: Optional[str] = None
    fallback_reason: Optional[str] = None

    @property
    def tokens(self) -> int:
        """Every token the stage sent or received, cached ones included."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_creation_tokens

    def plus(self, other: "AgentUsage") -> "AgentUsage":
        """Two calls of one stage as one usage (the issues review and its follow-ups)."""
        counts = ("calls", "input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
        reasons = "; ".join(r for r in (self.fallback_reason, other.fallback_reason) if r)
        return self.model_copy(
            update={
                **{k: getattr(self, k) + getattr(other, k) for k in counts},
                "prompt_version": self.prompt_version or other.prompt_version,
                "fallback_reason": reasons or None,
            }
        )


class AgentResource(dg.ConfigurableResource, ABC):
    # how every agent weighs people's reviews (`core.reviews.memory`)
    review_tolerance: float = Field(
        default=DEFAULT_TOLERANCE,
        ge=0.0,
        description="a dismissed issue comes back once its affected rows grow beyond 1 + this share",
    )
    review_precision_dismissals: int = Field(
        default=DEFAULT_DISMISSALS,
        ge=0,
        description="dismissals on similar columns after which a detector is raised less often (0: never)",
    )

    def memory(self, **facts) -> ReviewMemory:
        """The review memory of one table with this agent's tolerance and precision threshold."""
        return ReviewMemory(
            tolerance=self.review_tolerance, precision_threshold=self.review_precision_dismissals, **facts
        )

    @property
    @abstractmethod
    def kind(self) -> str: ...

    @abstractmethod
    def understand(
        self, profile: TableProfile, documented: Documented | None = None
    ) -> tuple[DatasetUnderstandingModel, AgentUsage]:
        """The table's understanding; ``documented``: what its owners already wrote of it
        (database comments, dbt), context that a description guessed from the data never replaces."""

    @abstractmethod
    def review_issues(
        self,
        profile: TableProfile,
        understanding: DatasetUnderstandingModel,
        detected: list[IssueModel],
        *,
        previous: AnalysisResultModel | None = None,
        memory: ReviewMemory | None = None,
        documented: Documented | None = None,
    ) -> tuple[AnalysisResultModel, AgentUsage]:
        """The issues to raise: `detected` reviewed, with what people said applied (`memory`,
        `core.reviews.memory.review_with_memory`); `documented`: the table's own documentation,
        context for a model."""

    def smart_fix_followups(
        self,
        profile: TableProfile,
        analysis: AnalysisResultModel,
        target: FixTarget | None,
    ) -> tuple[AnalysisResultModel, AgentUsage]:
        """Every smart-fix issue with its follow-up (the fourth stage): a question, 2-4
        options and a fix script per option for `target` (None: by hand).  Here, drawn from the
        evidence (`core.fixes`); an agent with a model words its own and falls back to these."""
        return with_followups(analysis, profile, target), AgentUsage(agent=self.kind)

    @abstractmethod
    def investigate(
        self,
        runtime: SandboxRuntime,
        profile: TableProfile,
        understanding: DatasetUnderstandingModel,
        issues: list[IssueModel],
        previous: PreviousScript | None,
        *,
        reviews: list[dict] | None = None,
    ) -> tuple[InvestigationRun, AgentUsage]:
        """Prove or refute each issue with code run in `runtime`, starting from
        `previous` (the script the feedback loop picked) when given.  `reviews` (`ReviewMemory.for_prompt`)
        is what people said of the table's findings: context for a model, never code."""
