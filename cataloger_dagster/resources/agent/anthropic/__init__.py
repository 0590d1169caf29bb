"""The agent backed by Claude (the Anthropic Messages API): the stages, and the tool loop of the investigations."""

from cataloger_dagster.resources.agent.anthropic.agent import AnthropicAgent

__all__ = ["AnthropicAgent"]
