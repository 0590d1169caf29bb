"""A generic JSON webhook: POSTs the message as JSON (`AlertMessage.as_json`)."""

from __future__ import annotations

import json
import urllib.request

from pydantic import Field

from cataloger_dagster.core.alerts import AlertMessage
from cataloger_dagster.resources.notifier.base import NotifierResource


def json_body(payload: dict) -> bytes:
    return json.dumps(payload).encode("utf-8")


def post_json(url: str, payload: dict, timeout_s: float) -> None:
    if not url.lower().startswith(("http://", "https://")):
        raise ValueError("the webhook URL must be http:// or https://")
    request = urllib.request.Request(
        url,
        data=json_body(payload),
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": "cataloger-dagster"},
    )
    # urlopen raises HTTPError on a status of 400 or more; the error names the status, not the URL
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        response.read()


class JsonWebhookNotifier(NotifierResource):
    url: str = Field(description="where to POST; give it as dg.EnvVar: a webhook URL is a credential")

    @property
    def backend(self) -> str:
        return "webhook"

    def _secrets(self) -> list[str]:
        return [self.url]

    def _payload(self, message: AlertMessage) -> dict:
        return message.as_json()

    def _compose(self, message: AlertMessage) -> bytes:
        return json_body(self._payload(message))

    def _deliver(self, message: AlertMessage) -> None:
        post_json(self.url, self._payload(message), self.timeout_s)
