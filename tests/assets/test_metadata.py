"""What the Dagster UI shows: metadata on real materializations, asset attributes, lineage."""

from pathlib import Path

import dagster as dg
import duckdb
import pytest
from markdown_it import MarkdownIt

from cataloger_dagster.assets.catalog_index import catalog_index
from cataloger_dagster.definitions import ALL_ASSETS, TABLE_ASSETS, defs
from cataloger_dagster.settings.factories import resources

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

EVENTS_SQL = """
CREATE TABLE customers AS SELECT range AS customer_id, 'c' || range AS name FROM range(100);
CREATE TABLE events AS
  SELECT range AS event_id, range % 120 AS customer_id,
         CASE WHEN range % 10 = 0 THEN NULL ELSE 'page' || (range % 7) END AS page
  FROM range(900);
"""

# asset -> metadata keys its every materialization must carry
EXPECTED = {
    "table_profile": {"dagster/row_count", "dagster/column_schema", "summary", "duration_s", "fingerprint",
                      "profile"},
    "table_understanding": {"dagster/row_count", "dagster/column_schema", "description", "tokens",
                            "understanding"},
    "quality_issues": {"dagster/row_count", "summary", "issues", "issues_high", "issues_medium", "issues_low",
                       "tokens", "issues_json"},
    "investigations": {"dagster/row_count", "summary", "pass_rate", "tokens", "sandbox_cells", "sandbox_seconds",
                       "duration_s", "script", "investigations_json", "run_folder", "explore_requested",
                       "fingerprint"},
    "recent_summary": {"dagster/row_count", "summary", "recent_summary", "summary_script", "catalog_page"},
    "catalog_page": {"dagster/row_count", "dagster/column_schema", "summary", "issues_high", "issues_medium",
                     "issues_low", "pass_rate", "sandbox_cells", "catalog_page", "recent_summary", "script"},
}


def latest(instance, asset: str, partition: str | None = "events") -> dg.AssetMaterialization:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition] if partition else None),
        limit=1,
    ).records
    assert records, f"no materialization of {asset}"
    return records[0].asset_materialization


@pytest.fixture(scope="module")
def materialized(tmp_path_factory, local_sandbox_for_module):
    """One real run of every per-table asset on a small table, then the index."""
    tmp = tmp_path_factory.mktemp("metadata")
    db = tmp / "shop.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(EVENTS_SQL)
    res = resources(database=f"duckdb://{db}", store=str(tmp / "store"), sandbox="local")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", ["events"])
        result = dg.materialize(TABLE_ASSETS, partition_key="events", instance=instance, resources=res,
                                run_config={"ops": {"investigations": {"config": {"exploration_rate": 0.0}}}})
        assert result.success
        assert dg.materialize([catalog_index], instance=instance, resources=res).success
        yield instance, result


@pytest.mark.parametrize("asset", sorted(EXPECTED))
def test_every_per_table_materialization_carries_its_metadata(materialized, asset):
    instance, _ = materialized
    metadata = latest(instance, asset).metadata
    missing = EXPECTED[asset] - set(metadata)
    assert not missing, f"{asset} lacks {sorted(missing)}"
    assert metadata["dagster/row_count"].value == 900
    for key, value in metadata.items():
        if key in ("summary", "description"):
            assert isinstance(value, dg.MarkdownMetadataValue) and value.value.strip()
        if key in ("script", "catalog_page", "recent_summary", "summary_script", "profile"):
            assert Path(value.value).name in ("catalog_script.py", "catalog.html", "recent_summary.html",
                                              "summary_script.py", "profile.json")


