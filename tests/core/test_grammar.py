"""Every generated sentence read with counts of 0, 1 and many: plurals and verb agreement come
from one helper (core/grammar.py), on the pages, in the heuristic understanding, in the issue
descriptions and in the investigations' sentences (whose sandbox copy is held to it here)."""

from __future__ import annotations

import ast
import re
from datetime import datetime, timedelta, timezone
from html import unescape
from pathlib import Path

import pytest

from cataloger_dagster.core import grammar
from cataloger_dagster.core.grammar import count_noun, listing, noun_for, subject_verb, verb_for
from cataloger_dagster.core.investigate.checks import helpers as sandbox
from cataloger_dagster.core.issues.detectors.context import count as detector_count
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    CodeInvestigation,
    ColumnProfile,
    ColumnRule,
    Fingerprint,
    TableProfile,
)
from cataloger_dagster.core.render.pages import IndexEntry, _open_for, render_catalog_page, render_index
from cataloger_dagster.core.render.timelapse import render_timelapse
from cataloger_dagster.core.understanding import heuristic_understanding

CHECKS = Path(sandbox.__file__).parent
NOW = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
MANY = 2118


def _profile(table: str, rows: int, columns: int, **extra) -> TableProfile:
    cols = [ColumnProfile(name=f"c{i}", dtype="string", kind="string", count=rows, nulls=0, null_fraction=0.0)
            for i in range(columns)]
    return TableProfile(database="shop", table=table, row_count=rows, column_count=columns, columns=cols, sample_rows=[],
                        fingerprint=Fingerprint(schema_hash="s", row_count=rows, value="v"), **extra)


def _text(html: str, pattern: str) -> str:
    """The text of the first match of ``pattern`` (a regex with one group) in the page, tags removed."""
    found = re.search(pattern, html, re.S)
    assert found, pattern
    return " ".join(unescape(re.sub(r"<[^>]+>", "", found.group(1))).split())


def _catalog(n: int) -> str:
    profile = _profile("orders", n, 2)
    rule = ColumnRule(kind="sum", formula="total = a + b", columns=["c0", "c1"], result="c0", operands=["c1"],
                      holds=n, applies=n)
    code = "\n".join(["x = 1"] * n)
    inv = CodeInvestigation(issue_id="i1", code=code, output="", success=True, verdict="confirmed")
    return render_catalog_page(profile=profile, understanding=heuristic_understanding(profile),
                               issues=AnalysisResultModel(issues=[], summary="", completedAt="2026-05-01T11:00:00Z", rules=[rule]), investigations=[inv], now=NOW)


def _index(n: int) -> str:
    entries = [IndexEntry(table=f"t{i}", row_count=1 if n == 1 else 3, updated="") for i in range(n)]
    return render_index(database="shop", tables=entries, now=NOW)


# (sentence, builder of its text for a count, the exact text for 0, 1 and many)
SENTENCES = [
    ("count_noun", lambda n: count_noun(n, "row"), ("no rows", "1 row", "2,118 rows")),
    ("count_noun, irregular plural", lambda n: count_noun(n, "category"),
     ("no categories", "1 category", "2,118 categories")),
    ("count_noun, zero as a digit", lambda n: count_noun(n, "column", zero=None),
     ("0 columns", "1 column", "2,118 columns")),
    ("verb agreement with a count", lambda n: f"{count_noun(n, 'row')} {verb_for(n, 'is')} late",
     ("no rows are late", "1 row is late", "2,118 rows are late")),
    ("subjects and verb", lambda n: f"{subject_verb([f'k{i}' for i in range(max(n, 1) if n < 4 else 3)], 'identifies')} a row",
     ("k0 identifies a row", "k0 identifies a row", "k0, k1 and k2 identify a row")),
    ("issue descriptions' count", lambda n: detector_count(n, "value"), ("0 values", "1 value", "2,118 values")),
    ("understanding: table sentence",
     lambda n: heuristic_understanding(_profile("zero_rows", n, n if n < 4 else 3)).summary.description,
     ("zero_rows holds no zero row records with no attributes.",
      "zero_rows holds 1 zero row record with 1 attribute.",
      "zero_rows holds 2,118 zero row records with 3 attributes.")),
    ("understanding: distinct values",
     lambda n: heuristic_understanding(TableProfile(
         database="d", table="t", row_count=100, column_count=1, sample_rows=[],
         columns=[ColumnProfile(name="status", dtype="string", kind="string", count=100, nulls=0, null_fraction=0,
                                distinct=n if n < 4 else 3,
                                top_values=[{"value": "a", "count": 100}] if n else [])],
         fingerprint=Fingerprint(schema_hash="s", row_count=100, value="v"))).columns[0].description,
     ("Current status of the t (a small set of values).",   # no value, so nothing to say about them
      "Current status of the t (a small set of values) — 1 distinct value, most often 'a'.",
      "Current status of the t (a small set of values) — 3 distinct values, most often 'a'.")),
    ("page header: rows", lambda n: _text(_catalog(n), r'<div class="meta">\s*<span>(.*?)</span>'),
     ("0 rows", "1 row", "2,118 rows")),
    ("page: a rule's support", lambda n: _text(_catalog(n), r'<li data-rule-kind="sum">(.*?)</li>'),
     ("total = a + b: holds on 0 of 0 rows", "total = a + b: holds on 1 of 1 row",
      "total = a + b: holds on 2,118 of 2,118 rows")),
    ("page: an investigation's code", lambda n: _text(_catalog(n), r"<summary>(Code \(.*?\))</summary>"),
     ("Code (0 lines)", "Code (1 line)", "Code (2,118 lines)")),
    ("index header: tables", lambda n: _text(_index(n), r'<div class="meta">\s*<span>(.*?)</span>'),
     ("0 tables", "1 table", "2,118 tables")),
    ("index header: rows in all", lambda n: _text(_index(n), r'<div class="meta">\s*<span>.*?</span>\s*<span>(.*?)</span>'),
     ("0 rows in all", "1 row in all", "6,354 rows in all")),
    ("review mark: open for", lambda n: _open_for((NOW - timedelta(days=n, hours=1)).isoformat(),
                                                  now=NOW.replace(tzinfo=None)),
     ("less than a day", "1 day", "2,118 days")),
]


