"""People's reviews of the classifier's classes, applied to the next classification.

- "not personal" on a column's class stops that class on that column: the column no longer carries
  it, so its values are no longer masked in the profile, the pages or what the model reads (only
  the values that prove their class, an e-mail or a card, are still scrubbed from whatever is
  stored).  That is the trade-off a reviewer makes: say it only of a column whose values may leave.
- "personal" on a class the classifier missed adds it (its masking starts); on one it found, marks
  it confirmed.
- Every review of the database also teaches the class's precision on similar columns: the same
  class, the same kind of column, and a name that points at the class or not.  Once people refuted
  a class `DEFAULT_REFUTALS` times or more on such columns and confirmed it less often than they
  refuted it, an unreviewed similar column keeps the class only when nearly all of its sampled
  values (`STRICT_SHARE`) hold it.  Masking less is the cost of that learning, as with a verdict.

A reviewed column's own verdict always outranks what similar columns taught.  All of it is a
function of the profile and the store's review logs, applied before the profile's values are
masked, so every later stage sees one classification.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from cataloger_dagster.core.models import ColumnProfile, SensitiveClass, TableProfile
from cataloger_dagster.core.reviews.model import ClassSnapshot, Review, latest_reviews
from cataloger_dagster.core.sensitive.classes import label
from cataloger_dagster.core.sensitive.signals import name_classes

DEFAULT_REFUTALS = 3
STRICT_SHARE = 0.95


def similar_key(data_class: str, kind: str, named: bool) -> str:
    """What makes two columns "similar" for a class's precision: never a table or column name."""
    return f"{data_class}|{kind}|{'named' if named else 'unnamed'}"


def snapshot(column: ColumnProfile, data_class: str) -> ClassSnapshot:
    """The class of ``column`` as a review records it."""
    found = next((c for c in column.sensitive if c.name == data_class), None)
    return ClassSnapshot(
        column=column.name,
        data_class=data_class,
        kind=column.kind,
        named=data_class in name_classes(column.name),
        found=found is not None and found.source == "classifier",
        share=found.share if found is not None else None,
    )


@dataclass(frozen=True)
class Precision:
    confirmed: int = 0
    refuted: int = 0

    @property
    def value(self) -> Optional[float]:
        total = self.confirmed + self.refuted
        return self.confirmed / total if total else None


def class_precision(logs: Mapping[str, Iterable[Review]]) -> dict[str, Precision]:
    """{similar key: confirmations and refutals} over every table's log (each column's class
    counted once, by its latest verdict); a verdict on a class the classifier had not given the
    column (a miss added, a class refuted before it was found) says nothing of its precision."""
    counts: Counter = Counter()
    for reviews in logs.values():
        for review in latest_reviews(reviews).values():
            snap = review.data_class
            if snap is None or not snap.found:
                continue
            key = similar_key(snap.data_class, snap.kind, snap.named)
            counts[(key, "refuted" if review.verdict == "not_personal" else "confirmed")] += 1
    keys = {k for k, _ in counts}
    return {k: Precision(counts[(k, "confirmed")], counts[(k, "refuted")]) for k in keys}


@dataclass(frozen=True)
class Teaching:
    """What the store says about a table's classes before they are decided."""

    reviews: list[Review] = field(default_factory=list)  # this table's log, oldest first
    precision: dict[str, Precision] = field(default_factory=dict)  # the database's, by similar key
    refutals: int = DEFAULT_REFUTALS

    def verdicts(self) -> dict[str, dict[str, Review]]:
        """{column: {class: its latest review}} of this table."""
        out: dict[str, dict[str, Review]] = {}
        for review in latest_reviews(self.reviews).values():
            if review.data_class is not None:
                out.setdefault(review.data_class.column, {})[review.data_class.data_class] = review
        return out


def taught(profile: TableProfile, teaching: Optional[Teaching]) -> TableProfile:
    """The profile with people's verdicts and the learned precision applied to its classes."""
    if teaching is None or not (teaching.reviews or teaching.precision):
        return profile
    verdicts = teaching.verdicts()
    out = profile.model_copy(deep=True)
    for column in out.columns:
        _teach_column(column, verdicts.get(column.name, {}), teaching)
    return out


def _teach_column(column: ColumnProfile, verdicts: dict[str, Review], teaching: Teaching) -> None:
    kept: list[SensitiveClass] = []
    for found in column.sensitive:
        review = verdicts.get(found.name)
        if review is not None:
            if review.verdict == "not_personal":
                column.notes.append(f"not {label(found.name)}: {_by(review)} said it is not personal data")
                continue
            kept.append(_confirmed(found, review))
            continue
        strict = _strict(column, found.name, teaching)
        if strict is not None and found.share < STRICT_SHARE:
            column.notes.append(
                f"not {label(found.name)}: {found.share:.0%} of the sample held it, and on similar columns "
                f"{strict} (so {STRICT_SHARE:.0%} is needed)"
            )
            continue
        kept.append(found)
    have = {c.name for c in column.sensitive}
    for key, review in verdicts.items():
        if review.verdict == "personal" and key not in have:
            kept.append(
                SensitiveClass(
                    name=key,
                    share=0.0,
                    sampled=0,
                    matched=0,
                    signals=[f"{_by(review)} said it is personal data"],
                    source="review",
                    reviewed=True,
                )
            )
    column.sensitive = kept


def _by(review: Review) -> str:
    return f"reviewed by {review.reviewer} on {review.at[:10]}"


def _confirmed(found: SensitiveClass, review: Review) -> SensitiveClass:
    return found.model_copy(update={"reviewed": True, "signals": [*found.signals, f"confirmed: {_by(review)}"]})


def _strict(column: ColumnProfile, key: str, teaching: Teaching) -> Optional[str]:
    """Why a stricter share applies to ``key`` on ``column`` (None: it does not)."""
    if teaching.refutals <= 0:
        return None
    learned = teaching.precision.get(similar_key(key, column.kind, key in name_classes(column.name)))
    if learned is None or learned.refuted < teaching.refutals or learned.confirmed >= learned.refuted:
        return None
    return f"people refuted it {learned.refuted} times and confirmed it {learned.confirmed}"