def test_column_schema_carries_the_understandings_descriptions(materialized):
    instance, result = materialized
    understanding = result.output_for_node("table_understanding")
    described = {c.name: c.description for c in understanding.columns}
    assert set(described) == {"event_id", "customer_id", "page"} and all(described.values())
    for asset in ("table_understanding", "catalog_page"):
        schema = latest(instance, asset).metadata["dagster/column_schema"].value
        assert {c.name: c.description for c in schema.columns} == described
    # the profile comes before the understanding: its columns are described by their statistics
    profile_schema = latest(instance, "table_profile").metadata["dagster/column_schema"].value
    page = next(c for c in profile_schema.columns if c.name == "page")
    assert "10.0% null" in page.description and page.type == "string"


def test_numbers_match_the_results(materialized):
    instance, result = materialized
    issues = result.output_for_node("quality_issues").issues
    investigations = result.output_for_node("investigations")
    page = latest(instance, "catalog_page").metadata
    for severity in ("high", "medium", "low"):
        assert page[f"issues_{severity}"].value == sum(1 for i in issues if i.severity == severity)
    assert page["pass_rate"].value == investigations.pass_rate
    assert page["sandbox_cells"].value == investigations.cells > 0
    inv = latest(instance, "investigations").metadata
    assert inv["sandbox_cells"].value == investigations.cells
    assert inv["explore_requested"].value is False
    assert Path(inv["script"].value).parent.name == inv["run_folder"].value
    assert Path(inv["script"].value).is_file() and Path(page["catalog_page"].value).is_file()
    shown = MarkdownIt("commonmark").enable("table").render(inv["summary"].value)
    for issue in issues:
        assert issue.id in shown
    index = latest(instance, "catalog_index", partition=None).metadata
    assert Path(index["index"].value).is_file()


def test_assets_are_described_grouped_owned_and_kinded():
    graph = defs.resolve_asset_graph()
    for asset in ALL_ASSETS:
        node = graph.get(asset.key)
        assert node.description and node.group_name == "catalog", asset.key
        assert node.owners and node.kinds, asset.key


def test_lineage_reads_profile_understanding_issues_investigations_page_index():
    graph = defs.resolve_asset_graph()
    chain = ["table_profile", "table_understanding", "quality_issues", "investigations", "catalog_page",
             "catalog_index"]
    for parent, child in zip(chain, chain[1:]):
        assert dg.AssetKey(parent) in graph.get(dg.AssetKey(child)).parent_keys, (parent, child)
    assert graph.get(dg.AssetKey("table_profile")).parent_keys == set()
    summary_parents = graph.get(dg.AssetKey("recent_summary")).parent_keys
    assert {dg.AssetKey("table_profile"), dg.AssetKey("investigations")} <= summary_parents


def test_open_issues_are_counted_apart_from_reviewed_ones():
    from cataloger_dagster.assets.metadata import review_metadata
    from cataloger_dagster.core.models import AnalysisResultModel, IssueModel
    from cataloger_dagster.core.reviews import Review, snapshot_of
    from cataloger_dagster.core.reviews.memory import ReviewMemory, review_with_memory

    def found(column, rows=10, severity="medium"):
        return IssueModel(id=f"t_missing_values_{column}", type="missing_values", severity=severity,
                          description=column, affectedColumns=[column], suggestedAction="fill",
                          category="quick_fixes", affectedRows=rows)

    def said(column, verdict, rows=10):
        return Review(table="t", issue_id=f"t_missing_values_{column}", verdict=verdict, reviewer="ana",
                      issue=snapshot_of(found(column, rows)))

    issues = [found("a"), found("b"), found("c"), found("d"), found("e"), found("f")]
    log = [said("a", "dismiss"), said("b", "expected"), said("c", "accept"), said("d", "dismiss", rows=1)]
    result = review_with_memory(lambda raised: AnalysisResultModel(issues=raised, summary="", completedAt=""),
                                issues, None, ReviewMemory(reviews=log))
    assert review_metadata(result) == {
        "issues_open": 4, "issues_accepted": 1, "issues_back_after_review": 1, "issues_dismissed": 1,
        "issues_expected": 1, "issues_quieted": 0, "issues_lowered": 0}
