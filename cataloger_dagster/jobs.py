"""The per-table assets, and the job that catalogs one table: every per-table asset, for one partition of `tables`.

Its partitioning comes from the assets (all partitioned by `tables`).  The lists of assets
live here, with no settings, so that `cataloger run` can use them without loading the
code location (definitions.py, which reads the settings and builds the sensors).

The sensors and the schedule target the job by name.
"""

from __future__ import annotations

from typing import Sequence

import dagster as dg

from cataloger_dagster.assets.catalog_index import catalog_index
from cataloger_dagster.assets.catalog_page import catalog_page
from cataloger_dagster.assets.investigations import investigations
from cataloger_dagster.assets.quality_issues import quality_issues
from cataloger_dagster.assets.recent_summary import recent_summary
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.assets.table_understanding import table_understanding

CATALOG_TABLE_JOB = "catalog_table"

TABLE_ASSETS = [table_profile, table_understanding, quality_issues, investigations, recent_summary, catalog_page]
ALL_ASSETS = [*TABLE_ASSETS, catalog_index]


def build_catalog_table_job(table_assets: Sequence[dg.AssetsDefinition]) -> dg.UnresolvedAssetJobDefinition:
    return dg.define_asset_job(
        CATALOG_TABLE_JOB,
        selection=dg.AssetSelection.assets(*table_assets),
        description="Profile, understand, check and page one table (one partition of `tables`).",
    )
