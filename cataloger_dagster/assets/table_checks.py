"""The catalog's findings as an asset check on each of the user's tables (`table_specs`).

`open_findings` passes when the table's latest complete catalog run left no open high-severity
finding (the refuted ones set apart, as everywhere), and says how many of each severity it left.
It reads the store when it runs, not the state the code location loaded, so that it checks the
latest run; it never queries the database.  It runs from the asset's Checks tab, or as the
`check_tables` job (for a schedule of the user's own).  A table whose results cannot be read fails
its check with the reason, and the other tables are checked all the same.
"""

from typing import Iterator, Sequence

import dagster as dg

from cataloger_dagster.assets.common import link
from cataloger_dagster.core.shown import visible
from cataloger_dagster.resources.store import CatalogStore, StoreError
from cataloger_dagster.resources.store.cataloged import UnreadableResults, cataloged

CHECK = "open_findings"
JOB = "check_tables"


def build_table_checks(specs: Sequence[dg.AssetSpec], database: str) -> list[dg.AssetChecksDefinition]:
    """One `open_findings` check per table spec, all run by one step; none without tables."""
    tables = {spec.key: spec.metadata["table"] for spec in specs}
    if not tables:
        return []

    @dg.multi_asset_check(
        name="catalog_findings",
        specs=[
            dg.AssetCheckSpec(
                CHECK,
                asset=key,
                description="passes when the table's latest catalog run left "
                "no open high-severity finding; counts its open findings by severity",
            )
            for key in tables
        ],
        can_subset=True,
    )
    def catalog_findings(context: dg.AssetCheckExecutionContext, store: CatalogStore) -> Iterator[dg.AssetCheckResult]:
        for check in sorted(context.selected_asset_check_keys, key=lambda k: k.asset_key.to_user_string()):
            yield open_findings(store, database, tables[check.asset_key], check.asset_key)

    return [catalog_findings]


def build_table_checks_job(checks: Sequence[dg.AssetChecksDefinition]) -> "list[dg.UnresolvedAssetJobDefinition]":
    if not checks:
        return []
    return [
        dg.define_asset_job(
            JOB,
            selection=dg.AssetSelection.checks(*checks),
            description="Checks each of the user's tables against its latest catalog run "
            "(reads the store, not the database).",
        )
    ]


def open_findings(store: CatalogStore, database: str, table: str, key: dg.AssetKey) -> dg.AssetCheckResult:
    try:
        entry = cataloged(store, database, table)
    except (StoreError, UnreadableResults) as e:
        return dg.AssetCheckResult(
            asset_key=key,
            check_name=CHECK,
            passed=False,
            severity=dg.AssetCheckSeverity.WARN,
            description=visible(f"the stored results of {table!r} could not be read: {e}"),
        )
    if entry is None:
        return dg.AssetCheckResult(
            asset_key=key,
            check_name=CHECK,
            passed=False,
            severity=dg.AssetCheckSeverity.WARN,
            description="the store holds no complete catalog run of this table",
        )
    counts = entry.findings_by_severity
    return dg.AssetCheckResult(
        asset_key=key,
        check_name=CHECK,
        passed=counts["high"] == 0,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"{counts['high']} high, {counts['medium']} medium, {counts['low']} low open findings",
        metadata={
            **{f"findings_{severity}": n for severity, n in counts.items()},
            "health": entry.health,
            "page": link(entry.page),
            "cataloged_at": entry.run,
        },
    )
