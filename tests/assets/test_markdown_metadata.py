"""Names and values are text in the Dagster UI: no Markdown metadata or column description that
the catalog writes turns a hostile column name or value into an image, a link or HTML.

One real run of every per-table asset over a DuckDB table whose column is named
``c![c](http://localhost:9/x)`` and whose values are ``![v](http://localhost:9/v)``; every
Markdown value of every materialization is parsed by a real CommonMark parser (markdown-it-py,
with GFM tables) and must hold no image, link or HTML token, while still showing the name.
The table's own name holds control characters: no log line of the run carries them raw."""

import dagster as dg
import duckdb
import pytest
from markdown_it import MarkdownIt

from cataloger_dagster.assets.freshness import freshness_result, volume_result
from cataloger_dagster.core.models import IssueModel
from cataloger_dagster.core.shown import has_control
from cataloger_dagster.definitions import TABLE_ASSETS
from cataloger_dagster.settings.factories import resources

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

COLUMN = "c![c](http://localhost:9/x)"
VALUE = "![v](http://localhost:9/v)"
TABLE = "ev\x15ents\u2028\u202e"   # Ctrl-U, a line separator, a right-to-left override
ACTIVE = {"image", "link_open", "html_inline", "html_block", "autolink"}
PARSER = MarkdownIt("commonmark").enable("table")


def tokens(markdown: str):
    for token in PARSER.parse(markdown):
        yield token
        yield from token.children or []


def active(markdown: str) -> list[str]:
    return [t.type for t in tokens(markdown) if t.type in ACTIVE]


def shown_text(markdown: str) -> str:
    return "".join(t.content for t in tokens(markdown) if t.type in ("text", "code_inline"))


def test_the_parser_sees_the_attack_unescaped():
    # what the checks below look for: unescaped, the name and the value are images to this parser
    assert "image" in active(COLUMN) and "image" in active(f"- {VALUE}")


@pytest.fixture(scope="module")
def materialized(tmp_path_factory, local_sandbox_for_module):
    tmp = tmp_path_factory.mktemp("markdown")
    db = tmp / "shop.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(f"""CREATE TABLE "{TABLE}" AS SELECT range AS event_id,
                        CASE WHEN range % 3 = 0 THEN '{VALUE}' WHEN range % 10 = 0 THEN NULL ELSE 'x' END
                          AS "{COLUMN}"
                        FROM range(300)""")
    res = resources(database=f"duckdb://{db}", store=str(tmp / "store"), sandbox="local")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tables", [TABLE])
        result = dg.materialize(TABLE_ASSETS, partition_key=TABLE, instance=instance, resources=res,
                                run_config={"ops": {"investigations": {"config": {"exploration_rate": 0.0}}}})
        assert result.success
        logs = [entry.user_message for entry in instance.all_logs(result.run_id)]
        yield [e.event_specific_data.materialization for e in result.all_events if e.is_step_materialization], logs


def markdown_of(metadata: dict) -> dict[str, str]:
    found = {}
    for key, value in metadata.items():
        if isinstance(value, dg.MarkdownMetadataValue):
            found[key] = value.value
        elif isinstance(value, dg.TableSchemaMetadataValue):
            for column in value.value.columns:
                found[f"{key}:{column.name}"] = column.description or ""
    return found


def test_no_markdown_metadata_loads_or_links_anything(materialized):
    seen = {}
    for materialization in materialized[0]:
        for key, markdown in markdown_of(materialization.metadata).items():
            seen[f"{materialization.asset_key.to_user_string()}.{key}"] = markdown
            assert active(markdown) == [], f"{key}: {markdown!r}"
    # every asset that writes Markdown was seen, and the hostile name is shown as text
    assert {k.split(".")[0] for k in seen} >= {"table_profile", "table_understanding", "quality_issues",
                                                "investigations", "recent_summary", "catalog_page"}
    assert COLUMN in shown_text(seen["table_profile.summary"])


def test_no_log_line_of_the_run_carries_a_raw_control_character(materialized):
    logs = materialized[1]
    named = [line for line in logs if "ev\\x15ents\\u2028\\u202e" in line]
    assert named, "the catalog's own log lines name the table"
    assert [line for line in logs if has_control(line.replace("\n", " "))] == []


def test_the_check_results_list_hostile_findings_as_text():
    hostile = IssueModel(id=f"{COLUMN}:stale", type="volume_anomaly", severity="medium", category="quick_fixes",
                         description=f"{COLUMN} holds {VALUE}", affectedColumns=[COLUMN], suggestedAction="look")
    volume = volume_result([100, 2000], [hostile])
    fresh = freshness_result(1.0, 10.0, 100.0, [hostile])
    for markdown in (volume.metadata["volume_anomaly"].value, fresh.metadata["stale_table"].value):
        assert active(markdown) == [] and VALUE in shown_text(markdown)
