"""The one place a value of a sensitive column is turned into what may leave the catalog.

Policy ``mask`` (the default) keeps the value's shape (letters as ``x``/``X``, digits as ``9``,
punctuation kept): a reader, and the model, still see that it is an e-mail or a card number.
``hash`` gives a short keyed digest, equal for equal values (joins and counts still work), and
``drop`` leaves nothing.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel

from cataloger_dagster.core.models import TableProfile, ValueCount

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


def scrub(text: str, policy: Policy = DEFAULT_POLICY, key: str = "") -> str:
    """`text` with every value of a class that proves itself (an e-mail, a card, an IBAN, a national
    id, an IP or MAC address, a phone number, a credential) replaced as `protect` replaces it
    ("" under ``drop``): for text that leaves whole (a log line, an alert, a prompt, a tool's result)."""
    from cataloger_dagster.core.sensitive.free_text import spans

    found = spans(text)
    if not found:
        return text
    out, end = [], 0
    for start, stop in found:
        out.append(text[end:start])
        shown = protect(text[start:stop], policy, key)
        out.append("" if shown is None else str(shown))
        end = stop
    out.append(text[end:])
    return "".join(out)


def scrub_value(value: Any, policy: Policy = DEFAULT_POLICY, key: str = "") -> Any:
    """`scrub` over every text of a JSON-like value (keys included)."""
    if isinstance(value, str):
        return scrub(value, policy, key)
    if isinstance(value, dict):
        return {scrub_value(k, policy, key): scrub_value(v, policy, key) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(v, policy, key) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub_value(v, policy, key) for v in value)
    return value


def protect_profile(profile: TableProfile, policy: Policy = DEFAULT_POLICY, key: str = "") -> TableProfile:
    """The profile with no value of a sensitive column in clear: its top values, lowest and highest,
    quantiles and sample cells under `policy`; in a free-text column only what it holds inside is
    replaced (`scrub`), so the prose still reads.  A number or date column's figures that are
    values (lowest, highest, quantiles, histogram edges, mean) are left out: a shape is no number."""
    out = profile.model_copy(deep=True)
    for cp in out.columns:
        if not cp.sensitive:
            continue
        inside = all(c.in_text for c in cp.sensitive)
        textual = cp.kind in ("string", "other", "json") or cp.profiled_as_text is not None

        def hide(value: Any, inside: bool = inside, textual: bool = textual) -> Any:
            if inside:
                return scrub(value, policy, key) if isinstance(value, str) else value
            return protect(value, policy, key) if textual else None

        if cp.top_values is not None:
            kept = [ValueCount(value=hide(t.value), count=t.count) for t in cp.top_values]
            cp.top_values = None if (policy == "drop" and not inside) or not textual and not inside else kept
        cp.min, cp.max = hide(cp.min), hide(cp.max)
        if not inside and not textual:
            cp.quantiles, cp.histogram, cp.mean, cp.std = None, None, None, None
        for row in out.sample_rows:
            if cp.name in row:
                row[cp.name] = hide(row[cp.name])
    return out


def scrub_object(obj: Any, policy: Policy = DEFAULT_POLICY) -> Any:
    """`scrub_value` over a stage's result as it is stored: a pydantic model comes back as the same
    model (validated again), anything else JSON-like as `scrub_value` gives it."""
    if isinstance(obj, BaseModel):
        return type(obj).model_validate(scrub_value(obj.model_dump(), policy))
    return scrub_value(obj, policy)
