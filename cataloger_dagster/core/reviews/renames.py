"""Column renames read from the schema history, so that a review follows its issue.

An issue's id names its column (``<table>_<type>_<column>``): renaming the column
would otherwise make a dismissed issue new again.  Between two consecutive
profiles, a column that is gone and one that appeared with the same type and
the same statistics is taken for the same column renamed.  Only an unambiguous
pair counts: two candidates that fit equally well rename nothing.
"""

from __future__ import annotations

from typing import Iterable, Optional

from cataloger_dagster.core.models import ColumnProfile, TableProfile
from cataloger_dagster.core.values import finite_float

# how far two runs' statistics of one column may drift (rows added between them)
NULL_SHARE_DRIFT = 0.05
DISTINCT_DRIFT = 0.2


def _close(a: Optional[float], b: Optional[float], drift: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= drift * max(abs(a), abs(b), 1.0)


def same_column(before: ColumnProfile, after: ColumnProfile) -> bool:
    """``after`` could be ``before`` under another name: same type, semantic type and statistics."""
    if (before.dtype, before.kind, before.semantic_type) != (after.dtype, after.kind, after.semantic_type):
        return False
    if abs(before.null_fraction - after.null_fraction) > NULL_SHARE_DRIFT:
        return False
    if not _close(before.distinct, after.distinct, DISTINCT_DRIFT):
        return False
    # the range is the sharpest fingerprint of a column; numbers compare as numbers, the rest as text
    for a, b in ((before.min, after.min), (before.max, after.max)):
        fa, fb = finite_float(a), finite_float(b)
        if fa is not None and fb is not None:
            if not _close(fa, fb, DISTINCT_DRIFT):
                return False
        elif (a is None) != (b is None) or (a is not None and str(a) != str(b)):
            return False
    return True


def column_renames(before: TableProfile, after: TableProfile) -> dict[str, str]:
    """{old name: new name} of the columns renamed between two consecutive profiles."""
    old_names = {c.name for c in before.columns}
    new_names = {c.name for c in after.columns}
    gone = [c for c in before.columns if c.name not in new_names]
    came = [c for c in after.columns if c.name not in old_names]
    pairs = {g.name: [c.name for c in came if same_column(g, c)] for g in gone}
    taken = [n for found in pairs.values() for n in found]
    return {old: found[0] for old, found in pairs.items() if len(found) == 1 and taken.count(found[0]) == 1}


def renames_through(history: Iterable[TableProfile]) -> dict[str, str]:
    """{name at some earlier run: name in the last profile} over ``history`` (oldest first),
    each rename between consecutive profiles followed to the end."""
    current: dict[str, str] = {}
    previous: Optional[TableProfile] = None
    for profile in history:
        if previous is not None:
            step = column_renames(previous, profile)
            current = {old: step.get(now, now) for old, now in current.items()}
            for old, new in step.items():
                current.setdefault(old, new)
        previous = profile
    last = {c.name for c in previous.columns} if previous is not None else set()
    return {old: new for old, new in current.items() if old != new and new in last}
