"""`run_investigations`, the heuristic agent's loop, driving a real sandbox (bubblewrap) over a
snapshot of the shop database: cold, warm (reused, relearned, refreshed), transfer to another
table, and the ways an earlier script can fail to be reused."""

from __future__ import annotations

import duckdb
import pytest

from cataloger_dagster.core.investigate.code import referenced_tables, setup_block
from cataloger_dagster.core.investigate.codegen import SCRIPT_HEADER
from cataloger_dagster.core.investigate.investigator import PreviousScript, run_investigations
from cataloger_dagster.core.models import IssueModel
from cataloger_dagster.resources.database.snapshots import SNAPSHOT_URL
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.sandbox import SandboxResource
from shop import make_shop

COLUMNS = ["event_id", "customer_id", "page", "status", "x"]


def shop_issues(table: str) -> list[IssueModel]:
    def issue(type_, columns, ident=None, **details):
        return IssueModel(id=f"{table}_{ident or type_}", type=type_, severity="high", description="",
                          affectedColumns=columns, suggestedAction="", category="quick_fixes", details=details)

    return [
        issue("missing_values", ["page"], "missing_values_page"),
        issue("duplicate_rows", COLUMNS, compared_columns=COLUMNS),
        issue("orphan_references", ["customer_id"], "orphan_references_customer_id",
              references="customers.customer_id"),
        issue("inconsistent_categories", ["status"], "inconsistent_categories_status",
              groups={"shipped": ["shipped", "Shipped"]}),
    ]


@pytest.fixture(scope="module")
def shop_db(tmp_path_factory):
    return make_shop(tmp_path_factory.mktemp("shop") / "shop.duckdb", "events", "events_copy")


def count(db, sql: str) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchone()[0]


def investigate(db, table, issues, previous=None, *, explore=True):
    """One run in a fresh sandbox session: (InvestigationRun, the cells it ran, the session script)."""
    database = DatabaseResource(url=f"duckdb://{db}")
    with SandboxResource(backend="local", isolation="bwrap").session(
            env={"DB_CONNECTION_STRING": SNAPSHOT_URL}) as runtime:
        database.write_snapshot(table, runtime.data_dir, references=referenced_tables(issues))
        run = run_investigations(runtime, table, issues, previous, explore=explore)
        return run, list(runtime.cells), runtime.get_session_script()


@pytest.fixture(scope="module")
def cold(shop_db, local_sandbox_for_module):
    return investigate(shop_db, "events", shop_issues("events"))


def test_a_cold_run_explores_then_proves_each_issue(cold, shop_db):
    run, cells, script = cold
    issues = shop_issues("events")
    assert [i.issue_id for i in run.investigations] == [i.id for i in issues]
    assert all(i.success and i.verdict == "confirmed" and i.error is None for i in run.investigations), \
        run.investigations
    assert run.reused == run.relearned == run.refreshed == [] and run.reuse_error is None
    by_id = {i.issue_id: i for i in run.investigations}
    assert by_id["events_missing_values_page"].evidence["missing"] == count(
        shop_db, "SELECT count(*) FROM events WHERE page IS NULL")
    assert by_id["events_duplicate_rows"].evidence["duplicate_rows"] == count(
        shop_db, "SELECT count(*) FROM events") - count(shop_db, "SELECT count(*) FROM (SELECT DISTINCT * FROM events)")
    assert by_id["events_orphan_references_customer_id"].evidence["rows"] == count(
        shop_db, "SELECT count(*) FROM events WHERE customer_id NOT IN (SELECT customer_id FROM customers)")
    # setup, then for each issue one cell to look and one to test
    assert len(cells) == 1 + 2 * len(issues) and all(c.ok for c in cells)
    # each investigation keeps the code that answers it: its check and its record() call
    for inv in run.investigations:
        kind = next(i.type for i in issues if i.id == inv.issue_id)
        assert f"def check_{kind}(" in inv.code and f"record({inv.issue_id!r}" in inv.code
        assert inv.execution_time_ms > 0 and inv.output["verdict"] == "confirmed"
    assert script.startswith(SCRIPT_HEADER)


def test_without_exploring_a_cold_run_tests_each_issue_in_one_cell(shop_db, local_sandbox):
    issues = shop_issues("events")[:2]
    run, cells, _ = investigate(shop_db, "events", issues, explore=False)
    assert len(cells) == 1 + len(issues)
    assert not any("print(t.schema())" in c.code for c in cells)
    assert [i.verdict for i in run.investigations] == ["confirmed", "confirmed"]


