import hashlib

import dagster as dg

from cataloger_dagster.assets.common import (
    GROUP,
    OWNERS,
    TableRun,
    each_table,
    link,
    per_table,
    table_input,
    table_ins,
    table_output,
)
from cataloger_dagster.assets.metadata import column_schema, usage_metadata
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.core.layout import UNDERSTANDING
from cataloger_dagster.core.models import DatasetUnderstandingModel, TableProfile
from cataloger_dagster.core.results import StoredUnderstanding
from cataloger_dagster.core.shown import markdown_text, visible
from cataloger_dagster.core.writeback.documented import Documented
from cataloger_dagster.resources.agent import AgentResource, AgentUsage
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import CatalogStore


def cache_key(profile: TableProfile, agent: AgentResource, documented: Documented | None = None) -> str:
    """The understanding is reused while this is unchanged: the table's data, the agent, its
    prompt, and the owners' documentation of the table when there is some."""
    version = getattr(agent, "prompt_version", None) or "1"
    key = f"{profile.fingerprint.value}:{agent.kind}:{version}"
    if documented:
        key += ":" + hashlib.sha256(documented.model_dump_json().encode()).hexdigest()[:12]
    return key


@dg.asset(
    partitions_def=tables_partitions,
    group_name=GROUP,
    owners=OWNERS,
    kinds={"python"},
    dagster_type=per_table(DatasetUnderstandingModel),
    ins=table_ins(table_profile=TableProfile),
    description="A plain-language understanding of the table (DatasetUnderstandingModel); "
    "reused unchanged while the table's fingerprint and the agent's prompt are unchanged.",
)
def table_understanding(
    context: dg.AssetExecutionContext,
    table_profile: TableProfile,
    database: DatabaseResource,
    store: CatalogStore,
    agent: AgentResource,
) -> dg.Output:
    profiles = table_input(context, table_profile)
    return table_output(
        context,
        each_table(
            context,
            lambda table: _understand(context, TableRun.open(context, database, store, table), profiles(table), agent),
        ),
    )


def _understand(
    context: dg.AssetExecutionContext, folder: TableRun, table_profile: TableProfile, agent: AgentResource
) -> tuple[DatasetUnderstandingModel, dict]:
    documented = folder.database.documented(folder.table)
    key = cache_key(table_profile, agent, documented)
    reused_from = None
    understanding = None
    for ts, stored in folder.previous(UNDERSTANDING, limit=1):
        if stored.cache_key == key:
            understanding = stored
            reused_from = ts
    usage = AgentUsage(agent=agent.kind)
    if understanding is None:
        understanding, usage = agent.understand(table_profile, documented=documented)
    else:
        context.log.info(visible(f"{folder.table}: fingerprint unchanged, understanding reused from {reused_from}"))
    understanding = StoredUnderstanding.model_validate({**understanding.model_dump(), "cache_key": key})
    uri = folder.uri(UNDERSTANDING)  # the IO manager writes it there
    return understanding, {
        "dagster/row_count": table_profile.row_count,
        "dagster/column_schema": column_schema(table_profile, understanding),
        "description": dg.MetadataValue.md(markdown_text(understanding.summary.description)),
        "reused_from": reused_from or "",
        **usage_metadata(usage),
        "understanding": link(uri),
    }
