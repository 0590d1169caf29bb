"""The one place a value of a sensitive column is turned into what may leave the catalog.

Policy ``mask`` (the default) keeps the value's shape (letters as ``x``/``X``, digits as ``9``,
punctuation kept): a reader, and the model, still see that it is an e-mail or a card number.
``hash`` gives a short keyed digest, equal for equal values (joins and counts still work), and
``drop`` leaves nothing.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

Policy = Literal["mask", "hash", "drop"]
POLICIES: tuple[Policy, ...] = ("mask", "hash", "drop")
DEFAULT_POLICY: Policy = "mask"
DROPPED = None
MAX_SHOWN = 48  # a longer value is shown to this many characters, and "…"


def shape(value: Any) -> str:
    """``jane.doe@example.com`` -> ``xxxx.xxx@xxxxxxx.xxx``; ``4111 1111`` -> ``9999 9999``."""
    text = str(value)
    out = []
    for ch in text[:MAX_SHOWN]:
        if ch.isdigit():
            out.append("9")
        elif ch.isalpha():
            out.append("X" if ch.isupper() else "x")
        else:
            out.append(ch)
    return "".join(out) + ("…" if len(text) > MAX_SHOWN else "")


def digest(value: Any, key: str = "") -> str:
    return "#" + hashlib.blake2b(str(value).encode(), key=key.encode()[:64], digest_size=8).hexdigest()


def protect(value: Any, policy: Policy = DEFAULT_POLICY, key: str = "") -> Any:
    """What leaves in place of one value of a sensitive column under `policy` (NULL stays NULL)."""
    if value is None:
        return None
    if policy == "drop":
        return DROPPED
    if policy == "hash":
        return digest(value, key)
    return shape(value)
