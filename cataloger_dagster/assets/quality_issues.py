from collections.abc import Iterator, Mapping

import dagster as dg
import ibis

from cataloger_dagster.assets.common import (
    GROUP, OWNERS, TableRun, each_table, link, per_table, table_input, table_ins, table_output,
)
from cataloger_dagster.assets.metadata import review_metadata, usage_metadata
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.assets.review_memory import table_memory
from cataloger_dagster.core.fixes.followups import fix_scripts
from cataloger_dagster.core.history.anomalies import history_findings
from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.issues.detectors.references import key_profile
from cataloger_dagster.core.layout import ISSUES, KEYS, PROFILE
from cataloger_dagster.core.models import (
    AnalysisResultModel, ColumnRule, DatasetUnderstandingModel, TableProfile, severity_counts,
)
from cataloger_dagster.core.shown import markdown_text, visible
from cataloger_dagster.resources import script_store
from cataloger_dagster.resources.agent import AgentResource
from cataloger_dagster.resources.database import DatabaseResource
from cataloger_dagster.resources.run_state import RunSharedState
from cataloger_dagster.resources.script_store import ScriptStore
from cataloger_dagster.resources.script_store.database_log import table_facts


class _StoredProfiles(Mapping[str, TableProfile]):
    """The other tables' latest stored key profiles, read only when the reference search asks.
    The search takes from them only which columns may be keys, and checks each against the
    table itself before verifying in the database.  They come from the database's log of table
    facts (a few requests however many tables); a table that wrote none there (a store written
    before the log) is read from its folder: its latest key profile (KEYS), or the whole profile
    of a run that has none."""

    def __init__(self, store: ScriptStore, database: DatabaseResource, catalog: Mapping[str, ibis.Table],
                 table: str) -> None:
        self._store, self._catalog, self._table = store, catalog, table
        self._read: dict[str, TableProfile | None] = {}
        self._database_name = database.database_name   # resolved once: each table's prefix needs it
        self._facts: dict[str, dict] | None = None
        self._folders: set[str] | None = None

    def _from_facts(self, name: str) -> TableProfile | None:
        if self._facts is None:
            self._facts = self._store.read_table_facts(self._database_name)
        keys = (self._facts.get(name) or {}).get("keys")
        try:
            return TableProfile.model_validate(keys) if isinstance(keys, dict) else None
        except ValueError:
            return None   # a malformed entry: the table's folder says it again

    def _latest(self, name: str) -> TableProfile | None:
        found = self._from_facts(name)
        if found is not None:
            return found
        if self._folders is None:
            self._folders = set(self._store.list_tables(self._database_name))
        if name not in self._folders:
            return None   # never stored: no request for it
        prefix = script_store.table_prefix(self._database_name, name)
        for ts in reversed(self._store.list_runs(prefix)):
            for filename in (KEYS, PROFILE):
                stored = self._store.read_json(prefix, ts, filename)
                if stored is not None:
                    return TableProfile.model_validate(stored)
        return None

    def __getitem__(self, name: str) -> TableProfile:
        if name == self._table or name not in self._catalog:
            raise KeyError(name)
        if name not in self._read:
            self._read[name] = self._latest(name)
        found = self._read[name]
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._catalog if name != self._table and name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def stored_profiles(store: ScriptStore, database: DatabaseResource, catalog: Mapping[str, ibis.Table],
                    table: str) -> Mapping[str, TableProfile]:
    """The latest stored key profile of each table of `catalog` but `table`, by name, read lazily."""
    return _StoredProfiles(store, database, catalog, table)


