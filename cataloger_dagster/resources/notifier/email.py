"""E-mail over SMTP (smtplib): the message as plain text, to every recipient at once."""

from __future__ import annotations

import smtplib
from email.message import EmailMessage
from typing import Optional

from pydantic import Field

from cataloger_dagster.core.alerts import AlertMessage
from cataloger_dagster.resources.notifier.base import NotifierResource


class SmtpNotifier(NotifierResource):
    host: str
    port: int = 25
    sender: str
    recipients: list[str] = Field(min_length=1)
    username: Optional[str] = None
    password: Optional[str] = Field(None, description="give it as dg.EnvVar, never as a value")
    starttls: bool = False

    @property
    def backend(self) -> str:
        return "email"

    def _secrets(self) -> list[str]:
        return [self.password or ""]

    def _compose(self, message: AlertMessage) -> EmailMessage:
        mail = EmailMessage()
        mail["Subject"] = message.title
        mail["From"] = self.sender
        mail["To"] = ", ".join(self.recipients)
        mail.set_content(message.as_text())
        return mail

    def _deliver(self, message: AlertMessage) -> None:
        mail = self._compose(message)
        with smtplib.SMTP(self.host, self.port, timeout=self.timeout_s) as smtp:
            if self.starttls:
                smtp.starttls()
            if self.username:
                smtp.login(self.username, self.password or "")
            smtp.send_message(mail)
