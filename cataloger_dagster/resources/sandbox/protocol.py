"""Host side of the framed protocol spoken with ``supervisor.py``.

Every frame is ``>IB`` (payload length, kind) followed by the payload.  Host to
supervisor: ``J`` frames holding JSON (config, exec, interrupt, recycle, shutdown).
Supervisor to host: ``J`` JSON messages (``ready``, ``result``, ``dead``, ``unclean``),
``O``/``E`` head chunks and ``P``/``Q`` tail chunks of the cell's stdout/stderr,
each prefixed by the call's nonce.

The channel is the supervisor's fds 0/1; the supervisor is the sandbox's
non-dumpable PID 1, so no cell can open those fds through ``/proc`` or ptrace
it (see supervisor.py).  Cells run in the worker, which can reach the pipe its
results go to the supervisor on, and the call's nonce: a cell can fabricate its
own call's result (the supervisor checks its types and caps it first), not
another session's, and not a frame on this channel.  The host still trusts no
frame: one it cannot decode (bad JSON, not an object, an unknown kind or op,
wrong types, too long) is a ProtocolError, which ends the call with an
``ok=False`` result and a restarted sandbox, never an exception.
"""

from __future__ import annotations

import json
import secrets
import struct
from importlib import resources

HEADER = struct.Struct(">IB")
MAX_FRAME = 32 * 1024 * 1024
NONCE_LEN = 32
KINDS = frozenset("JOEPQ")
OPS = frozenset({"ready", "result", "dead", "unclean"})

# Reads ``<len>\n<source>`` from the fd in argv[1], then runs it.  Kept tiny so
# it fits on a command line and needs nothing in the image but python3.
BOOT = """\
import os, sys
_fd = int(sys.argv[1]); _h = b''
while not _h.endswith(b'\\n'):
    _c = os.read(_fd, 1)
    if not _c: raise SystemExit(75)
    _h += _c
_b = bytearray()
while len(_b) < int(_h):
    _c = os.read(_fd, int(_h) - len(_b))
    if not _c: raise SystemExit(75)
    _b += _c
_g = {'__name__': '__sandbox__', '_SOURCE': bytes(_b)}
del _fd, _h, _c
exec(compile(bytes(_b), '<sandbox-supervisor>', 'exec'), _g)
del _b
_g['main']()
"""


def supervisor_source() -> bytes:
    return resources.files(__package__).joinpath("supervisor.py").read_bytes()


def new_nonce() -> str:
    return secrets.token_hex(NONCE_LEN // 2)


def encode(msg: dict) -> bytes:
    body = json.dumps(msg).encode()
    return HEADER.pack(len(body), ord("J")) + body


def bootstrap_payload(config: dict) -> bytes:
    """What the host writes first: the supervisor's source, then its config."""
    src = supervisor_source()
    return b"%d\n" % len(src) + src + encode(config)


class FrameReader:
    """Incremental decoder; bounded because frames are bounded."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[str, bytes]]:
        self.buf += data
        frames = []
        while len(self.buf) >= HEADER.size:
            n, kind = HEADER.unpack_from(self.buf)
            if n > MAX_FRAME:
                raise ProtocolError(f"frame of {n} bytes from the sandbox exceeds {MAX_FRAME}")
            if chr(kind) not in KINDS:
                raise ProtocolError(f"frame of unknown kind {kind} from the sandbox")
            if len(self.buf) < HEADER.size + n:
                break
            frames.append((chr(kind), bytes(self.buf[HEADER.size : HEADER.size + n])))
            del self.buf[: HEADER.size + n]
        return frames


class ProtocolError(RuntimeError):
    """The sandbox sent something that is not the protocol."""


def decode_message(payload: bytes) -> dict:
    """A ``J`` frame from the supervisor: a JSON object with a known ``op``."""
    try:
        msg = json.loads(payload)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise ProtocolError(f"a message from the sandbox is not JSON ({type(exc).__name__})") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"a message from the sandbox is a JSON {type(msg).__name__}, not an object")
    if msg.get("op") not in OPS:
        raise ProtocolError(f"a message from the sandbox has an unknown op {str(msg.get('op'))[:40]!r}")
    return msg


class CappedBuffer:
    """Head and tail of a stream, never more than ``cap`` (+ one trim slack) bytes."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            excess = len(self.tail) - self.half
            if excess > self.half:
                del self.tail[:excess]
                self.dropped += excess

    def text(self, extra_dropped: int = 0) -> tuple[str, bool]:
        excess = len(self.tail) - self.half
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess
        dropped = self.dropped + extra_dropped
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if not dropped:
            return head + tail, False
        return f"{head}\n... [{dropped} bytes truncated] ...\n{tail}", True
