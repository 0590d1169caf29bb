"""A moto S3 server on 127.0.0.1, for the suite's `s3_server` fixture and the benchmarks."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def moto_s3_server(own_process: bool = False) -> Iterator[str]:
    """The endpoint URL of a moto S3 server on 127.0.0.1 and a free port, stopped on exit.

    ``own_process``: the server runs in a process of its own, as a real S3 does, so that timing the
    client does not also time the server's work under the client's interpreter lock (the benchmarks)."""
    if own_process:
        with _moto_process() as url:
            yield url
        return
    from moto.server import ThreadedMotoServer  # moto[server] is a dev dependency

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@contextmanager
def _moto_process(wait_s: float = 30.0) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = Path(sys.executable).with_name("moto_server")
    proc = subprocess.Popen([str(server), "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto_server did not start on port {port} (exit {proc.poll()})")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
