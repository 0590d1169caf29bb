"""Where personal data lives: each column of the database holding a class about a person, with
the share of its sample that held it and whether a person confirmed it.  One list read by the
index page (its section and its filter) and by `cataloger sensitive`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Optional

from cataloger_dagster.core.models import ColumnProfile
from cataloger_dagster.core.sensitive.classes import BY_KEY, label


@dataclass(frozen=True)
class PersonalColumn:
    table: str
    column: str
    classes: tuple[str, ...]  # keys of core/sensitive/classes.py, about a person
    share: Optional[float]  # the highest share of the sample holding one; None: only a review says so
    reviewed: bool  # a person said it holds personal data (confirmed or added a class)
    # what the investigation of its classes said: "confirmed" when one of them was, "inconclusive"
    # when none was and one could not be settled, None when none was investigated
    verdict: Optional[str] = None
    refuted: tuple[str, ...] = ()  # classes its investigation refuted: left out of `classes`

    @property
    def labels(self) -> str:
        return ", ".join(label(k) for k in self.classes)

    def as_json(self) -> dict:
        return asdict(self)


def personal_column(table: str, column: ColumnProfile) -> Optional[PersonalColumn]:
    """The column's row of the list, or None when it holds nothing about a person (a secret is
    sensitive, not personal).  A column whose every class about a person was refuted by its
    investigation has a row with no classes: `where_personal_data` leaves it out."""
    personal = [c for c in column.sensitive if c.name in BY_KEY and BY_KEY[c.name].personal]
    if not personal:
        return None
    held = [c for c in personal if c.verdict != "refuted"]
    found = [c.share for c in held if c.source == "classifier"]
    verdicts = {c.verdict for c in held}
    return PersonalColumn(
        table=table,
        column=column.name,
        classes=tuple(c.name for c in held),
        share=max(found) if found else None,
        reviewed=any(c.reviewed for c in held),
        verdict=next((v for v in ("confirmed", "inconclusive") if v in verdicts), None if held else "refuted"),
        refuted=tuple(c.name for c in personal if c.verdict == "refuted"),
    )


def where_personal_data(columns: Iterable[Optional[PersonalColumn]]) -> list[PersonalColumn]:
    """The list, by table then column (a column whose classes were all refuted is not on it)."""
    return sorted((c for c in columns if c is not None and c.classes), key=lambda c: (c.table, c.column))


def refuted_by_investigation(columns: Iterable[Optional[PersonalColumn]]) -> list[PersonalColumn]:
    """The columns the classifier took for personal data and whose investigation refuted every class."""
    return sorted((c for c in columns if c is not None and not c.classes), key=lambda c: (c.table, c.column))