@dg.asset(
    partitions_def=tables_partitions,
    group_name=GROUP,
    owners=OWNERS,
    kinds={"ibis", "python"},
    dagster_type=per_table(AnalysisResultModel),
    ins=table_ins(table_profile=TableProfile, table_understanding=DatasetUnderstandingModel),
    description="Data-quality issues (AnalysisResultModel): deterministic detectors always "
    "run; the agent reviews, adds and explains.",
)
def quality_issues(
    context: dg.AssetExecutionContext,
    table_profile: TableProfile,
    table_understanding: DatasetUnderstandingModel,
    database: DatabaseResource,
    store: ScriptStore,
    agent: AgentResource,
    run_state: dg.ResourceParam[RunSharedState],
) -> dg.Output:
    profiles, understandings = table_input(context, table_profile), table_input(context, table_understanding)
    return table_output(context, each_table(context, lambda table: _issues(
        context, TableRun.open(context, database, store, table), profiles(table), understandings(table), agent,
        run_state)))


def _issues(context: dg.AssetExecutionContext, folder: TableRun, table_profile: TableProfile,
            table_understanding: DatasetUnderstandingModel, agent: AgentResource,
            run_state: RunSharedState) -> tuple[AnalysisResultModel, dict]:
    store, database = folder.store, folder.database
    keys = key_profile(table_profile)
    folder.write_json(KEYS, keys)   # first: the other tables' searches read it
    store.append_table_facts(database.database_name, table_facts(table_profile, folder.timestamp, keys))
    degradations = list(table_profile.degradations)
    catalog = database.catalog()
    found_rules: list[ColumnRule] = []
    detected = detect_issues(database.table(folder.table), table_profile, catalog=catalog,
                             profiles=stored_profiles(store, database, catalog, folder.table),
                             degradations=degradations, found_rules=found_rules,
                             # the other tables' keys, read once for every table of this process
                             shared=run_state.across_tables)
    # after the detectors, before the reviews: people dismiss or expect these like any finding
    reviews = store.read_reviews(folder.prefix)
    detected = [*detected, *history_findings(store, folder.prefix, folder.timestamp, table_profile, reviews,
                                             runs=folder.earlier_runs)]
    previous = folder.previous(ISSUES, limit=1)
    previous_result = AnalysisResultModel.model_validate(previous[0][1]) if previous else None
    # what people said of earlier findings decides which of these are raised, for every agent
    memory = table_memory(context, folder, agent, table_profile, previous_result, own=reviews)
    result, usage = agent.review_issues(
        table_profile, table_understanding, detected, previous=previous_result, memory=memory
    )
    result, followups_usage = agent.smart_fix_followups(table_profile, result, database.fix_target(folder.table))
    usage = usage.plus(followups_usage)
    result = result.model_copy(update={"degradations": degradations, "rules": found_rules})
    # beside the catalog script, for a person to read and run: never run against the source here
    fixes = fix_scripts(result)
    for name, script in fixes.items():
        folder.write_artifact(name, script)
    uri = folder.write_json(ISSUES, result)
    counts = severity_counts(i.severity for i in result.issues)
    context.log.info(visible(f"{folder.table}: {len(result.issues)} issues ({counts}); "
                     f"{len(result.reviewed)} set aside by reviews, {len(result.quieted)} quieted"))
    for d in degradations:
        column = f" (column {d.column!r})" if d.column else ""
        context.log.warning(visible(f"{folder.table}: degraded: {d.reason}{column}"))
    return result, {
        "dagster/row_count": table_profile.row_count,
        "issues": len(result.issues),
        "status": result.status,
        **({"degradations": dg.MetadataValue.md("\n".join(
            f"- {markdown_text(d.stage)}{f' {markdown_text(d.column)}' if d.column else ''}: {markdown_text(d.reason)}"
            for d in degradations))}
           if degradations else {}),
        **{f"issues_{s}": n for s, n in counts.items()},
        **review_metadata(result),
        "smart_fix_followups": sum(1 for i in result.issues if i.followup is not None),
        "fix_scripts": len(fixes),
        "summary": dg.MetadataValue.md(markdown_text(result.summary)),
        **usage_metadata(usage),
        "issues_json": link(uri),
    }
