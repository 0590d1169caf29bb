"""The asset checks, run by Dagster on real assets over real DuckDB files, per partition."""

import dagster as dg
import duckdb
import pytest
from markdown_it import MarkdownIt

from cataloger_dagster.assets.checks import (
    build_asset_checks,
    no_high_severity_issues,
    script_reproduces_evidence,
)
from cataloger_dagster.definitions import TABLE_ASSETS, defs
from cataloger_dagster.jobs import CATALOG_TABLE_JOB, build_catalog_table_job
from cataloger_dagster.settings.model import load_settings
from cataloger_dagster.settings.factories import resources
from cataloger_dagster.sensors.pass_rate import THRESHOLD_ENV
from shop import make_shop


def shown(markdown: str) -> str:
    """A Markdown metadata value as the UI shows it (names in it are escaped)."""
    return MarkdownIt("commonmark").render(markdown)


pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

PARTS = ("table_profile", "table_understanding", "quality_issues")
ASSET_CHECKS = build_asset_checks(load_settings())
pass_rate_at_least_threshold = ASSET_CHECKS[0]


@pytest.fixture
def shop(tmp_path):
    return make_shop(tmp_path / "shop.duckdb")


def run(shop, store, instance, table, *, selection=None, investigate=True):
    if table not in instance.get_dynamic_partitions("tables"):
        instance.add_dynamic_partitions("tables", [table])
    result = dg.materialize(
        [*TABLE_ASSETS, *ASSET_CHECKS], partition_key=table, instance=instance, selection=selection,
        resources=resources(database=f"duckdb://{shop}", store=str(store), sandbox="local"),
        run_config={"ops": {"investigations": {"config": {"exploration_rate": 0.0}}}} if investigate else None,
    )
    assert result.success
    return result


def run_check_alone(shop, store, instance, table, check):
    """As the UI's "Execute" on a check: a subset of the catalog job with the check only, in
    a run that loads the code location, with the settings of the environment at that time."""
    job = dg.Definitions(
        assets=TABLE_ASSETS, asset_checks=build_asset_checks(load_settings()),
        jobs=[build_catalog_table_job(TABLE_ASSETS)],
        resources=resources(database=f"duckdb://{shop}", store=str(store), sandbox="local"),
    ).resolve_job_def(CATALOG_TABLE_JOB)
    job = job.get_subset(asset_selection=set(), asset_check_selection=set(check.check_keys))
    result = job.execute_in_process(partition_key=table, instance=instance)
    assert result.success
    return result


def evaluations(result) -> dict[str, dg.AssetCheckEvaluation]:
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def history(instance, check, table) -> list[bool]:
    """The stored results of `check` for one partition, newest first, as the UI reads them."""
    key = next(iter(check.check_keys))
    records = instance.event_log_storage.get_asset_check_execution_history(key, limit=20)
    return [r.event.dagster_event.event_specific_data.passed for r in records if r.partition == table]


def test_checks_run_per_partition_in_the_catalog_job(shop, tmp_path, local_sandbox):
    with duckdb.connect(str(shop)) as con:  # a table with nothing wrong
        con.execute("CREATE TABLE plain AS SELECT range AS id, 'name ' || range AS label FROM range(300)")
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        events = run(shop, store, instance, "events")
        plain = run(shop, store, instance, "plain")

        for result, table in ((events, "events"), (plain, "plain")):
            found = evaluations(result)
            assert set(found) == {next(iter(c.check_specs)).name for c in ASSET_CHECKS}
            assert {e.partition for e in found.values()} == {table}
            issues = result.output_for_node("quality_issues").issues
            high = [i.id for i in issues if i.severity == "high"]
            assert found["no_high_severity_issues"].passed is (not high)
            assert found["no_high_severity_issues"].severity == dg.AssetCheckSeverity.WARN
            assert found["no_high_severity_issues"].metadata["high"].value == len(high)
            assert found["pass_rate_at_least_threshold"].passed
            assert found["script_reproduces_evidence"].passed, found["script_reproduces_evidence"].metadata
        # events has orphan customer ids and duplicate keys: the warning is on its partition only
        assert history(instance, no_high_severity_issues, "events") == [False]
        assert history(instance, no_high_severity_issues, "plain") == [True]
        assert "events_orphan_references_customer_id" in shown(evaluations(events)[
            "no_high_severity_issues"].metadata["high_issues"].value)

    job = defs.resolve_job_def(CATALOG_TABLE_JOB)
    assert {k.name for k in job.asset_layer.asset_graph.asset_check_keys} == {
        "pass_rate_at_least_threshold", "no_high_severity_issues", "script_reproduces_evidence",
        "catalog_is_fresh", "row_count_as_expected"}  # the last two: tests/assets/test_freshness.py


