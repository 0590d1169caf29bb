"""The text patterns: each expression, guards and all, matches what its regex matches in
Python; the placeholder words, blanks and padding; and the semantic type they give."""

from __future__ import annotations

import re

import ibis
import pyarrow as pa

from cataloger_dagster.core.models import ColumnProfile
from cataloger_dagster.core.profile.kinds import Column
from cataloger_dagster.core.profile.patterns import (
    PATTERN_REGEX,
    PLAIN_PATTERNS,
    SENTINELS,
    pattern_exprs,
    pattern_names,
    semantic_type,
)

VALUES = ["a@b.com", "x@y", "https://x.org/a", "www.example.org", "ftp://h/f", "http s://no",
          "123e4567-e89b-12d3-a456-426614174000", "+1 555-123-4567", "(020) 7946 0958", "5551234",
          "1,200", "-12.5", " 42 ", ".5", "1e3", "2024-01-05", "03/15/2024", "12 March 2024", "Jan 5, 2024",
          "2024-01-05T10:00:00Z", "N/A", "none", " NULL ", "", "   ", "\tpadded", "Zürich", "東京", "abc"]


def _evaluated() -> dict[str, list[bool]]:
    con = ibis.duckdb.connect()
    t = con.create_table("v", pa.table({"i": list(range(len(VALUES))), "s": VALUES}))
    exprs = pattern_exprs(t.s)
    rows = t.select("i", **exprs).order_by("i").to_pyarrow().to_pylist()
    con.disconnect()
    return {name: [bool(r[name]) for r in rows] for name in exprs}


def test_each_pattern_expression_matches_what_its_regex_matches():
    got = _evaluated()
    for name, rx in PATTERN_REGEX.items():   # the guards may only skip values the regex would refuse
        assert got[name] == [re.search(rx, v) is not None for v in VALUES], name
    assert got["sentinel"] == [v.strip().lower() in SENTINELS for v in VALUES]
    assert got["blank"] == [v.strip() == "" for v in VALUES]
    assert got["padded"] == [v.strip() != v and v.strip() != "" for v in VALUES]
    assert sum(got["email"]) == 1 and sum(got["uuid"]) == 1 and got["date"][VALUES.index("Jan 5, 2024")]


def test_without_regular_expressions_the_plain_patterns_are_counted_and_the_rest_left_to_the_process():
    c = Column(0, "s", ibis.dtype("string"), "string", ibis.literal("a"))
    assert pattern_names(c, regex=True) == [*PATTERN_REGEX, *PLAIN_PATTERNS] and c.local_text is None
    assert pattern_names(c, regex=False) == list(PLAIN_PATTERNS) and c.local_text is c.expr


def _text(count: int, distinct: int, patterns: dict[str, int]) -> ColumnProfile:
    return ColumnProfile(name="s", dtype="string", kind="string", nullable=True, count=count, nulls=0,
                         null_fraction=0.0, distinct=distinct, pattern_counts=patterns)


def test_the_semantic_type_is_the_most_specific_pattern_most_values_match():
    assert semantic_type(_text(100, 100, {"email": 80})) == "email"
    assert semantic_type(_text(100, 100, {"email": 79})) == "text"
    # placeholders are set aside: 70 dates of the 80 real values
    assert semantic_type(_text(100, 100, {"date": 70, "sentinel": 20})) == "date"
    # digits are numbers before phones; a uuid before anything
    assert semantic_type(_text(10, 10, {"number": 10, "phone": 10})) == "number"
    assert semantic_type(_text(10, 10, {"uuid": 10, "number": 10})) == "uuid"
    assert semantic_type(_text(100, 4, {})) == "category"
    assert semantic_type(_text(6, 4, {})) == "text"   # a category repeats its values
