"""The notifier resource: where alerts go.  `base` retries and masks secrets; one file per backend."""

from cataloger_dagster.resources.notifier.base import Delivery, NoNotifier, NotifierResource
from cataloger_dagster.resources.notifier.email import SmtpNotifier
from cataloger_dagster.resources.notifier.slack import SlackWebhookNotifier
from cataloger_dagster.resources.notifier.webhook import JsonWebhookNotifier

__all__ = ["Delivery", "JsonWebhookNotifier", "NoNotifier", "NotifierResource", "SlackWebhookNotifier", "SmtpNotifier"]
