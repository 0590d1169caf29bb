import dagster as dg

from cataloger_dagster.assets.common import GROUP, OWNERS, TableRun, link
from cataloger_dagster.assets.metadata import column_schema, usage_metadata
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.core.layout import UNDERSTANDING
from cataloger_dagster.core.models import DatasetUnderstandingModel, TableProfile
from cataloger_dagster.resources.agent import AgentResource, AgentUsage
from cataloger_dagster.resources.database import DatabaseResource
from cataloger_dagster.resources.script_store import ScriptStore


def cache_key(profile: TableProfile, agent: AgentResource) -> str:
    version = getattr(agent, "prompt_version", None) or "1"
    return f"{profile.fingerprint.value}:{agent.kind}:{version}"


@dg.asset(
    partitions_def=tables_partitions,
    group_name=GROUP,
    owners=OWNERS,
    kinds={"python"},
    description="A plain-language understanding of the table (seed 001's DatasetUnderstandingModel); "
    "reused unchanged while the table's fingerprint and the agent's prompt are unchanged.",
)
def table_understanding(
    context: dg.AssetExecutionContext,
    table_profile: TableProfile,
    database: DatabaseResource,
    store: ScriptStore,
    agent: AgentResource,
) -> dg.Output[DatasetUnderstandingModel]:
    folder = TableRun.open(context, database, store)
    key = cache_key(table_profile, agent)
    reused_from = None
    understanding = None
    for ts, stored in folder.previous(UNDERSTANDING, limit=1):
        if stored.get("cache_key") == key:
            understanding = DatasetUnderstandingModel.model_validate(stored)
            reused_from = ts
    usage = AgentUsage(agent=agent.kind)
    if understanding is None:
        understanding, usage = agent.understand(table_profile)
    else:
        context.log.info(f"{folder.table}: fingerprint unchanged, understanding reused from {reused_from}")
    uri = folder.write_json(UNDERSTANDING, {**understanding.model_dump(), "cache_key": key})
    return dg.Output(
        understanding,
        metadata={
            "dagster/row_count": table_profile.row_count,
            "dagster/column_schema": column_schema(table_profile, understanding),
            "description": dg.MetadataValue.md(understanding.summary.description),
            "reused_from": reused_from or "",
            **usage_metadata(usage),
            "understanding": link(uri),
        },
    )
