"""`codegen`: names and values reach generated code only as literals, comments only as plain ASCII,
and code is split into lines where Python splits it, so no name becomes code."""

import ast
import enum
import math
from decimal import Decimal

import pytest

from cataloger_dagster.core.investigate.codegen import (
    SCRIPT_HEADER,
    comment_id,
    comment_text,
    is_comment_id,
    literal,
    python_lines,
)

from hostile_names import HOSTILE, PAYLOAD


@pytest.mark.parametrize("value", HOSTILE + [["a", ("b",), {"k\n": [1, 2.5, None, True]}], (), 7])
def test_literal_is_one_line_that_evaluates_to_the_value(value):
    text = literal(value)
    assert "\n" not in text and "\r" not in text and text.isprintable()
    assert ast.literal_eval(text) == value


def test_literal_of_non_finite_floats_and_refusals():
    assert math.isnan(eval(literal(float("nan")))) and eval(literal(float("-inf"))) == -math.inf
    with pytest.raises(TypeError, match="no literal"):
        literal(object())


def test_comment_id_is_plain_ascii_and_tells_ids_apart():
    assert comment_id("events_missing_values_page") == "events_missing_values_page"
    made = [comment_id(f"t_missing_values_{h}") for h in HOSTILE]
    assert len(set(made)) == len(made)
    for m in made:
        assert m.isascii() and all(c.isalnum() or c in "_.-" for c in m), m
    assert comment_id("a\nb") == comment_id("a\nb") != comment_id("a\rb")
    assert comment_id("a" * 200) != comment_id("a" * 201) and len(comment_id("a" * 200)) < 80


def test_comment_text_escapes_every_line_break():
    text = comment_text("NameError: x\r\x0cy\u2028z\n" + PAYLOAD)
    assert text.isascii() and text.isprintable() and "\\u2028" in text and "\\r" in text


# --------------------------------------------------------------------------
# literal: the exact types it writes
# --------------------------------------------------------------------------


class Colour(enum.StrEnum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Ratio(float):
    def __repr__(self) -> str:
        return "Ratio(?)"


def test_literal_writes_subclasses_as_their_base_type():
    # an enum member's repr (<Colour.RED: 'red'>) is no Python literal: it must come out as the plain value
    assert literal(Colour.RED) == "'red'" and ast.literal_eval(literal(Colour.RED)) == "red"
    assert literal(Level.HIGH) == "3" and literal(Ratio(0.25)) == "0.25"
    assert literal([Colour.RED, {Level.HIGH: Colour.RED}]) == "['red', {3: 'red'}]"


def test_literal_keeps_bools_none_and_tuple_shapes():
    # bool is an int subclass: it must stay True, not become 1
    assert literal(True) == "True" and literal(False) == "False" and literal(None) == "None"
    assert literal(("x",)) == "('x',)" and isinstance(ast.literal_eval(literal(("x",))), tuple)
    assert literal(()) == "()" and literal([]) == "[]" and literal({}) == "{}"
    assert eval(literal(float("inf"))) == math.inf
    # dict order is kept: checks receive their groups in the order the detector found them
    assert list(ast.literal_eval(literal({"b": 1, "a": 2}))) == ["b", "a"]


@pytest.mark.parametrize("value", [Decimal("1.5"), b"bytes", {1, 2}, [object()], {"k": b"v"}])
def test_literal_refuses_what_it_cannot_write_exactly(value):
    with pytest.raises(TypeError, match="no literal"):
        literal(value)


# --------------------------------------------------------------------------
# comments
# --------------------------------------------------------------------------


@pytest.mark.parametrize("text, plain", [
    ("events_missing_values_page", True), ("a.b-c_1", True), ("", False), ("a b", False),
    ("é", False), ("a\nb", False), ("a#b", False), ("a/b", False),
])
def test_is_comment_id_accepts_only_the_plain_alphabet(text, plain):
    assert is_comment_id(text) is plain


def test_comment_id_keeps_the_readable_part_and_respects_the_limit():
    made = comment_id("orders missing é")
    # the readable part first, so a reader still recognises the id
    assert made.startswith("orders_missing__") and is_comment_id(made)
    assert comment_id("a" * 60) == "a" * 60           # at the limit: kept as it is
    assert comment_id("a" * 61) != "a" * 61 and is_comment_id(comment_id("a" * 61))
    assert len(comment_id("x" * 500, limit=10)) == 10 + 1 + 8
    # a lone surrogate (possible in a name read from a database) is hashed, not an error
    assert is_comment_id(comment_id("bad\ud800"))
    assert comment_id("bad\ud800") != comment_id("bad\ud801")


def test_comment_text_keeps_printable_ascii_and_cuts_long_text():
    assert comment_text("ValueError: no such column 'x'") == "ValueError: no such column 'x'"
    assert comment_text("a\tb") == "a\\tb" and comment_text("é") == "\\xe9"
    cut = comment_text("y" * 50, limit=10)
    assert cut == "y" * 10 + "..."
    assert comment_text("y" * 10, limit=10) == "y" * 10


# --------------------------------------------------------------------------
# reading code back
# --------------------------------------------------------------------------


def test_python_lines_break_only_where_python_does():
    code = "a = 1\nb = 2\r\nc = 3\rd = '\x0c\u2028\x85\x1c'"
    lines = python_lines(code)
    assert lines == ["a = 1", "b = 2", "c = 3", "d = '\x0c\u2028\x85\x1c'"]
    # str.splitlines would have broken the string literal apart
    assert len(code.splitlines()) > len(lines)
    # Python's parser agrees: each assignment sits on the line python_lines gives it
    tree = ast.parse(code)
    assert [(n.lineno, n.targets[0].id) for n in tree.body] == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]


def test_script_header_is_one_comment_line():
    assert python_lines(SCRIPT_HEADER) == [SCRIPT_HEADER]
    assert SCRIPT_HEADER.startswith("# ") and SCRIPT_HEADER.isascii() and "format 2" in SCRIPT_HEADER
