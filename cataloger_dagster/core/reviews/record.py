"""Recording a review: the one piece that `cataloger review`, the `review_issue` job and
the command shown on each catalog page all go through, so the three land in one log alike.

The store is any `CatalogStore`, typed as core/store.py's `Store` (the core does not import resources).
"""

from __future__ import annotations

import getpass
import os
import shlex
from typing import Optional, cast

from cataloger_dagster.core.layout import ISSUES, table_prefix
from cataloger_dagster.core.models import AnalysisResultModel, IssueModel, TableProfile
from cataloger_dagster.core.reviews.model import REVIEW_VERDICTS, Review, ReviewVerdict, snapshot_of
from cataloger_dagster.core.store import Store
from cataloger_dagster.core.results import load_run

NOTE_LIMIT = 2000  # characters: a reason, not a document; longer is refused, never cut
REVIEWER_LIMIT = 200


class ReviewError(ValueError):
    """A review cannot be recorded; the message names the table or issue and what to do."""


def default_reviewer(setting: Optional[str] = None) -> str:
    """Who reviews when no name is given: the setting (CATALOGER_REVIEWER), else the OS user."""
    if setting and setting.strip():
        return setting.strip()
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry (some containers)
        user = ""
    return user.strip() or f"uid-{os.getuid()}"


def reviewable(issues: AnalysisResultModel) -> list[IssueModel]:
    """Every finding of a run a person may review: those raised, and those the run set aside
    by earlier reviews (``reviewed``, ``quieted``), so that a verdict can be changed."""
    return [*issues.issues, *issues.reviewed, *issues.quieted]


def latest_issues(store: Store, database: str, table: str) -> tuple[str, AnalysisResultModel, Optional[TableProfile]]:
    """(timestamp, issues, profile) of the table's latest run that holds issues.json."""
    prefix = table_prefix(database, table)
    runs = store.list_runs(prefix)
    for timestamp in reversed(runs):
        run = load_run(store, prefix, timestamp)
        if run.issues is None:
            continue
        return timestamp, run.issues, run.profile
    what = f"{len(runs)} run(s) but none with {ISSUES}" if runs else "no run"
    raise ReviewError(
        f"table {table!r} of database {database!r} has {what} in {store.describe()}: catalog it first "
        f"(`cataloger run --table {shlex.quote(table)}` or materialize its partition), or check the store and database"
    )


def record_review(
    store: Store,
    database: str,
    table: str,
    issue_id: str,
    verdict: str,
    note: str = "",
    reviewer: Optional[str] = None,
    *,
    via: Optional[str] = None,
) -> tuple[Review, str]:
    """Append one review of ``issue_id`` (an issue of the table's latest run) to the table's
    log; returns the review and where it was written.  ``reviewer`` None or blank: the OS user."""
    if verdict not in REVIEW_VERDICTS:
        raise ReviewError(f"verdict {verdict!r} is not one of {', '.join(REVIEW_VERDICTS)}")
    note = note or ""
    if len(note) > NOTE_LIMIT:
        raise ReviewError(
            f"the note on issue {issue_id!r} of table {table!r} has {len(note):,} characters; "
            f"keep it to {NOTE_LIMIT:,} (link to a longer text instead)"
        )
    name = (reviewer or "").strip() or default_reviewer()
    if len(name) > REVIEWER_LIMIT:
        raise ReviewError(f"the reviewer name has {len(name):,} characters; keep it to {REVIEWER_LIMIT}")
    timestamp, issues, profile = latest_issues(store, database, table)
    findings = reviewable(issues)
    issue = next((i for i in findings if i.id == issue_id), None)
    if issue is None:
        known = ", ".join(repr(i.id) for i in findings) or "none (the run found no issue)"
        raise ReviewError(
            f"table {table!r} has no issue {issue_id!r} in its latest run ({timestamp}); known issue ids: {known}"
        )
    review = Review(
        table=table,
        issue_id=issue_id,
        verdict=cast(ReviewVerdict, verdict),
        note=note,
        reviewer=name,
        run=timestamp,
        issue=snapshot_of(issue, profile),
        via=via,
    )
    return review, store.append_review(table_prefix(database, table), review)