def test_a_warm_run_reuses_the_earlier_script_in_one_cell(cold, shop_db, local_sandbox):
    _, _, script = cold
    before = {i.issue_id: (i.verdict, i.evidence) for i in cold[0].investigations}
    issues = shop_issues("events")
    run, cells, _ = investigate(shop_db, "events", issues, PreviousScript("T1", script, "events"))
    assert len(cells) == 1 and cells[0].ok
    assert run.reused == [i.id for i in issues] and run.relearned == run.refreshed == []
    assert {i.issue_id: (i.verdict, i.evidence) for i in run.investigations} == before


def test_a_warm_run_relearns_what_fails_and_refreshes_what_changed(cold, shop_db, local_sandbox):
    _, _, script = cold
    issues = shop_issues("events")
    # the page column was renamed since (the old call fails), and the detector now compares
    # other columns for duplicates (the old call runs, but with outdated arguments)
    assert script.count("check_missing_values, 'page')") == 1
    stale = script.replace("check_missing_values, 'page')", "check_missing_values, 'old_page')")
    old_columns = repr(COLUMNS)
    assert stale.count(old_columns) == 1
    stale = stale.replace(old_columns, repr(COLUMNS[:2]))
    run, cells, _ = investigate(shop_db, "events", issues, PreviousScript("T1", stale, "events"))
    assert run.relearned == ["events_missing_values_page"]
    assert run.refreshed == ["events_duplicate_rows"]
    assert sorted(run.reused) == ["events_inconsistent_categories_status", "events_orphan_references_customer_id"]
    # the earlier script in one cell, what it did not answer rightly in one more
    assert len(cells) == 2 and "old_page" not in cells[1].code and "def check_missing_values(" in cells[1].code
    fresh = {i.issue_id: (i.verdict, i.evidence) for i in run.investigations}
    assert fresh == {i.issue_id: (i.verdict, i.evidence) for i in cold[0].investigations}


def test_a_transfer_retargets_the_setup_and_investigates_every_issue(cold, shop_db, local_sandbox):
    _, _, script = cold
    issues = shop_issues("events_copy")
    run, cells, _ = investigate(shop_db, "events_copy", issues, PreviousScript("T1", script, "events"))
    assert run.reuse_error is None and run.reused == [] and run.relearned == []
    assert len(cells) == 2 and "TABLE = 'events_copy'" in cells[0].code
    assert "def check_orphan_references(" in cells[0].code      # the other table's checks came along
    assert all(i.success and i.verdict == "confirmed" for i in run.investigations), run.investigations
    # events_copy is a copy of events: the same evidence
    assert [i.evidence for i in run.investigations] == [i.evidence for i in cold[0].investigations]


@pytest.mark.parametrize("previous, table, why", [
    # the earlier setup names a table the snapshot does not hold: its cell fails
    (f"{SCRIPT_HEADER}\n{setup_block('gone')}", "events", "setup failed here"),
    (f"{SCRIPT_HEADER}\n# block: check missing_values\nx = 1\n", "events", "no setup block"),
    (f"{SCRIPT_HEADER}\n# block: setup\nimport os\n", "events_copy", "names no TABLE"),
])
def test_an_earlier_script_that_cannot_run_means_exploring_afresh(shop_db, local_sandbox, previous, table, why):
    issues = shop_issues(table)[:1]
    run, cells, _ = investigate(shop_db, table, issues, PreviousScript("T1", previous, "events"))
    assert why in run.reuse_error
    assert run.reused == [] and run.investigations[0].verdict == "confirmed"
    # a cold run follows: its own setup, a look and a test
    assert [c.ok for c in cells[-3:]] == [True, True, True] and f"TABLE = {table!r}" in cells[-3].code


def test_a_check_that_fails_is_an_error_of_that_issue_only(shop_db, local_sandbox):
    issues = shop_issues("events")[:1]
    gone = issues[0].model_copy(update={"id": "events_missing_values_gone", "affectedColumns": ["gone"]})
    run, cells, _ = investigate(shop_db, "events", [gone, *issues], explore=False)
    failed, fine = run.investigations
    assert not failed.success and failed.verdict is None and "gone" in failed.error
    assert failed.code and failed.output["error"] == failed.error
    assert fine.success and fine.verdict == "confirmed"
    # the check was defined by the first (successful) cell, so the second does not repeat it
    assert "def check_missing_values(" not in cells[2].code


def test_no_issues_no_investigations(shop_db, local_sandbox):
    run, cells, _ = investigate(shop_db, "events", [], PreviousScript("T1", "x = 1\n", "events"))
    assert run.investigations == [] and run.reuse_error is None
    assert len(cells) == 1 and cells[0].ok      # only the setup
