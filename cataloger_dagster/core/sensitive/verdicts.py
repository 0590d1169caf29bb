"""Recording a person's verdict on a column's class of personal data: `cataloger review TABLE
COLUMN --not-personal [--class KEY]` or `--personal KEY`.  Kept in the table's review log beside
the verdicts on findings, and applied by the next classification (teaching.py)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Optional, cast

from cataloger_dagster.core.layout import PROFILE, table_prefix
from cataloger_dagster.core.models import ColumnProfile, TableProfile
from cataloger_dagster.core.results import load_run
from cataloger_dagster.core.reviews.model import CLASS_VERDICTS, ClassVerdict, Review, class_review_id
from cataloger_dagster.core.reviews.record import NOTE_LIMIT, ReviewError, default_reviewer
from cataloger_dagster.core.sensitive.classes import KEYS
from cataloger_dagster.core.sensitive.teaching import snapshot
from cataloger_dagster.core.store import Store


def latest_profile(store: Store, database: str, table: str) -> tuple[str, TableProfile]:
    """(timestamp, profile) of the table's latest run that holds a profile."""
    prefix = table_prefix(database, table)
    runs = store.list_runs(prefix)
    for timestamp in reversed(runs):
        profile = load_run(store, prefix, timestamp).profile
        if profile is not None:
            return timestamp, profile
    what = f"{len(runs)} run(s) but none with {PROFILE}" if runs else "no run"
    raise ReviewError(
        f"table {table!r} of database {database!r} has {what} in {store.describe()}: catalog it first "
        f"(`cataloger run --table {shlex.quote(table)}` or materialize its partition), or check the store and database"
    )


def _column(profile: TableProfile, table: str, column: str) -> ColumnProfile:
    found = next((c for c in profile.columns if c.name == column), None)
    if found is None:
        known = ", ".join(repr(c.name) for c in profile.columns[:30])
        raise ReviewError(f"table {table!r} has no column {column!r} in its latest profile; its columns: {known}")
    return found


@dataclass(frozen=True)
class ClassReview:
    """A person's verdict on a column's class: "personal" names the class it holds; "not_personal"
    refutes `data_class`, or without one each class the column holds now."""

    table: str
    column: str
    verdict: str
    data_class: Optional[str] = None
    note: str = ""
    reviewer: Optional[str] = None
    via: Optional[str] = None  # where it was said ("cli")


def record_class_review(store: Store, database: str, said: ClassReview) -> list[tuple[Review, str]]:
    """Append the verdict to the table's review log, one review per class; returns each review and
    where it was written."""
    table, column, verdict, data_class = said.table, said.column, said.verdict, said.data_class
    note, reviewer, via = said.note, said.reviewer, said.via
    if verdict not in CLASS_VERDICTS:
        raise ReviewError(f"verdict {verdict!r} is not one of {', '.join(CLASS_VERDICTS)}")
    if data_class is not None and data_class not in KEYS:
        raise ReviewError(f"class {data_class!r} is not one of {', '.join(KEYS)}")
    if verdict == "personal" and data_class is None:
        raise ReviewError(f"say which class column {column!r} of table {table!r} holds: one of {', '.join(KEYS)}")
    if len(note or "") > NOTE_LIMIT:
        raise ReviewError(
            f"the note on column {column!r} of table {table!r} has {len(note):,} characters; keep it to {NOTE_LIMIT:,}"
        )
    timestamp, profile = latest_profile(store, database, table)
    col = _column(profile, table, column)
    classes = [data_class] if data_class is not None else [c.name for c in col.sensitive]
    if not classes:
        raise ReviewError(
            f"column {column!r} of table {table!r} holds no class of personal data in its latest run ({timestamp}); "
            f"give --class to refute one anyway"
        )
    name = (reviewer or "").strip() or default_reviewer()
    written = []
    for key in classes:
        review = Review(
            table=table,
            issue_id=class_review_id(key, column),
            verdict=cast(ClassVerdict, verdict),
            note=note or "",
            reviewer=name,
            run=timestamp,
            data_class=snapshot(col, key),
            via=via,
        )
        written.append((review, store.append_review(table_prefix(database, table), review)))
    return written
