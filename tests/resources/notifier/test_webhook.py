"""The JSON webhook against a local HTTP receiver."""

from cataloger_dagster.core.alerts import Alert, AlertMessage
from cataloger_dagster.resources.notifier import JsonWebhookNotifier
from tests.support.receivers import http_receiver

ALERT = Alert(table="orders", owner="sales", kind="history", issue_id="volume", issue_type="volume_anomaly",
              severity="medium", description="rows fell", page="s3://b/p#issue-1", evidence="s3://b/i.json")


def test_posts_the_message_as_json():
    with http_receiver() as receiver:
        delivery = JsonWebhookNotifier(url=receiver.url).send(AlertMessage(run_id="r1", alerts=[ALERT]))
    assert delivery.ok
    (payload,) = receiver.received
    assert payload == AlertMessage(run_id="r1", alerts=[ALERT]).as_json()
    assert receiver.paths == ["/hooks/T000/B000/not-a-real-secret"]


def test_a_server_error_is_retried_and_reported_without_the_url():
    with http_receiver(fail_first=5) as receiver:
        delivery = JsonWebhookNotifier(url=receiver.url, attempts=2, backoff_s=0).send(AlertMessage(run_id="r"))
    assert receiver.tries == 2 and not delivery.ok
    assert "500" in delivery.error and "not-a-real-secret" not in delivery.error


def test_refuses_a_url_that_is_not_http():
    delivery = JsonWebhookNotifier(url="file:///etc/passwd", attempts=1).send(AlertMessage(run_id="r"))
    assert not delivery.ok and "http:// or https://" in delivery.error


def test_what_is_posted_holds_personal_values_only_as_the_policy_shows_them(monkeypatch):
    from cataloger_dagster.core.sensitive.masking import protect, remember

    remember(["Wilhelmina Quested"])  # a value the classifier saw in a name column of this process
    monkeypatch.setenv("CATALOGER_TEST_ALERT_KEY", "alert-key")
    told = Alert(table="orders", owner="sales", kind="new_high", issue_id="dup", issue_type="duplicate_rows",
                 severity="high", description="rows of Wilhelmina Quested (ada@example.org) repeat",
                 page="s3://b/p#issue-1", evidence="ada@example.org appears 3 times")
    import dagster as dg

    with http_receiver() as receiver:
        delivery = JsonWebhookNotifier(url=receiver.url, sensitive_values="hash",
                                       sensitive_key=dg.EnvVar("CATALOGER_TEST_ALERT_KEY")).send(
            AlertMessage(run_id="r1", alerts=[told]))
    assert delivery.ok
    body = str(receiver.received)
    assert "ada@example.org" not in body and "Wilhelmina" not in body
    assert protect("ada@example.org", "hash", "alert-key") in body
    assert protect("Wilhelmina Quested", "hash", "alert-key") in body
