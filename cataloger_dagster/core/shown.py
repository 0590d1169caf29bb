"""Names and values as data wherever the catalog shows them to a person.

Table and column names, values and the agent's text come from the database, so each output
that a person reads or copies gets them through one of three helpers:

- `visible`: log lines, terminal lines, e-mail subjects.  Control characters (C0, DEL, C1),
  the line and paragraph separators and the bidi controls are written as ``\\xNN`` /
  ``\\uNNNN``, so a name can neither type keys into a terminal, forge a log line, reorder the
  text around it nor break a header; every other character is kept.
- `shell_word`: one word of a command to copy.  ``shlex.quote`` when the word holds no
  control character, else bash's ANSI-C quoting (``$'...'``, each such character as the
  ``\\xNN`` bytes of its UTF-8), so the pasted text holds no raw control character and
  still passes the exact name to the program (but for NUL, which no program argument can
  hold).
- `markdown_text`: text inside Markdown (Dagster descriptions and metadata).  Every character
  that opens Markdown inline syntax (``\\ ` * _ [ ] < > | ~ &``: links and images need a
  ``[``, autolinks and HTML a ``<``) is
  backslash-escaped, as is a leading list or heading marker (CommonMark renders an escaped
  character as itself), and line breaks become spaces, so no name or value opens an image,
  link, HTML tag, code span, emphasis, heading, list or table cell.
"""

from __future__ import annotations

import re
import shlex

# C0, DEL, C1; ALM, LRM, RLM; the line/paragraph separators; the bidi embeddings, overrides
# and isolates; lone surrogates (a name read with surrogateescape: no encoding can carry them)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~&])")
_LEADING_MARKER = re.compile(r"^(\s*)([-+=#]|\d+[.)])")  # a list item, heading or setext underline if first
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\u2028\u2029\x0b\x0c\x85]")


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: object, keep: str = "") -> str:
    """``text`` with every control character written as an escape: ``"c\\x15touch"`` for a
    name holding Ctrl-U.  ``keep``: characters left as they are (``"\\n\\t"`` for a whole
    text of several lines, such as a stored script, whose names are already Python literals)."""
    return _CONTROL.sub(lambda m: m.group(0) if m.group(0) in keep else _escape(m.group(0)), str(text))


def shell_word(word: str) -> str:
    """``word`` quoted for bash (and zsh, ksh): the same word once the shell reads it, and
    no raw control character in the text to paste."""
    if not has_control(word):
        return shlex.quote(word)
    out = []
    for char in word:
        if char in "\\'":
            out.append("\\" + char)
        elif char == "!":  # no history expansion, whatever the shell's options
            out.append("\\x21")
        elif has_control(char):
            out.extend(f"\\x{byte:02x}" for byte in _bytes(char))
        else:
            out.append(char)
    return "$'" + "".join(out) + "'"


def _bytes(char: str) -> bytes:
    # a lone surrogate is a byte Python read with surrogateescape (as it reads argv): that byte
    try:
        return char.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return char.encode("utf-8", "surrogatepass")


def markdown_text(text: object) -> str:
    """``text`` as literal text in Markdown, on one line, control characters made visible."""
    escaped = _MARKDOWN.sub(r"\\\1", visible(_LINE_BREAKS.sub(" ", str(text))))
    return _LEADING_MARKER.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], escaped)
