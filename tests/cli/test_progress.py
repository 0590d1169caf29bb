"""cli/progress.py: what `cataloger run` says as each table's steps finish, and at its end."""

from cataloger_dagster.cli.progress import RunProgress, summary_lines
from cataloger_dagster.cli.runner import STEPS, CatalogReport, IssueSummary, TableReport
from cataloger_dagster.cli.stopping import Interrupted


def issue(severity: str, n: int) -> IssueSummary:
    return IssueSummary(id=f"i{n}", type="missing_values", severity=severity, category="quick_fixes",
                        affectedColumns=[f"c{n}", "d"], description=f"c{n} is missing in half the rows")


def test_a_table_is_said_done_once_as_its_last_step_finishes(capsys):
    progress = RunProgress(expected=None, bar=False)
    progress.start(["a", "b"])
    for step in STEPS[:-1]:
        progress.step_done("a", step, 0.5)
    assert capsys.readouterr().err == ""
    progress.step_done("a", STEPS[-1], 0.25)
    assert capsys.readouterr().err == f"  done a in {0.5 * (len(STEPS) - 1) + 0.25:.1f} s\n"
    progress.table_done(TableReport(table="a", status="ok", seconds=3.0))   # its batch's report, later
    assert capsys.readouterr().err == ""
    assert progress.finished == {"a"}


def test_failed_kept_and_degraded_tables_each_get_their_line(capsys):
    progress = RunProgress(expected=3, bar=False)
    progress.table_done(TableReport(table="bad", status="failed", error="cannot be read (while profiling it)",
                                    log="/logs/run.log"))
    progress.table_done(TableReport(table="old", status="ok", resumed=True))
    progress.table_done(TableReport(table="half", status="degraded", degradations=["references: timeout"]))
    assert capsys.readouterr().err.splitlines() == [
        "  FAILED bad: cannot be read (while profiling it) (full error in /logs/run.log)",
        "  kept old: already cataloged for its current data",
        "  done half in 0.0 s", "  degraded half: references: timeout"]
    assert progress.interrupted_line(Interrupted(2)) == (
        "stopped (SIGINT): 2 of 3 tables finished and stay in the store; `cataloger run --resume` catalogs the other 1")


def test_the_summary_counts_issues_by_severity_and_lists_the_high_ones():
    report = CatalogReport(database="duckdb:///shop.duckdb", store="local folder s", index="/s/index.html", tables=[
        TableReport(table="orders", status="ok", issues=[issue("high", 1), issue("low", 2)]),
        TableReport(table="items", status="ok", issues=[issue("high", 3), issue("medium", 4)]),
        TableReport(table="bad", status="failed", error="boom", log="/l.log"),
    ])
    assert report.totals == {"tables": {"total": 3, "ok": 2, "degraded": 0, "failed": 1, "kept": 0},
                             "issues": {"high": 2, "medium": 1, "low": 1}}
    assert list(summary_lines(report, seconds=12.34)) == [
        "cataloged 2/3 tables of duckdb:///shop.duckdb in 12.3 s",
        "  FAILED bad: boom (full error in /l.log)",
        "issues: 2 high, 1 medium, 1 low",
        "  HIGH orders missing_values (c1, d): c1 is missing in half the rows",
        "  HIGH items missing_values (c3, d): c3 is missing in half the rows",
        "catalog: /s/index.html",
    ]
    assert '"totals"' in report.to_json() and '"traceback"' not in report.to_json()


def test_the_bar_moves_by_steps_and_ends_full(capsys, recwarn):
    progress = RunProgress(expected=None, bar=True)
    progress.start(["a", "b"])
    progress.step_done("a", STEPS[0], 0.1)
    assert f"{100 / (2 * len(STEPS)):3.0f}%" in capsys.readouterr().err   # a step of a table, not a whole table
    for table in ("a", "b"):
        for step in STEPS:
            progress.step_done(table, step, 0.1)
        progress.table_done(TableReport(table=table, status="ok"))
    progress.close()
    err = capsys.readouterr().err
    assert "cataloged 2/2 100%" in err and "  done a in 0.6 s" in err
    assert not [w for w in recwarn if "clamping" in str(w.message)]   # never past the end
