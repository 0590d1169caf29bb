"""NotifierResource: sends an alert message somewhere people read it, retrying a failed delivery.

A backend implements `_deliver` (one attempt, raising on failure) and `_secrets` (the values
that must never appear in an error: a webhook URL is its own credential, an SMTP password).
`send` never raises: it makes at most `attempts` tries with exponential backoff and returns a
`Delivery` whose error has every secret masked, for the alerts log and the sensor's log.

Names are data: a backend that cannot carry one (`_compose` raises) must not lose the other
tables' alerts of the same message, so `deliveries` then sends one message per table, and
only the tables whose own message cannot be composed are recorded as failed.
"""

from __future__ import annotations

import abc
import time
from dataclasses import dataclass
from typing import Optional

import dagster as dg
from pydantic import Field

from cataloger_dagster.core.alerts import AlertMessage
from cataloger_dagster.core.redaction import Redactor
from cataloger_dagster.core.sensitive.masking import DEFAULT_POLICY, Policy, ValuePolicy
from cataloger_dagster.resources.value_policy import value_policy


@dataclass(frozen=True)
class Delivery:
    ok: bool
    backend: str
    attempts: int
    error: Optional[str] = None


class NotifierResource(dg.ConfigurableResource, abc.ABC):
    attempts: int = Field(3, ge=1, description="tries of one delivery before it is recorded as failed")
    backoff_s: float = Field(1.0, ge=0.0, description="seconds before the second try, doubled before each next")
    timeout_s: float = Field(10.0, gt=0.0, description="seconds one try may take")
    # what a sensitive column's value becomes in an alert (the same policy as the store's)
    sensitive_values: Policy = DEFAULT_POLICY
    sensitive_key: Optional[str] = Field(
        default=None, description="the `hash` policy's key: pass dg.EnvVar(...), never the value"
    )

    @property
    @abc.abstractmethod
    def backend(self) -> str: ...

    @abc.abstractmethod
    def _deliver(self, message: AlertMessage) -> None:
        """One try; raises on any failure."""

    def _compose(self, message: AlertMessage) -> object:
        """What `_deliver` sends, built without sending; raises when the message cannot be
        written in this backend's format (a name it cannot encode)."""
        return message

    def _secrets(self) -> list[str]:
        return []

    def _composing_error(self, message: AlertMessage) -> Optional[str]:
        try:
            self._compose(message)
        except Exception as exc:  # noqa: BLE001 - whatever a name makes the backend's format refuse
            return self.masked(f"{type(exc).__name__}: {exc}")
        return None

    def deliveries(self, message: AlertMessage) -> list[tuple[AlertMessage, Delivery]]:
        """The message sent whole, or, when it cannot be composed, one message per table: a table
        whose own message cannot be composed fails alone (no try made), the others are sent."""
        if len(message.per_table()) <= 1 or self._composing_error(message) is None:
            return [(message, self.send(message))]
        sent = []
        for part in message.per_table():
            error = self._composing_error(part)
            sent.append(
                (
                    part,
                    self.send(part)
                    if error is None
                    else Delivery(False, self.backend, 0, f"cannot be written for {self.backend}: {error}"),
                )
            )
        return sent

    def masked(self, text: str) -> str:
        return Redactor(secrets=self._secrets(), sensitive=self._masking).text(text)

    @property
    def _masking(self) -> ValuePolicy:
        return value_policy(self.sensitive_values, self.sensitive_key)

    def send(self, message: AlertMessage) -> Delivery:
        # what leaves holds a sensitive column's value only as the policy shows it, whatever the
        # finding quoted (the records of the deliveries keep the message as it was made)
        message = message.protected(self._masking.text)
        error = None
        for attempt in range(1, self.attempts + 1):
            try:
                self._deliver(message)
                return Delivery(True, self.backend, attempt)
            except Exception as exc:  # noqa: BLE001 - any failure of a delivery is retried, then recorded
                error = self.masked(f"{type(exc).__name__}: {exc}")
                if attempt < self.attempts:
                    time.sleep(self.backoff_s * 2 ** (attempt - 1))
        return Delivery(False, self.backend, self.attempts, error)


class NoNotifier(NotifierResource):
    """Alerts are off (CATALOGER_ALERT_NOTIFIER=none): nothing is sent, and the sensor says so."""

    @property
    def backend(self) -> str:
        return "none"

    def _deliver(self, message: AlertMessage) -> None:
        raise RuntimeError("no notifier is configured: set CATALOGER_ALERT_NOTIFIER")
