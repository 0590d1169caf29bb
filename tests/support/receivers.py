"""Local stand-ins for where alerts go: an HTTP receiver (both webhook kinds) and an SMTP server
(aiosmtpd), on loopback only, each in threads of this process."""

from __future__ import annotations

import json
import socket
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator


@dataclass
class HttpReceiver:
    url: str
    fail_first: int = 0          # answer 500 to this many requests, then 200
    received: list[dict] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    tries: int = 0


@contextmanager
def http_receiver(fail_first: int = 0, secret_path: str = "/hooks/T000/B000/not-a-real-secret") -> Iterator[HttpReceiver]:
    """A webhook at ``secret_path`` (webhook URLs carry their credential in the path)."""
    receiver = HttpReceiver(url="", fail_first=fail_first)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server API
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                receiver.tries += 1
                failing = receiver.tries <= receiver.fail_first
                if not failing:
                    receiver.received.append(json.loads(body))
                    receiver.paths.append(self.path)
            self.send_response(500 if failing else 200)
            self.end_headers()
            self.wfile.write(b"down" if failing else b"ok")

        def log_message(self, *args):  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}{secret_path}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class SmtpReceiver:
    host: str
    port: int
    messages: list[Message] = field(default_factory=list)
    logins: list[tuple[str, str]] = field(default_factory=list)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def smtp_receiver(login: tuple[str, str] | None = None) -> Iterator[SmtpReceiver]:
    """An SMTP server; with ``login`` it asks for that user and password (AUTH over plain text,
    which aiosmtpd allows on loopback only when told to)."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    receiver = SmtpReceiver("127.0.0.1", _free_port())

    class Handler:
        async def handle_DATA(self, server, session, envelope):  # noqa: N802 - the aiosmtpd API
            receiver.messages.append(message_from_bytes(envelope.original_content or envelope.content))
            return "250 OK"

    def authenticate(server, session, envelope, mechanism, auth_data):
        user, password = auth_data.login.decode(), auth_data.password.decode()
        receiver.logins.append((user, password))
        return AuthResult(success=(user, password) == login)

    options = ({"authenticator": authenticate, "auth_required": True, "auth_require_tls": False}
               if login else {})
    controller = Controller(Handler(), hostname=receiver.host, port=receiver.port, **options)
    controller.start()
    try:
        yield receiver
    finally:
        controller.stop()