def test_pass_rate_check_fails_when_investigations_fail(shop, tmp_path, local_sandbox, monkeypatch):
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        run(shop, store, instance, "events", selection=dg.AssetSelection.assets(*PARTS), investigate=False)
        # the issues about these columns were found, then the columns went: their code cannot run
        with duckdb.connect(str(shop)) as con:
            con.execute("ALTER TABLE events DROP COLUMN page; ALTER TABLE events DROP COLUMN status")
        result = run(shop, store, instance, "events", selection=dg.AssetSelection.assets("investigations"))
        rate = result.output_for_node("investigations").pass_rate
        assert rate is not None and rate < 0.8
        check = evaluations(result)["pass_rate_at_least_threshold"]
        assert not check.passed and check.partition == "events"
        assert check.severity == dg.AssetCheckSeverity.ERROR
        assert check.metadata["pass_rate"].value == pytest.approx(rate)
        assert "events_missing_values_page" in check.metadata["without_verdict"].value
        # the answered investigations still reproduce from the stored script
        assert evaluations(result)["script_reproduces_evidence"].passed

        # the same stored result against a lower threshold, the check run alone (as from the UI)
        monkeypatch.setenv(THRESHOLD_ENV, str(rate))
        alone = run_check_alone(shop, store, instance, "events", pass_rate_at_least_threshold)
        assert list(evaluations(alone)) == ["pass_rate_at_least_threshold"]
        assert evaluations(alone)["pass_rate_at_least_threshold"].passed
        assert history(instance, pass_rate_at_least_threshold, "events") == [True, False]


def test_script_check_fails_when_the_evidence_no_longer_reproduces(shop, tmp_path, local_sandbox):
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        first = run(shop, store, instance, "events")
        assert evaluations(first)["script_reproduces_evidence"].passed
        with duckdb.connect(str(shop)) as con:  # more missing pages than the recorded evidence says
            con.execute("UPDATE events SET page = NULL WHERE event_id % 10 = 1")
        alone = run_check_alone(shop, store, instance, "events", script_reproduces_evidence)
        check = evaluations(alone)["script_reproduces_evidence"]
        assert not check.passed and check.partition == "events"
        differences = shown(check.metadata["differences"].value)
        assert "events_missing_values_page: evidence" in differences
        assert "events_duplicate_keys_event_id" not in differences  # untouched evidence still matches
        assert history(instance, script_reproduces_evidence, "events") == [False, True]


def test_a_high_severity_issue_its_investigation_refuted_does_not_fail_the_check():
    from cataloger_dagster.assets.checks import no_high_severity_issues
    from cataloger_dagster.core.models import AnalysisResultModel, CodeInvestigation, IssueModel, InvestigationsResult

    def high(issue_id: str) -> IssueModel:
        return IssueModel(id=issue_id, type="outliers", severity="high", description=issue_id,
                          affectedColumns=["amount"], suggestedAction="review", category="smart_fixes")

    found = AnalysisResultModel(issues=[high("real"), high("false_alarm")], summary="", completedAt="")

    def check(verdicts: dict[str, str]) -> dg.AssetCheckResult:
        investigated = InvestigationsResult(table="orders", investigations=[
            CodeInvestigation(code="", success=True, output=None, issue_id=i, verdict=v) for i, v in verdicts.items()])
        return no_high_severity_issues(dg.build_asset_check_context(), quality_issues=found,
                                       investigations=investigated)

    both = check({"real": "confirmed", "false_alarm": "confirmed"})
    assert not both.passed and both.metadata["high"].value == 2
    one = check({"real": "confirmed", "false_alarm": "refuted"})
    assert not one.passed and one.metadata["high"].value == 1 and "false_alarm" not in one.description
    assert check({"real": "refuted", "false_alarm": "refuted"}).passed
    # inconclusive dismisses nothing
    assert check({"real": "refuted", "false_alarm": "inconclusive"}).metadata["high"].value == 1


