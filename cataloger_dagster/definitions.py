"""The one entry point: `dagster dev -w workspace.yaml` loads `defs`."""

import dagster as dg

from cataloger_dagster.assets.catalog_index import catalog_index
from cataloger_dagster.assets.catalog_page import catalog_page
from cataloger_dagster.assets.quality_issues import quality_issues
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.assets.table_understanding import table_understanding
from cataloger_dagster.settings import resources

TABLE_ASSETS = [table_profile, table_understanding, quality_issues, catalog_page]
ALL_ASSETS = [*TABLE_ASSETS, catalog_index]

defs = dg.Definitions(assets=ALL_ASSETS, resources=resources())
