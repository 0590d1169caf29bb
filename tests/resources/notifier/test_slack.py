"""The Slack-compatible incoming webhook against a local HTTP receiver."""

from cataloger_dagster.core.alerts import AlertMessage
from cataloger_dagster.resources.notifier import SlackWebhookNotifier
from tests.resources.notifier.test_webhook import ALERT
from tests.support.receivers import http_receiver


def test_posts_text_and_blocks():
    with http_receiver(fail_first=1) as receiver:
        delivery = SlackWebhookNotifier(url=receiver.url, backoff_s=0).send(AlertMessage(run_id="r", alerts=[ALERT]))
    assert delivery.ok and delivery.attempts == 2
    (payload,) = receiver.received
    assert payload["text"] == "cataloger: 1 alert on orders"
    assert payload["blocks"][0]["type"] == "header"
    section = payload["blocks"][1]["text"]
    assert section["type"] == "mrkdwn" and "<s3://b/p#issue-1|page>" in section["text"]
    assert "owner sales" in section["text"]
