"""HeuristicAgent: no model; rules over names and statistics, issues as detected.

The default agent, and the fallback of every other one whenever a model fails
(so a run always has an answer).  Its logic is Dagster-free, in `core.understanding` and `core.issues.analysis`.
"""

from __future__ import annotations

from pydantic import Field

from cataloger_dagster.core.investigate.investigator import run_investigations
from cataloger_dagster.core.issues.analysis import heuristic_analysis
from cataloger_dagster.core.models import DatasetUnderstandingModel, TableProfile
from cataloger_dagster.core.reviews.memory import review_with_memory
from cataloger_dagster.core.understanding import heuristic_understanding
from cataloger_dagster.core.writeback.documented import Documented, with_documentation
from cataloger_dagster.resources.agent.base import AgentResource, AgentUsage


class HeuristicAgent(AgentResource):
    """Rule-based understanding from names and statistics; issues as detected."""

    # (A resource needs at least one field: Dagster 1.13 reads a field-less
    # resource through pydantic's deprecated `__fields__`.)
    examples: int = Field(default=5, description="Example values or rows kept as evidence per finding")

    @property
    def kind(self) -> str:
        return "heuristic"

    def understand(
        self, profile: TableProfile, documented: Documented | None = None
    ) -> tuple[DatasetUnderstandingModel, AgentUsage]:
        return with_documentation(heuristic_understanding(profile), documented), AgentUsage(agent=self.kind)

    def review_issues(self, profile, understanding, detected, *, previous=None, memory=None, documented=None):
        result = review_with_memory(
            lambda raised: heuristic_analysis(profile, raised, previous=previous), detected, profile, memory
        )
        return result, AgentUsage(agent=self.kind)

    def investigate(self, runtime, profile, understanding, issues, previous, *, reviews=None):
        # the rules investigate each issue as found: what people said changes which issues, not how
        return run_investigations(runtime, profile.table, issues, previous), AgentUsage(agent=self.kind)
