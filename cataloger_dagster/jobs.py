"""The per-table assets, and the job that catalogs one table: every per-table asset, for one partition of `tables`.

Its partitioning comes from the assets (all partitioned by `tables`).  The lists of assets
live here, with no settings, so that `cataloger run` can use them without loading the
code location (definitions.py, which reads the settings and builds the sensors).

The sensors and the schedule target the job by name.  `review_issue` (launched from the
launchpad) records a person's verdict on one finding, as `cataloger review` does.
"""

# no `from __future__ import annotations`: Dagster reads the op's config class from its annotation
from typing import Optional, Sequence

import dagster as dg

from cataloger_dagster.assets.catalog_index import catalog_index
from cataloger_dagster.assets.catalog_page import catalog_page
from cataloger_dagster.assets.common import link
from cataloger_dagster.assets.investigations import investigations
from cataloger_dagster.assets.quality_issues import quality_issues
from cataloger_dagster.assets.recent_summary import recent_summary
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.assets.table_understanding import table_understanding
from cataloger_dagster.core.reviews.model import ReviewVerdict
from cataloger_dagster.core.reviews.record import ReviewError, record_review
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.core.shown import visible

CATALOG_TABLE_JOB = "catalog_table"

TABLE_ASSETS = [table_profile, table_understanding, quality_issues, investigations, recent_summary, catalog_page]
ALL_ASSETS = [*TABLE_ASSETS, catalog_index]


def build_catalog_table_job(table_assets: Sequence[dg.AssetsDefinition]) -> "dg.UnresolvedAssetJobDefinition":
    return dg.define_asset_job(
        CATALOG_TABLE_JOB,
        selection=dg.AssetSelection.assets(*table_assets),
        description="Profile, understand, check and page one table (one partition of `tables`).",
    )


REVIEW_JOB = "review_issue"
REVIEW_OP = "record_review"


class ReviewIssueConfig(dg.Config):
    """One review, as the launchpad shows it (the catalog page prints it ready to paste)."""

    table: str
    issue_id: str
    verdict: ReviewVerdict
    note: str = ""
    reviewer: Optional[str] = None  # default: CATALOGER_REVIEWER of the code location, else its OS user


def build_review_job(default_reviewer: Optional[str] = None) -> dg.JobDefinition:
    """The `review_issue` job; ``default_reviewer`` is the settings' reviewer."""

    @dg.op(name=REVIEW_OP, description="Append a review of one issue to its table's review log.")
    def record(
        context: dg.OpExecutionContext, config: ReviewIssueConfig, database: DatabaseResource, store: CatalogStore
    ) -> None:
        try:
            review, uri = record_review(
                store,
                database.database_name,
                config.table,
                config.issue_id,
                config.verdict,
                config.note,
                config.reviewer or default_reviewer,
                via=f"dagster run {context.run_id}",
            )
        except ReviewError as exc:
            raise dg.Failure(description=str(exc)) from None
        context.log.info(visible(f"{review.reviewer}: {review.verdict} on {review.issue_id!r} of {review.table!r}"))
        context.log_event(
            dg.AssetObservation(
                asset_key="catalog_page",
                partition=config.table,
                metadata={
                    "review": f"{review.verdict}: {review.issue_id}",
                    "reviewer": review.reviewer,
                    "review_log_entry": link(uri),
                },
            )
        )

    @dg.job(
        name=REVIEW_JOB,
        description="Accept, dismiss or mark 'expected' one finding of a table: "
        "the next run remembers.  The catalog page shows the run config of each issue.",
    )
    def review_issue() -> None:
        record()

    return review_issue