@pytest.mark.parametrize("n, position", [(0, 0), (1, 1), (MANY, 2)], ids=["zero", "one", "many"])
@pytest.mark.parametrize("name, build, expected", SENTENCES, ids=[s[0] for s in SENTENCES])
def test_every_sentence_reads_right_with_0_1_and_many(name, build, expected, n, position):
    assert build(n) == expected[position]


def test_the_timelapse_counts_its_runs_and_reviews():
    html = render_timelapse(database="shop", table="orders", rows=[], reviews=[], now=NOW)
    assert _text(html, r'<div class="meta">\s*<span>(.*?)</span>') == "0 runs"
    assert "<b>0</b> reviews" in html


def test_lists_and_subjects():
    assert listing([]) == "" and listing(["a"]) == "a" and listing(["a", "b"]) == "a and b"
    assert listing(["a", "b", "c"], "or") == "a, b or c"
    assert subject_verb("order_id", "identifies") == "order_id identifies"
    assert subject_verb(["order_id", "user_id"], "identifies") == "order_id and user_id identify"
    assert [verb_for(n, "has") for n in (0, 1, 2)] == ["have", "has", "have"]
    # short verbs in -ies keep their ending: "values lie far outside", never "ly"
    assert [verb_for(n, "lies") for n in (1, 4)] == ["lies", "lie"] and verb_for(2, "dies") == "die"
    assert verb_for(2, "identifies") == "identify" and verb_for(3, "varies") == "vary"
    assert noun_for(1.0, "day") == "day" and count_noun(2.5, "day") == "2.5 days"


def _sandbox_words() -> tuple[set[str], set[tuple[str, str]]]:
    """The nouns the checks count and the (singular, plural) verbs they agree, read from their source."""
    nouns, verbs = set(), set()
    for path in CHECKS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                literals = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                if node.func.id == "count" and len(literals) == 1:
                    nouns.add(literals[0])
                elif node.func.id == "verb" and len(literals) == 2:
                    verbs.add((literals[0], literals[1]))
    return nouns, verbs


def test_the_sandbox_copy_of_the_helper_says_what_the_helper_says():
    """The sandbox has no inflect; its count, verb and listing must agree with core/grammar.py for
    every noun and verb the checks use."""
    nouns, verbs = _sandbox_words()
    assert {"row", "value"} <= nouns and ("is", "are") in verbs and ("identifies", "identify") in verbs
    for n in (0, 1, MANY):
        for noun in nouns:
            assert sandbox.count(n, noun) == count_noun(n, noun, zero=None), noun
        for one, many in verbs:
            assert sandbox.verb(n, one, many) == verb_for(n, one), one
            assert verb_for(2, one) == many
    for names in (["a"], ["a", "b"], ["a", "b", "c"]):
        assert sandbox.listing(names) == grammar.listing(names)


def test_the_duplicate_key_hypothesis_agrees_with_its_columns():
    source = (CHECKS / "duplicate_keys.py").read_text()
    assert "identify a row" not in source.replace("'identify')} a row", "")
    assert "verb(len(columns), 'identifies', 'identify')" in source and "listing(columns)" in source


def test_no_generated_sentence_pluralizes_by_hand():
    """A hand-made plural ("s" if n != 1, 'is' if n == 1 else 'are') is what the helper replaces."""
    root = Path(grammar.__file__).parents[1]
    pattern = re.compile(r"""['"]s['"] if \w+ (!=|>) 1|['"]{2} if \w+ == 1 else ['"]s['"]"""
                         r"""|'(is|has|holds|breaks)' if \w+(\.\w+)? == 1|'(value|row)' if \w+ == 1""")
    places = [root / "core" / "render", root / "core" / "understanding", root / "core" / "issues" / "detectors",
              root / "core" / "fixes",
              root / "templates" / "pages"]
    found = [f"{p}:{i}" for place in places for p in sorted(place.rglob("*")) if p.suffix in (".py", ".j2")
             for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []
