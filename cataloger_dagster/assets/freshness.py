"""Freshness and volume asset checks per `tables` partition, in Dagster's terms.

- `catalog_is_fresh` (quality_issues, WARN): the partition's table was profiled within
  CATALOGER_FRESHNESS_HOURS, and the history raised no `stale_table` (its data has not moved for
  longer than its usual interval).
- `row_count_as_expected` (quality_issues, WARN): the history raised no `volume_anomaly`; the
  result shows the row counts of the partition's recent profiles.

Dagster's own factories do not fit a dynamic partition: `build_last_update_freshness_checks`
looks at the asset's latest record across every partition (one fresh table would make all
fresh) and `build_time_partition_freshness_checks` fails on anything but time windows; an asset
`FreshnessPolicy` is likewise per asset, not per table.  So these are partitioned checks like
the others of `checks.py`, reporting under the metadata keys of Dagster's freshness checks
(`dagster/last_updated_timestamp`, `dagster/freshness_params`, ...), which the UI shows alike.
The findings themselves come from the stored history (the `history` issue types), never from a
second look at the data here.
"""

import time
from typing import Any, Optional

import dagster as dg

from cataloger_dagster.assets.checks import partitioned_check
from cataloger_dagster.assets.quality_issues import quality_issues
from cataloger_dagster.assets.table_profile import table_profile
from cataloger_dagster.core.models import AnalysisResultModel, IssueModel
from cataloger_dagster.core.shown import markdown_text
from cataloger_dagster.settings.model import CatalogerSettings, variable

# the keys of Dagster's freshness checks (dagster/_core/definitions/asset_checks/asset_check_factories/utils.py)
LAST_UPDATED = "dagster/last_updated_timestamp"
FRESHNESS_PARAMS = "dagster/freshness_params"
LOWER_BOUND = "dagster/freshness_lower_bound_timestamp"
FRESH_UNTIL = "dagster/fresh_until_timestamp"
OVERDUE_SECONDS = "dagster/overdue_seconds"
ROW_COUNTS_SHOWN = 10


def _findings(issues: AnalysisResultModel, kind: str) -> list[IssueModel]:
    return [i for i in issues.issues if i.type == kind]


def _listed(found: list[IssueModel]) -> dg.MetadataValue:
    return dg.MetadataValue.md(
        "\n".join(f"- {markdown_text(i.id)}: {markdown_text(i.description)}" for i in found) or "none"
    )


def profiles(instance: dg.DagsterInstance, table: str, limit: int) -> list[dg.EventLogRecord]:
    """The partition's latest table_profile materializations, newest first."""
    return list(
        instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=table_profile.key, asset_partitions=[table]), limit=limit
        ).records
    )


def freshness_result(
    last_updated: Optional[float], now: float, max_age_s: float, stale: list[IssueModel]
) -> dg.AssetCheckResult:
    lower_bound = now - max_age_s
    overdue = last_updated is None or last_updated < lower_bound
    metadata: dict[str, Any] = {
        FRESHNESS_PARAMS: dg.MetadataValue.json({"lower_bound_delta_seconds": max_age_s, "timezone": "UTC"}),
        LOWER_BOUND: dg.MetadataValue.timestamp(lower_bound),
        "stale_table": _listed(stale),
    }
    if last_updated is not None:
        metadata[LAST_UPDATED] = dg.MetadataValue.timestamp(last_updated)
        metadata[FRESH_UNTIL] = dg.MetadataValue.timestamp(last_updated + max_age_s)
    if overdue:
        metadata[OVERDUE_SECONDS] = round(now - (last_updated or 0.0) - max_age_s, 1) if last_updated else 0.0
    hours = max_age_s / 3600
    if last_updated is None:
        said = "never profiled: materialize the table's partition"
    elif overdue:
        said = f"last profiled {(now - last_updated) / 3600:.1f} h ago, more than {hours:g} h"
    else:
        said = f"profiled {(now - last_updated) / 3600:.1f} h ago (at most {hours:g} h)"
    if stale:
        said += f"; its data has not moved: {stale[0].description}"
    return dg.AssetCheckResult(
        passed=not overdue and not stale, severity=dg.AssetCheckSeverity.WARN, description=said, metadata=metadata
    )


def volume_result(row_counts: list[int], anomalies: list[IssueModel]) -> dg.AssetCheckResult:
    shown = ", ".join(f"{n:,}" for n in reversed(row_counts))
    return dg.AssetCheckResult(
        passed=not anomalies,
        severity=dg.AssetCheckSeverity.WARN,
        description=anomalies[0].description
        if anomalies
        else f"row count {row_counts[0]:,} within its expected band"
        if row_counts
        else "no profile yet",
        metadata={
            "dagster/row_count": row_counts[0] if row_counts else 0,
            "recent_row_counts": shown or "none",
            "volume_anomaly": _listed(anomalies),
        },
    )


def build_freshness_checks(settings: CatalogerSettings) -> list[dg.AssetChecksDefinition]:
    max_age_s = settings.freshness_hours * 3600

    @partitioned_check(
        name="catalog_is_fresh",
        asset=quality_issues,
        description=f"The table was profiled within {variable('freshness_hours')} ({settings.freshness_hours:g} h), "
        "and its stored history shows no stale data (`stale_table`).",
    )
    def catalog_is_fresh(
        context: dg.AssetCheckExecutionContext, quality_issues: AnalysisResultModel
    ) -> dg.AssetCheckResult:
        latest = profiles(context.instance, context.partition_key, 1)
        return freshness_result(
            latest[0].timestamp if latest else None, time.time(), max_age_s, _findings(quality_issues, "stale_table")
        )

    @partitioned_check(
        name="row_count_as_expected",
        asset=quality_issues,
        description="The table's row count is within the band its stored history expects (no `volume_anomaly`).",
    )
    def row_count_as_expected(
        context: dg.AssetCheckExecutionContext, quality_issues: AnalysisResultModel
    ) -> dg.AssetCheckResult:
        counts = [
            getattr(r.asset_materialization.metadata.get("dagster/row_count"), "value", None)
            for r in profiles(context.instance, context.partition_key, ROW_COUNTS_SHOWN)
            if r.asset_materialization is not None
        ]
        return volume_result(
            [int(n) for n in counts if isinstance(n, (int, float))], _findings(quality_issues, "volume_anomaly")
        )

    return [catalog_is_fresh, row_count_as_expected]
