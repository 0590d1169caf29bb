"""`text.words` and `text.singular`: the one reading of names (detectors and the heuristic agent)."""

import subprocess
import sys
from pathlib import Path

import pytest

from cataloger_dagster.core.text import plural, singular, words

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name, expected", [
    ("customer_id", ["customer", "id"]),
    ("customerID", ["customer", "id"]),
    ("orderDate2", ["order", "date2"]),
    ("Unit Price ($)", ["unit", "price"]),
    ("e-mail.address", ["e", "mail", "address"]),
    ("prénom_client", ["prénom", "client"]),     # letters beyond ASCII stay in their word
    ("__", []),
    ("", []),
])
def test_words_split_every_way_names_are_written(name, expected):
    assert words(name) == expected


@pytest.mark.parametrize("name, expected", [
    ("categories", "category"),
    ("order_boxes", "order_box"),
    ("classes", "class"),
    ("orders", "order"),
    ("address", "address"),        # already singular
    ("Customers", "Customer"),     # the case is kept: callers compare in lower case
    ("order_items", "order_item"),
    ("data", "data"),
])
def test_singular(name, expected):
    assert singular(name) == expected


@pytest.mark.parametrize("noun, expected", [
    ("row", "rows"), ("category", "categories"), ("movie", "movies"), ("value", "values"), ("", ""),
])
def test_plural(noun, expected):
    assert plural(noun) == expected


def _fresh_interpreter(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_inflect_is_imported_without_typeguards_instrumentation():
    """The instrumentation recompiles inflect's functions at import, seconds in every process that
    makes a word plural: ours are imported plain, and the words come out the same."""
    probe = ("import sys; from cataloger_dagster.core import text; w = text.plural('category'); "
             "import inflect; names = inflect.engine.plural_noun.__code__.co_names; "
             "print(w, 'check_argument_types_internal' in names, 'typeguard' in sys.modules)")
    assert _fresh_interpreter(probe).split() == ["categories", "False", "False"]


def test_a_typeguard_another_package_imported_is_left_as_it_was():
    probe = ("import sys, typeguard; real = typeguard.typechecked; from cataloger_dagster.core import text; "
             "text.singular('movies'); print(sys.modules['typeguard'] is typeguard, typeguard.typechecked is real)")
    assert _fresh_interpreter(probe).split() == ["True", "True"]


def test_an_inflect_that_wants_more_of_typeguard_is_imported_plainly(tmp_path):
    (tmp_path / "inflect.py").write_text(
        "from typeguard import typechecked, TypeCheckError\n"
        "class engine:\n"
        "    @typechecked\n"
        "    def plural_noun(self, word: str) -> str:\n"
        "        return word + 's'\n")
    probe = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); from cataloger_dagster.core import text; "
             "import inflect; print(text.plural('row'), inflect.TypeCheckError.__module__)")
    assert _fresh_interpreter(probe).split() == ["rows", "typeguard"]
