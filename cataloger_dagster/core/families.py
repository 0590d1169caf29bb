"""Column families: columns that differ only by a number (wk1 ... wk76, q1_2019 ... q4_2020,
new_sp_m014 ... new_sp_f65) and share a type are one measure spread over several columns.
Detectors, issues, the understanding and the page judge such a family as one unit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from cataloger_dagster.core.models import TableProfile

MIN_MEMBERS = 3

# a number, with the one letter that may tag it (m014 / f014: a sex; q1: a quarter)
_NUMBERED = re.compile(r"(?<![A-Za-z])[A-Za-z](?=\d)\d+|\d+")


@dataclass(frozen=True)
class Family:
    key: str  # the name with each number written '#': 'wk#', 'new_sp_#'
    dtype: str  # the members' ibis type, nullability aside
    members: tuple[str, ...]  # in the table's order

    @property
    def label(self) -> str:
        """``wk1…wk76``: how a person names the family."""
        return f"{self.members[0]}…{self.members[-1]}"

    @property
    def stem(self) -> str:
        """The family's name as an identifier part: 'wkN', 'new_sp_N'."""
        return self.key.replace("#", "N")

    def described(self) -> str:
        return f"{self.label} ({len(self.members)} columns)"


def family_key(name: str) -> str | None:
    """The name with its numbers (and a letter tagging one) written '#', or None without a number."""
    if not any(ch.isdigit() for ch in name):
        return None
    return _NUMBERED.sub("#", name)


def column_families(columns: Iterable[tuple[str, str]]) -> list[Family]:
    """The families among `columns` ((name, ibis type) pairs in the table's order): at least
    MIN_MEMBERS columns of one type whose names are the same once their numbers are set aside."""
    groups: dict[tuple[str, str], list[str]] = {}
    for name, dtype in columns:
        key = family_key(name)
        if key is not None:
            groups.setdefault((key, dtype.lstrip("!")), []).append(name)
    return [Family(key, dtype, tuple(names)) for (key, dtype), names in groups.items() if len(names) >= MIN_MEMBERS]


def families_of(profile: TableProfile) -> list[Family]:
    return column_families((c.name, c.dtype) for c in profile.columns)


def family_by_member(families: Iterable[Family]) -> dict[str, Family]:
    return {name: f for f in families for name in f.members}
