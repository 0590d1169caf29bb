"""The job that catalogs one table: every per-table asset, for one partition of `tables`.

Its partitioning comes from the assets (all partitioned by `tables`).

The sensors and the schedule target it by name, so this module needs no list of
assets of its own: definitions.py passes its TABLE_ASSETS, the one list there is.
"""

from __future__ import annotations

from typing import Sequence

import dagster as dg

CATALOG_TABLE_JOB = "catalog_table"


def build_catalog_table_job(table_assets: Sequence[dg.AssetsDefinition]) -> dg.UnresolvedAssetJobDefinition:
    return dg.define_asset_job(
        CATALOG_TABLE_JOB,
        selection=dg.AssetSelection.assets(*table_assets),
        description="Profile, understand, check and page one table (one partition of `tables`).",
    )
