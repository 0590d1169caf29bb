"""A store holding real runs of a small table, for the review tests: the first three assets
(profile, understanding, issues) materialized by Dagster, cheap (no sandbox)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from cataloger_dagster.jobs import TABLE_ASSETS
from cataloger_dagster.settings.factories import resources

ISSUE_ASSETS = TABLE_ASSETS[:3]   # table_profile, table_understanding, quality_issues


def issues_run(db: Path, store: str, table: str, instance: dg.DagsterInstance | None = None) -> list[str]:
    """Materialize `table`'s issues into `store` (a folder or s3:// URL); its issue ids."""
    res = resources(database=f"duckdb://{db}", store=store, sandbox="local")
    with (dg.instance_for_test() if instance is None else _same(instance)) as inst:
        inst.add_dynamic_partitions("tables", [table])
        result = dg.materialize(ISSUE_ASSETS, partition_key=table, instance=inst, resources=res)
    assert result.success
    return [i.id for i in result.output_for_node("quality_issues").issues]


class _same:
    def __init__(self, instance):
        self.instance = instance

    def __enter__(self):
        return self.instance

    def __exit__(self, *exc):
        return False
