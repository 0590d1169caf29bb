"""The one place a value of a sensitive column is turned into what may leave the catalog.

Policy ``mask`` (the default) keeps the value's shape (letters as ``x``/``X``, digits as ``9``,
punctuation kept): a reader, and the model, still see that it is an e-mail or a card number.
``hash`` gives a short keyed digest (an HMAC: equal for equal values, so joins and counts still
work, and, without the key, no dictionary of likely values finds the value back), and ``drop``
leaves nothing.

`ValuePolicy` is the one object every path that lets text out holds: the policy, its key, and
the values seen in the classifier's samples of sensitive columns (kept in memory only), which are
scrubbed from any text besides what proves its class by pattern (a person's name quoted in a note).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal

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
    """A keyed digest (HMAC-SHA256, 16 hex digits) of the value's text."""
    return "#" + hmac.new(key.encode(), str(value).encode(), hashlib.sha256).hexdigest()[:16]


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


def scrub_object(obj: Any, policy: Policy = DEFAULT_POLICY, key: str = "") -> Any:
    """`scrub_value` over a stage's result as it is stored: a pydantic model comes back as the same
    model (validated again), anything else JSON-like as `scrub_value` gives it."""
    if isinstance(obj, BaseModel):
        return type(obj).model_validate(scrub_value(obj.model_dump(), policy, key))
    return scrub_value(obj, policy, key)


MIN_KNOWN = 4  # a shorter sampled value ("Li", "M") would blank out ordinary words
MAX_KNOWN = 20_000  # values remembered per process at most: the first ones stay
_WORD = re.compile(r"\w+")


class KnownValues:
    """Values to find in any text, whole (not inside a longer word), case aside, in one pass over
    the text's words: each value is indexed by its first word."""

    def __init__(self, values: Iterable[str] = ()):
        self.by_first: dict[str, list[str]] = {}
        self.size = 0
        self.add(values)

    def add(self, values: Iterable[str]) -> None:
        for value in values:
            value = value.strip()
            first = _WORD.search(value)
            if len(value) < MIN_KNOWN or first is None or self.size >= MAX_KNOWN:
                continue
            same = self.by_first.setdefault(first.group(0).lower(), [])
            if value.lower() not in same:
                same.append(value.lower())
                same.sort(key=len, reverse=True)  # the longest that fits is replaced whole
                self.size += 1

    def spans(self, text: str) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        lowered = text.lower()
        for word in _WORD.finditer(lowered):
            if found and word.start() < found[-1][1]:
                continue
            for value in self.by_first.get(word.group(0), ()):
                # the value starts with its first word, maybe after punctuation ("+1 555...")
                begin = word.start() - (len(value) - len(value.lstrip("+-(. ")))
                stop = begin + len(value)
                if (
                    begin >= 0
                    and lowered.startswith(value, begin)
                    and (stop == len(text) or not (text[stop].isalnum() or text[stop] == "_"))
                    and (begin == 0 or not (text[begin - 1].isalnum() or text[begin - 1] == "_"))
                ):
                    found.append((begin, stop))
                    break
        return found


_known = KnownValues()
_known_lock = threading.Lock()


def whole_values(profile: TableProfile) -> set[str]:
    """The values the profile shows of its columns whose whole value is sensitive (a name, an
    e-mail column; not a note that holds one), as text: what `remember` keeps."""
    found: set[str] = set()
    for cp in profile.columns:
        if not cp.sensitive or all(c.in_text for c in cp.sensitive):
            continue
        shown = [t.value for t in cp.top_values or []] + [cp.min, cp.max]
        shown += [row.get(cp.name) for row in profile.sample_rows]
        found.update(str(v).strip() for v in shown if isinstance(v, str) and len(v.strip()) >= MIN_KNOWN)
    return found


def remember(values: Iterable[str]) -> None:
    """Keep `values` (sampled values of sensitive columns) in this process's memory, so that every
    `ValuePolicy` made without its own list scrubs them from outgoing text; never written anywhere."""
    with _known_lock:
        _known.add(values)


@dataclass(frozen=True)
class ValuePolicy:
    """What a value of a sensitive column becomes when it leaves, as one object: the policy, the
    key of ``hash`` (never shown: not in repr), and known values to scrub from text besides the
    pattern scrub (default: those `remember` keeps in this process)."""

    policy: Policy = DEFAULT_POLICY
    key: str = field(default="", repr=False)
    known: KnownValues | None = field(default=None, repr=False, compare=False)

    def protect(self, value: Any) -> Any:
        return protect(value, self.policy, self.key)

    def text(self, value: str) -> str:
        """`value` with what proves its class and every known value replaced under the policy."""
        value = scrub(value, self.policy, self.key)
        known = _known if self.known is None else self.known
        if not known.size:
            return value
        with _known_lock:
            found = known.spans(value)
        out, end = [], 0
        for start, stop in found:
            shown = self.protect(value[start:stop])
            out += [value[end:start], "" if shown is None else str(shown)]
            end = stop
        return "".join(out) + value[end:]

    __call__ = text

    def value(self, value: Any) -> Any:
        """`text` over every text of a JSON-like value (keys included)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.value(v) for v in value)
        return value

    def object(self, obj: Any) -> Any:
        """`value` over a stage's result: a pydantic model comes back as the same model."""
        if isinstance(obj, BaseModel):
            return type(obj).model_validate(self.value(obj.model_dump()))
        return self.value(obj)

    def profile(self, profile: TableProfile) -> TableProfile:
        """`protect_profile`, then `object` over all of it: a known value quoted in any column's
        text (a name in a note) goes too."""
        return self.object(protect_profile(profile, self.policy, self.key))
