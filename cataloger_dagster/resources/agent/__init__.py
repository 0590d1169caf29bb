"""The agent resource: what understands a table, names its issues and investigates them.

`base` holds the interface, `heuristic` the agent with no model (also every other
agent's fallback), `anthropic/` the agent backed by Claude.
"""

from cataloger_dagster.core.issues.analysis import heuristic_analysis
from cataloger_dagster.core.understanding import heuristic_understanding
from cataloger_dagster.resources.agent.base import AgentResource, AgentUsage
from cataloger_dagster.resources.agent.heuristic import HeuristicAgent

__all__ = ["AgentResource", "AgentUsage", "HeuristicAgent", "heuristic_analysis", "heuristic_understanding"]
