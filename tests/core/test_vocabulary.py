"""`vocabulary`: the one list of placeholder words, each with its roles, and every user reading it
(the profile's sentinel count, the detectors' placeholders, the investigation checks in the
sandbox).  A second list of placeholder words anywhere in the package fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import ibis
import pytest

import cataloger_dagster
from cataloger_dagster.core import vocabulary
from cataloger_dagster.core.investigate import code
from cataloger_dagster.core.issues import text_values
from cataloger_dagster.core.profile import patterns, profiling
from cataloger_dagster.core.vocabulary import PLACEHOLDERS, Role, words

PACKAGE = Path(cataloger_dagster.__file__).resolve().parent


def test_each_word_is_written_as_values_are_compared_and_has_one_meaning():
    for word, roles in PLACEHOLDERS.items():
        assert vocabulary.normal(word) == word
        meanings = [r for r in (Role.UNKNOWN, Role.TYPED, Role.BLANK) if r in roles]
        assert len(meanings) == 1, f"{word!r}: {roles}"
        assert not set(word) & set(vocabulary.NEVER_IN_PLACEHOLDER_CHARS), word
    assert words(Role.BLANK) == ("",)


def test_none_is_a_placeholder_only_among_numbers_or_dates_but_the_profile_counts_it():
    assert "none" in vocabulary.TYPED_PLACEHOLDERS and "none" not in vocabulary.UNKNOWN_WORDS
    assert "none" in vocabulary.PROFILED_WORDS
    assert not text_values.is_placeholder("None", "damage")
    assert text_values.is_placeholder("None", "price", typed=True)


def test_the_profile_counts_the_profiled_words_and_nothing_else():
    assert profiling.SENTINELS == vocabulary.PROFILED_WORDS
    assert set(vocabulary.PROFILED_WORDS) == {"na", "n/a", "null", "none", "-", "?", "nan", "", "missing",
                                              "unknown"}
    values = [*vocabulary.PROFILED_WORDS, " N/A ", "NULL", "nil", "tbd", "#N/A", "Paris"]
    t = ibis.memtable({"s": values})
    counted = t.aggregate(n=patterns.pattern_exprs(t.s)["sentinel"].sum()).to_pyarrow().to_pylist()[0]["n"]
    assert counted == len(vocabulary.PROFILED_WORDS) + 2     # ' N/A ' and 'NULL' too, not the rarer words


def test_the_detectors_take_every_unknown_word_and_runs_of_a_mark():
    for word in vocabulary.UNKNOWN_WORDS:
        assert text_values.is_placeholder(word.upper()), word
    for value in ("---", "...", "???", "  N/A ", "Not  Available"):
        assert text_values.is_placeholder(value), value
    for value in ("", "-?", "n/a/", "none", "0000-00-00", "Paris", "not"):
        assert not text_values.is_placeholder(value), value
    for value in vocabulary.TYPED_PLACEHOLDERS:
        assert text_values.is_placeholder(value, typed=True) and not text_values.is_placeholder(value)
    assert not text_values.is_placeholder("NA", "country_code")   # Namibia


def _sandbox_helpers() -> dict:
    """The helpers block the session script carries, run as the sandbox runs it."""
    namespace: dict = {"ibis": ibis}
    exec(compile(code.helpers_block(), "helpers", "exec"), namespace)
    return namespace


def test_the_sandbox_reads_the_same_vocabulary_from_literals():
    helpers = _sandbox_helpers()
    assert helpers["UNKNOWN_WORDS"] == vocabulary.UNKNOWN_WORDS
    assert helpers["TYPED_PLACEHOLDERS"] == vocabulary.TYPED_PLACEHOLDERS
    assert helpers["PLACEHOLDER_MARKS"] == vocabulary.PLACEHOLDER_MARKS
    samples = [*PLACEHOLDERS, *(w.upper() for w in PLACEHOLDERS), "---", "..", "?!", "Paris", "n a", " Nil "]
    for value in samples:
        for typed in (False, True):
            assert helpers["is_placeholder"](value, typed) == text_values.is_placeholder(value, typed=typed), value


def test_the_format_check_leaves_aside_every_placeholder_word():
    assert set(code.STRING_SENTINELS) == set(vocabulary.UNKNOWN_WORDS) | set(vocabulary.TYPED_PLACEHOLDERS)


# --------------------------------------------------------------------------
# one list: the package's source holds no second one
# --------------------------------------------------------------------------


def string_collections(tree: ast.AST) -> list[tuple[int, list[str]]]:
    """(line, strings) of every tuple, list or set literal with string items, and of every
    `|`-separated string (a regex's alternatives)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if items:
                found.append((node.lineno, items))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "|" in node.value:
            found.append((node.lineno, re.split(r"[|()^$]+|\?:", node.value)))
    return found


def package_literals(exempt: set[str]):
    """(file relative to the package, line, strings) of every string collection of the package's
    source, the `exempt` files left out."""
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in exempt:
            continue
        for line, items in string_collections(ast.parse(path.read_text(), str(path))):
            yield relative, line, items


# words common enough in code for other reasons ('-' and '?' as operators, "none" as a setting,
# "" as a default) are not evidence of a list; two of the others are
_TELLING = {w for w in PLACEHOLDERS if len(w) > 1 and w != "none"}


def placeholder_lists(items: list[str]) -> set[str]:
    return {vocabulary.normal(i) for i in items} & _TELLING


def test_the_scan_finds_a_list_of_placeholder_words_in_any_form():
    source = ('A = ("na", "n/a", "null")\nB = {"NULL", "Missing"}\nC = [x, "tbd", "nil"]\n'
              'D = r"^(?:n/a|unknown|nan)$"\nE = ("none", "all")\nF = ("-", "?")\nG = "null"\n')
    flagged = [line for line, items in string_collections(ast.parse(source)) if len(placeholder_lists(items)) >= 2]
    assert flagged == [1, 2, 3, 4]


# files that may spell placeholder words, and why
EXEMPT = {
    "core/vocabulary.py": "the one definition",
    "demo/spec.py": "the values the demo database plants, spelled as its data holds them",
}


def test_no_second_list_of_placeholder_words():
    found = [f"{file}:{line}: {sorted(placeholder_lists(items))}"
             for file, line, items in package_literals(set(EXEMPT))
             if len(placeholder_lists(items)) >= 2]
    assert not found, ("placeholder words listed outside core/vocabulary.py (take them from there, "
                       "by role):\n" + "\n".join(found))


def test_the_demo_plants_placeholders_of_the_vocabulary():
    from cataloger_dagster.demo import spec

    assert all(text_values.is_placeholder(value, "city") for value in spec.STRING_SENTINELS)


@pytest.mark.parametrize("role", [Role.UNKNOWN, Role.TYPED, Role.PROFILED])
def test_every_role_names_words(role):
    assert words(role)
