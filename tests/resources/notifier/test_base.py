"""The notifier's retry with backoff, and the masking of its secrets in what it reports."""

import time

import pytest

from cataloger_dagster.core.alerts import AlertMessage
from cataloger_dagster.resources.notifier import NoNotifier, NotifierResource


class Flaky(NotifierResource):
    """Fails `failures` times, with an error that quotes its secret, then delivers."""

    secret: str
    failures: int

    @property
    def backend(self) -> str:
        return "flaky"

    def _secrets(self) -> list[str]:
        return [self.secret]

    def _deliver(self, message: AlertMessage) -> None:
        calls = self._calls
        calls.append(time.monotonic())
        if len(calls) <= self.failures:
            raise ConnectionError(f"refused by {self.secret}")

    @property
    def _calls(self) -> list:
        return CALLS.setdefault(id(self), [])


CALLS: dict = {}


def test_retries_with_doubling_backoff_then_delivers():
    notifier = Flaky(secret="s3cret", failures=2, attempts=3, backoff_s=0.05)
    delivery = notifier.send(AlertMessage(run_id="r"))
    assert delivery.ok and delivery.attempts == 3 and delivery.error is None
    first, second, third = CALLS[id(notifier)]
    assert second - first >= 0.05 and third - second >= 0.1


def test_gives_up_after_its_attempts_with_the_secret_masked():
    delivery = Flaky(secret="s3cret", failures=10, attempts=2, backoff_s=0).send(AlertMessage(run_id="r"))
    assert not delivery.ok and delivery.attempts == 2
    assert delivery.error == "ConnectionError: refused by ***"


def test_no_notifier_never_delivers():
    delivery = NoNotifier(attempts=1).send(AlertMessage(run_id="r"))
    assert not delivery.ok and "CATALOGER_ALERT_NOTIFIER" in delivery.error


def test_attempts_must_be_positive():
    with pytest.raises(ValueError):
        NoNotifier(attempts=0)
