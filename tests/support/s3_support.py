"""A moto S3 server on 127.0.0.1, for the suite's `s3_server` fixture and the benchmarks."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def moto_s3_server() -> Iterator[str]:
    """The endpoint URL of a moto S3 server on 127.0.0.1 and a free port, stopped on exit."""
    from moto.server import ThreadedMotoServer  # moto[server] is a dev dependency

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()
