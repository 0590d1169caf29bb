"""A MySQL column's definition as SHOW CREATE TABLE gives it, without its comment.

MySQL sets a column's comment only by restating the whole column (``MODIFY COLUMN``): whatever
the restated definition leaves out (its type, NULL or NOT NULL, default, ON UPDATE, generated
expression, character set, collation) is lost.  The server's own SHOW CREATE TABLE is the one
complete definition, so it is read item by item, honouring quoted names and strings (a comment
or a default may hold commas, quotes and parentheses), and only the COMMENT clause is dropped.
"""

from __future__ import annotations

import re

_COMMENT = re.compile(r"(^|\s)COMMENT\s*\Z", re.IGNORECASE)  # the keyword just before a string


class DefinitionError(ValueError):
    """A SHOW CREATE TABLE this reader does not understand."""


def _quoted_end(text: str, start: int) -> int:
    """The index after the quoted token opening at ``start`` (`name`, 'text' or "text"): a
    doubled quote stays inside, and in strings a backslash escapes the next character."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        char = text[i]
        if char == "\\" and quote != "`":
            i += 2
            continue
        if char == quote:
            if text[i + 1 : i + 2] == quote:
                i += 2
                continue
            return i + 1
        i += 1
    raise DefinitionError(f"unterminated {quote} in the table's definition")


def _items(body: str) -> list[str]:
    """The top-level items of a CREATE TABLE's parenthesised body, split at commas outside any
    quote or parenthesis."""
    items, depth, start, i = [], 0, 0, 0
    while i < len(body):
        char = body[i]
        if char in "`'\"":
            i = _quoted_end(body, i)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(body[start:i].strip())
            start = i + 1
        i += 1
    items.append(body[start:].strip())
    return [item for item in items if item]


def _body(create: str) -> str:
    """The text between the statement's first '(' outside a quoted name and its matching ')'."""
    depth, i, j = 0, -1, 0
    while j < len(create):
        char = create[j]
        if char in "`'\"":
            j = _quoted_end(create, j)
            continue
        if char == "(":
            depth += 1
            i = j if i < 0 else i
        elif char == ")":
            depth -= 1
            if depth == 0:
                return create[i + 1 : j]
        j += 1
    raise DefinitionError("no column list in the table's definition")


def _without_comment(definition: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(definition):
        char = definition[i]
        if char in "'\"":
            end = _quoted_end(definition, i)
            so_far = "".join(out)
            if _COMMENT.search(so_far):
                out = [_COMMENT.sub("", so_far)]
            else:
                out.append(definition[i:end])
            i = end
            continue
        if char == "`":
            end = _quoted_end(definition, i)
            out.append(definition[i:end])
            i = end
            continue
        out.append(char)
        i += 1
    return re.sub(r"\s+\Z", "", "".join(out))


def column_definitions(create: str) -> dict[str, str]:
    """{column: its definition without name and comment}, from the text of SHOW CREATE TABLE."""
    found = {}
    for item in _items(_body(create)):
        if not item.startswith("`"):
            continue  # a key, an index or a constraint
        end = _quoted_end(item, 0)
        name = item[1 : end - 1].replace("``", "`")
        found[name] = _without_comment(item[end:].strip())
    return found
