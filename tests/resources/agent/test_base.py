"""The agent interface (agent/base.py): `AgentUsage`, what a stage cost, and `AgentResource`, the
contract every agent implements and the Dagster resource the assets are given."""

from __future__ import annotations

import dagster as dg
import pytest

from cataloger_dagster.core.models import DatasetSummaryModel, DatasetUnderstandingModel, Fingerprint, TableProfile
from cataloger_dagster.resources.agent import HeuristicAgent
from cataloger_dagster.resources.agent.anthropic import AnthropicAgent
from cataloger_dagster.resources.agent.base import AgentResource, AgentUsage


def test_usage_starts_at_nothing_spent():
    usage = AgentUsage(agent="x")
    assert (usage.calls, usage.tokens, usage.prompt_version, usage.fallback_reason) == (0, 0, None, None)


def test_usage_tokens_count_every_kind_once():
    usage = AgentUsage(agent="anthropic", input_tokens=1, output_tokens=20, cache_read_tokens=300,
                       cache_creation_tokens=4000)
    # cached tokens are sent too: a budget or a report that left them out would undercount
    assert usage.tokens == 4321
    usage.cache_read_tokens += 700
    assert usage.tokens == 5021


def test_usage_round_trips_through_json():
    """Assets record usage in metadata and run files; it must come back as it was."""
    usage = AgentUsage(agent="anthropic", calls=3, input_tokens=5, prompt_version="abc123",
                       fallback_reason="issues: invalid IssuesAnswer")
    again = AgentUsage.model_validate_json(usage.model_dump_json())
    assert again == usage and again.tokens == usage.tokens
    assert "tokens" not in usage.model_dump()  # derived, never stored to drift from its parts


def test_an_agent_must_implement_the_whole_contract():
    class Half(AgentResource):
        examples: int = 1

        @property
        def kind(self) -> str:
            return "half"

        def understand(self, profile):
            raise NotImplementedError

    with pytest.raises(TypeError, match="abstract"):
        Half()
    assert {"kind", "understand", "review_issues", "investigate"} <= AgentResource.__abstractmethods__


class Canned(AgentResource):
    """The smallest complete agent: what the interface alone must make work as a resource."""

    description: str = "canned"

    @property
    def kind(self) -> str:
        return "canned"

    def understand(self, profile):
        summary = DatasetSummaryModel(name=profile.table, description=self.description,
                                      rowCount=profile.row_count, columnCount=0, observations=[])
        return (DatasetUnderstandingModel(summary=summary, columns=[], suggested_context=""),
                AgentUsage(agent=self.kind, calls=1, output_tokens=7))

    def review_issues(self, profile, understanding, detected, *, previous=None):
        raise NotImplementedError

    def investigate(self, runtime, profile, understanding, issues, previous):
        raise NotImplementedError


def test_any_complete_agent_is_a_dagster_resource_with_its_config():
    @dg.asset
    def understood(agent: AgentResource) -> dict:
        profile = TableProfile(database="shop", table="orders", row_count=3, column_count=0, columns=[],
                               sample_rows=[], fingerprint=Fingerprint(schema_hash="h", row_count=3, value="v"))
        understanding, usage = agent.understand(profile)
        return {"kind": agent.kind, "name": understanding.summary.name, "rows": understanding.summary.rowCount,
                "description": understanding.summary.description, "tokens": usage.tokens}

    result = dg.materialize([understood], resources={"agent": Canned(description="from config")})
    assert result.success
    assert result.output_for_node("understood") == {"kind": "canned", "name": "orders", "rows": 3,
                                                      "description": "from config", "tokens": 7}


def test_the_agents_are_resources_of_distinct_kinds():
    agents = [HeuristicAgent(), AnthropicAgent(api_key="k")]
    assert all(isinstance(a, AgentResource) and isinstance(a, dg.ConfigurableResource) for a in agents)
    assert [a.kind for a in agents] == ["heuristic", "anthropic"]


def test_usages_of_one_stage_add_up():
    review = AgentUsage(agent="anthropic", calls=1, input_tokens=10, output_tokens=3, prompt_version="p")
    followups = AgentUsage(agent="anthropic", calls=2, input_tokens=5, cache_read_tokens=4,
                           fallback_reason="followups: invalid FollowupsAnswer")
    both = review.plus(followups)
    assert (both.calls, both.tokens, both.prompt_version) == (3, 22, "p")
    assert both.fallback_reason == "followups: invalid FollowupsAnswer"
    assert review.plus(AgentUsage(agent="anthropic")) == review


def test_an_agent_without_its_own_followups_gives_the_evidences():
    from cataloger_dagster.core.fixes.sql import FixTarget
    from cataloger_dagster.core.models import AnalysisResultModel, IssueModel

    issue = IssueModel(id="orders_x", type="seasonal_drift", severity="low", description="d",
                       affectedColumns=["c"], suggestedAction="Look at c.", category="smart_fixes")
    profile = TableProfile(database="shop", table="orders", row_count=3, column_count=0, columns=[],
                           sample_rows=[], fingerprint=Fingerprint(schema_hash="h", row_count=3, value="v"))
    done, usage = Canned().smart_fix_followups(
        profile, AnalysisResultModel(issues=[issue], summary="s", completedAt="c"), FixTarget("orders"))
    assert [o.key for o in done.issues[0].followup.options] == ["by_hand", "keep"]
    assert usage.agent == "canned" and usage.calls == 0
