"""How names and values from the database reach generated code: only as literals.

A table name, column name, value or issue id can hold any character (quotes,
backslashes, newlines, U+2028, ...).  Generated code (catalog scripts, summary
scripts, prompts that ask for code) gets them from `literal` alone; comments
get them from `comment_id` or `comment_text`, which keep comments on one line
of printable ASCII whatever the input.  Reading code back goes through
`python_lines` and Python's own tokenizer, never `str.splitlines`, whose idea
of a line (it also breaks at \\x0c, \\x1c, U+2028, ...) is not Python's.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

#: The first line of every session script.  "format 2": names reach its code only as literals,
#: so its blocks can be trusted to be what ran; a script of an earlier version lacks it.
SCRIPT_HEADER = "# Session script exported by cataloger SandboxResource, format 2"

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def literal(value: Any) -> str:
    """Python source that evaluates to `value` (str, number, bool, None, and lists, tuples and dicts
    of them).  Strings go through repr, which escapes every unprintable character (line breaks,
    U+2028, NUL, bidi controls), so the result is one line whatever the string holds."""
    # str(), int(), float() first: a subclass (an enum member) has a repr that is no literal
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return repr(str(value))
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        return repr(float(value)) if math.isfinite(value) else f"float({str(float(value))!r})"
    if isinstance(value, (list, tuple)):
        items = [literal(v) for v in value]
        if isinstance(value, tuple):
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        return f"[{', '.join(items)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(
        f"no literal for a {type(value).__name__} in generated code: convert it to "
        "str, a number, a list or a dict first"
    )


def comment_id(text: str, limit: int = 60) -> str:
    """`text` for a comment: itself when it is made of [A-Za-z0-9_.-] only, else the readable part
    with the rest replaced by '_', plus a short sha256 of the whole so different ids stay apart."""
    if len(text) <= limit and is_comment_id(text):
        return text
    readable = _UNSAFE.sub("_", text)[:limit]
    return f"{readable}_{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def is_comment_id(text: str) -> bool:
    """Whether `text` may stand in a comment as it is: [A-Za-z0-9_.-] only."""
    return bool(text) and _UNSAFE.search(text) is None


def comment_text(text: str, limit: int = 300) -> str:
    """Free text (an error message) for a comment: printable ASCII, anything else escaped as in a
    Python literal (\\n, \\x0c, \\u2028), cut at `limit` characters."""
    shown = "".join(c if " " <= c <= "~" else ascii(c)[1:-1] for c in text[:limit])
    return shown + ("..." if len(text) > limit else "")


def python_lines(code: str) -> list[str]:
    """The lines of `code` as Python reads them: broken at \\n, \\r\\n and \\r only."""
    return _LINE_BREAK.split(code)
