import dagster as dg

from cataloger_dagster.assets.common import GROUP, OWNERS, TableRun, each_table, link, per_table, table_output
from cataloger_dagster.assets.metadata import column_schema, profile_summary
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.core.layout import PROFILE
from cataloger_dagster.core.models import CodeInvestigation, TableProfile
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.core.results import ResultError
from cataloger_dagster.core.sensitive.hypotheses import last_investigations, with_verdicts
from cataloger_dagster.core.sensitive.masking import remember, whole_values
from cataloger_dagster.core.sensitive.teaching import taught
from cataloger_dagster.assets.review_memory import table_teaching
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.core.shown import visible


@dg.asset(
    partitions_def=tables_partitions,
    group_name=GROUP,
    owners=OWNERS,
    kinds={"ibis", "python"},
    dagster_type=per_table(TableProfile),
    description="Statistics of every column, pushed down to the database through ibis, "
    "with sample rows and the table's fingerprint.",
)
def table_profile(context: dg.AssetExecutionContext, database: DatabaseResource, store: CatalogStore) -> dg.Output:
    return table_output(context, each_table(context, lambda name: _profile(context, database, store, name)))


def _profile(
    context: dg.AssetExecutionContext, database: DatabaseResource, store: CatalogStore, name: str
) -> tuple[TableProfile, dict]:
    table = database.table(name)
    fingerprint = database.fingerprint(name)
    profile = compute_profile(
        table,
        database=database.database_name,
        table_name=name,
        fingerprint=fingerprint,
        progress=lambda line: context.log.debug(visible(line)),
    )
    # people's verdicts on the classes outrank the classifier's; then what it found stays, the
    # values of those columns leave no further in clear, and those it saw are scrubbed from any
    # text this process lets out (a name quoted in a note)
    profile = taught(profile, table_teaching(context, store, database.database_name, name))
    # then the latest investigation's verdict on each class: a refuted one leaves the tags (its
    # values stay masked), until a later investigation or a person's review says otherwise
    profile = with_verdicts(profile, _last_investigations(context, store, database.database_name, name))
    remember(database.database_name, name, whole_values(profile))
    profile = store.value_policy(database.database_name).profile(profile)
    folder = TableRun.open(context, database, store, name)  # after profiling: a failed profile claims no folder
    uri = folder.uri(PROFILE)  # the IO manager writes it there
    context.log.info(
        visible(
            f"profiled {name}: {profile.row_count:,} rows, {profile.column_count} columns, "
            f"{profile.queries} queries in {profile.duration_s:.2f}s"
        )
    )
    return profile, {
        "dagster/row_count": profile.row_count,
        "dagster/column_schema": column_schema(profile),
        "summary": profile_summary(profile),
        "fingerprint": profile.fingerprint.value,
        "queries": profile.queries,
        "duration_s": round(profile.duration_s, 3),
        "run_folder": folder.timestamp,
        "profile": link(uri),
    }


def _last_investigations(
    context: dg.AssetExecutionContext, store: CatalogStore, database: str, table: str
) -> list[CodeInvestigation]:
    try:
        return last_investigations(store, database, table)
    except ResultError as e:  # an unreadable earlier result teaches nothing; the profile goes on
        context.log.warning(visible(f"the classes of {table} carry no earlier verdict: {e}"))
        return []
