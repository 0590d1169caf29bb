"""A Slack-compatible incoming webhook (Slack, Mattermost, Rocket.Chat): `{"text", "blocks"}`."""

from __future__ import annotations

from pydantic import Field

from cataloger_dagster.core.alerts import AlertMessage
from cataloger_dagster.resources.notifier.base import NotifierResource
from cataloger_dagster.resources.notifier.webhook import post_json


class SlackWebhookNotifier(NotifierResource):
    url: str = Field(description="the incoming webhook's URL; give it as dg.EnvVar: it is a credential")

    @property
    def backend(self) -> str:
        return "slack"

    def _secrets(self) -> list[str]:
        return [self.url]

    def _deliver(self, message: AlertMessage) -> None:
        post_json(self.url, message.as_slack(), self.timeout_s)
