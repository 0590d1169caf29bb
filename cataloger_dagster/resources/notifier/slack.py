"""A Slack-compatible incoming webhook (Slack, Mattermost, Rocket.Chat): `{"text", "blocks"}`."""

from __future__ import annotations

from pydantic import Field

from cataloger_dagster.core.alerts import AlertMessage
from cataloger_dagster.resources.notifier.webhook import JsonWebhookNotifier


class SlackWebhookNotifier(JsonWebhookNotifier):
    """The JSON webhook, posting Slack's message shape."""

    url: str = Field(description="the incoming webhook's URL; give it as dg.EnvVar: it is a credential")

    @property
    def backend(self) -> str:
        return "slack"

    def _payload(self, message: AlertMessage) -> dict:
        return message.as_slack()
