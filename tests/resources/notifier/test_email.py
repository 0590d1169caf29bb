"""E-mail through a local SMTP server (aiosmtpd), with and without a login."""

import pytest

from cataloger_dagster.core.alerts import AlertMessage
from cataloger_dagster.resources.notifier import SmtpNotifier
from tests.resources.notifier.test_webhook import ALERT
from tests.support.receivers import smtp_receiver

# the local server asks for a login without TLS, which aiosmtpd warns about (loopback only here)
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning")


def test_sends_the_text_to_every_recipient():
    with smtp_receiver() as smtp:
        delivery = SmtpNotifier(host=smtp.host, port=smtp.port, sender="cat@example.org",
                                recipients=["a@example.org", "b@example.org"]).send(
            AlertMessage(run_id="r", alerts=[ALERT]))
    assert delivery.ok
    (mail,) = smtp.messages
    assert mail["From"] == "cat@example.org" and mail["To"] == "a@example.org, b@example.org"
    body = mail.get_payload(decode=True).decode()
    assert "Owner: sales" in body and "evidence: s3://b/i.json" in body


def test_logs_in_when_given_a_user():
    with smtp_receiver(login=("bot", "pw-123")) as smtp:
        delivery = SmtpNotifier(host=smtp.host, port=smtp.port, sender="c@x.org", recipients=["a@x.org"],
                                username="bot", password="pw-123").send(AlertMessage(run_id="r", alerts=[ALERT]))
    assert delivery.ok and smtp.logins == [("bot", "pw-123")] and len(smtp.messages) == 1


def test_no_server_is_a_recorded_failure_without_the_password():
    delivery = SmtpNotifier(host="127.0.0.1", port=1, sender="c@x.org", recipients=["a@x.org"], username="bot",
                            password="pw-123", attempts=2, backoff_s=0, timeout_s=2).send(AlertMessage(run_id="r"))
    assert not delivery.ok and delivery.attempts == 2 and "pw-123" not in delivery.error
