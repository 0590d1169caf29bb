"""The agent backed by Claude (the Anthropic Messages API): the stages, and the tool loop of the investigations."""
