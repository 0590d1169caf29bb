"""The agent resource: what understands a table, names its issues and investigates them.

`base` holds the resource's interface and the heuristic agent (no model; also
the Anthropic agent's fallback); `anthropic/` the agent backed by Claude.
"""

from cataloger_dagster.resources.agent.base import (
    AgentResource,
    AgentUsage,
    HeuristicAgent,
    heuristic_analysis,
    heuristic_understanding,
)

__all__ = ["AgentResource", "AgentUsage", "HeuristicAgent", "heuristic_analysis", "heuristic_understanding"]
