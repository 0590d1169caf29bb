"""Names as words: one reading of column and table names for the detectors and the agent."""

from __future__ import annotations

import functools
import re
import sys
import types

_LAST_WORD = re.compile(r"[A-Za-z]+$")
_MASS_NOUNS = {"data", "metadata", "media"}  # a table of data holds data, not one datum

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SEPARATORS = re.compile(r"[\W_]+")  # \W is Unicode-aware: "prénom" stays one word


def words(name: str) -> list[str]:
    """The lower-case words of a name, in order: ``"customerID_2"`` -> ``["customer", "id", "2"]``;
    camelCase, underscores, spaces and punctuation all separate words."""
    return [w for w in _SEPARATORS.split(_CAMEL.sub(r"\1_\2", name).lower()) if w]


def singular(name: str) -> str:
    """A plural name's last word made singular by inflect, the rest kept as given:
    ``movies`` -> ``movie``, ``categories`` -> ``category``, ``order_boxes`` -> ``order_box``,
    ``species`` stays ``species``; a word inflect does not know as a plural (``address``,
    ``status``, ``analysis``) is kept."""
    match = _LAST_WORD.search(name)
    if not match:
        return name
    word = match.group(0)
    if word.lower().endswith(("ss", "is", "us")) or word.lower() in _MASS_NOUNS:
        return name
    one = _inflect().singular_noun(word)
    return name[: match.start()] + one if one else name


def plural(noun: str) -> str:
    """``row`` -> ``rows``, ``category`` -> ``categories``, ``movie`` -> ``movies``."""
    return _inflect().plural_noun(noun) if noun else noun


def english():
    """inflect's engine, for the sentence helpers of core/grammar.py."""
    return _inflect()


@functools.cache
def _inflect():
    # imported on first use: most processes that load the code location (sensors, the
    # webserver, most steps) never make a word plural
    return _import_inflect().engine()


def _import_inflect() -> types.ModuleType:
    """inflect, without typeguard's instrumentation of its functions.

    inflect 7 decorates its functions with typeguard's ``@typechecked``, which recompiles each
    of them from source as the module is imported: 2 to 3 s in every process that makes a word
    plural (jaraco/inflect#212, open).  Those checks only reject arguments that are not
    non-empty strings, which ours never are (``plural`` and ``singular`` pass non-empty words),
    so the import sees a ``typechecked`` that returns the function as it is.  typeguard's own
    module, where another package has imported it, is put back at once."""
    if "inflect" in sys.modules:
        return sys.modules["inflect"]
    stand_in = types.ModuleType("typeguard")
    stand_in.typechecked = _unchecked  # type: ignore[attr-defined]
    real = sys.modules.get("typeguard")
    sys.modules["typeguard"] = stand_in
    module: types.ModuleType | None
    try:
        import inflect as module
    except ImportError:  # an inflect that wants more of typeguard: the plain, slower import
        sys.modules.pop("inflect", None)
        module = None
    finally:
        if real is None:
            del sys.modules["typeguard"]
        else:
            sys.modules["typeguard"] = real
    if module is None:
        import inflect

        module = inflect
    return module


def _unchecked(target=None, **_options):
    """``@typechecked`` and ``@typechecked(...)``, both returning the function unchanged."""
    return target if target is not None else (lambda function: function)