def test_the_high_severity_check_ignores_what_reviewers_dismissed_or_marked_expected():
    from cataloger_dagster.assets.checks import no_high_severity_issues
    from cataloger_dagster.core.models import AnalysisResultModel, InvestigationsResult, IssueModel
    from cataloger_dagster.core.reviews import Review, snapshot_of
    from cataloger_dagster.core.reviews.memory import ReviewMemory, remember

    def high(column: str, rows: int) -> IssueModel:
        return IssueModel(id=f"orders_outliers_{column}", type="outliers", severity="high", description=column,
                          affectedColumns=[column], suggestedAction="review", category="smart_fixes",
                          affectedRows=rows)

    def said(issue, verdict, rows):
        return Review(table="orders", issue_id=issue.id, verdict=verdict, reviewer="ana",
                      issue=snapshot_of(issue.model_copy(update={"affectedRows": rows})))

    found = [high("a", 10), high("b", 10), high("c", 10), high("d", 10)]
    log = [said(found[0], "dismiss", 10), said(found[1], "expected", 10), said(found[2], "dismiss", 2),
           said(found[3], "accept", 10)]
    kept = remember(found, None, ReviewMemory(reviews=log))
    result = AnalysisResultModel(issues=kept.raised, reviewed=kept.reviewed, summary="", completedAt="")
    check = no_high_severity_issues(dg.build_asset_check_context(), quality_issues=result,
                                    investigations=InvestigationsResult(table="orders", investigations=[]))
    # dismissed and expected are set aside; worse since dismissed (2 -> 10 rows) and accepted still count
    assert not check.passed and check.metadata["high"].value == 2
    assert check.metadata["high_set_aside_by_review"].value == 2
    assert "orders_outliers_c" in shown(check.metadata["high_issues"].value)
    assert "orders_outliers_a" not in shown(check.metadata["high_issues"].value)
    aside = remember(found[:2], None, ReviewMemory(reviews=log))
    assert no_high_severity_issues(
        dg.build_asset_check_context(),
        quality_issues=AnalysisResultModel(issues=aside.raised, reviewed=aside.reviewed, summary="", completedAt=""),
        investigations=InvestigationsResult(table="orders", investigations=[])).passed


def test_script_check_compares_personal_evidence_as_it_was_stored_and_shows_none_in_clear(tmp_path, local_sandbox):
    """Evidence quoting e-mails is stored masked: the rerun's is masked the same way before it is
    compared, so the check passes on unchanged data, and its metadata holds no address in clear."""
    path = tmp_path / "people.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE members (member_id INTEGER, email VARCHAR, city VARCHAR)")
        rows = [(i, f"member.{i:03d}@example.org", ("Lyon", "Oslo", "Quito")[i % 3]) for i in range(300)]
        rows += [(300 + i, f"member.{i:03d}@example.org", "Lyon") for i in range(12)]  # registered twice
        con.executemany("INSERT INTO members VALUES (?, ?, ?)", rows)
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        result = run(path, store, instance, "members")
        found = result.output_for_node("investigations").investigations
        assert any("member.001@example.org" in str(i.evidence) for i in found)  # what the run saw
        (stored,) = store.rglob("investigations.json")
        assert "@" in stored.read_text() and "member.001@example.org" not in stored.read_text()  # kept masked
        check = evaluations(result)["script_reproduces_evidence"]
        assert check.passed, check.metadata
        alone = evaluations(run_check_alone(path, store, instance, "members", script_reproduces_evidence))
        assert alone["script_reproduces_evidence"].passed, alone["script_reproduces_evidence"].metadata
        assert "@example.org" not in str(alone["script_reproduces_evidence"].metadata)
