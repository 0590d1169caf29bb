"""Words of generated sentences: where a count meets its noun and a subject its verb.

Every sentence the package writes for a reader (pages, the heuristic understanding, issue
descriptions, fix prompts) takes its plurals and its verb agreement from here, so that
"0 rows", "1 rows" and "order_id identify a row" cannot be written.  inflect does the English.
"""

from __future__ import annotations

from collections.abc import Iterable, Sized

from cataloger_dagster.core.text import english

__all__ = ["count_noun", "noun_for", "verb_for", "listing", "subject_verb"]


def noun_for(n: int | float, noun: str) -> str:
    """The noun in the number a count of ``n`` wants: ``(1, "row") -> "row"``, ``(0, "row") -> "rows"``."""
    return noun if n == 1 else english().plural_noun(noun)


def count_noun(n: int | float, noun: str, *, zero: str | None = "no") -> str:
    """A count with its noun: ``(0, "row") -> "no rows"``, ``(1, "row") -> "1 row"``,
    ``(2118, "row") -> "2,118 rows"``.  ``zero=None`` writes a zero as the digit ("0 rows"), for a
    sentence where "no" would not read ("its 0 columns")."""
    if n == 0 and zero:
        return f"{zero} {noun_for(0, noun)}"
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    number = f"{n:,}" if isinstance(n, int) else f"{n:,g}"
    return f"{number} {noun_for(n, noun)}"


def _how_many(subject: int | float | Sized | str) -> int | float:
    if isinstance(subject, str):
        return 1
    if isinstance(subject, Sized):
        return len(subject)
    return subject


def verb_for(subject: int | float | Sized | str, verb: str) -> str:
    """The verb (given as with one subject: "identifies", "is", "has") agreeing with a count or
    a collection of subjects: ``(1, "is") -> "is"``, ``(["a", "b"], "identifies") -> "identify"``.
    Zero takes the plural, as in "no rows are"."""
    if _how_many(subject) == 1:
        return verb
    if len(verb) == 4 and verb.endswith("ies"):
        return verb[:-1]  # "lies" -> "lie", "dies" -> "die": inflect writes "ly", "dy"
    return english().plural_verb(verb)


def listing(items: Iterable[object], conj: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``: names in a sentence (no serial comma)."""
    words = [str(i) for i in items]
    if len(words) <= 1:
        return "".join(words)
    return english().join(words, conj=conj, final_sep="")


def subject_verb(subjects: Iterable[object] | str, verb: str, conj: str = "and") -> str:
    """Subjects and their verb: ``("order_id", "identifies") -> "order_id identifies"``,
    ``(["order_id", "user_id"], "identifies") -> "order_id and user_id identify"``."""
    names = [subjects] if isinstance(subjects, str) else [str(s) for s in subjects]
    return f"{listing(names, conj)} {verb_for(names, verb)}"
