"""What the session script's setup block defines before the helpers and the checks run.

Declared, never sent: the checks import these names under ``TYPE_CHECKING`` only, so that a
linter or a type checker reads each check as the Python it is.  The definitions themselves are
the setup block's (core/investigate/code.py).
"""

from __future__ import annotations

from typing import Any, Callable

import ibis

con: Any  # the ibis connection to DB_CONNECTION_STRING
t: ibis.Table  # the table under investigation
ROWS: int  # its row count
HOLDS_NAN: bool  # whether the backend stores NaN apart from NULL
pct: Callable[[float, float], float]  # a share in percent, rounded to 3 places
rows_of: Callable[..., list[dict]]  # up to `limit` rows of an expression, as dicts
# literals the blocks' heads write (core/investigate/code.py)
TABLE: str  # the table's name
NO_NAN_BACKENDS: tuple[str, ...]  # backends that store no NaN apart from NULL
# the placeholder vocabulary (core/vocabulary.py), written at the head of the helpers block
UNKNOWN_WORDS: tuple[str, ...]  # say "unknown" in any column
TYPED_PLACEHOLDERS: tuple[str, ...]  # placeholders only among numbers or dates
PLACEHOLDER_MARKS: str  # one of them repeated says "unknown" too
_columns: list[str]  # the explore block's columns
