"""core/cataloged.py: one run's stored results folded into what a catalog of tables shows, from the
results of a real catalog run (the shop database: `events` has planted defects and references
`customers`)."""

from __future__ import annotations

from cataloger_dagster.core.cataloged import cataloged_table, referenced_tables
from cataloger_dagster.core.layout import INVESTIGATIONS, ISSUES, PROFILE, UNDERSTANDING, table_prefix
from cataloger_dagster.core.models import (
    AnalysisResultModel, CodeInvestigation, DatasetUnderstandingModel, InvestigationsResult, TableProfile,
)
from cataloger_dagster.resources.store import LocalStore

DATABASE = "shop.duckdb"


def stored(store_path, table: str):
    store = LocalStore(root=str(store_path))
    prefix = table_prefix(DATABASE, table)
    run = store.list_runs(prefix)[-1]
    return run, {name: store.read_json(prefix, run, name) for name in (PROFILE, UNDERSTANDING, ISSUES, INVESTIGATIONS)}


def fold(run, files, investigations=None):
    return cataloged_table(
        database=DATABASE, table="events", run=run, profile=TableProfile.model_validate(files[PROFILE]),
        understanding=DatasetUnderstandingModel.model_validate(files[UNDERSTANDING]),
        issues=AnalysisResultModel.model_validate(files[ISSUES]), investigations=investigations,
        pass_rate=None, page="page.html")


def test_a_refuted_finding_is_no_open_finding_and_weighs_on_no_health(cataloged_shop):
    run, files = stored(cataloged_shop[1], "events")
    before = fold(run, files)
    issues = AnalysisResultModel.model_validate(files[ISSUES]).issues
    assert len(before.findings) == len(issues) >= 2
    assert [f.severity for f in before.findings] == sorted((f.severity for f in before.findings),
                                                           key=["high", "medium", "low"].index)
    refuted = InvestigationsResult(table="events", investigations=[
        CodeInvestigation(code="", success=True, output=None, issue_id=issues[0].id, verdict="refuted")])
    after = fold(run, files, refuted)
    assert issues[0].id not in [f.id for f in after.findings] and len(after.findings) == len(issues) - 1
    assert after.health > before.health
    assert sum(after.findings_by_severity.values()) == len(after.findings)


def test_references_are_the_other_tables_orphan_findings_name_reviewed_or_not(cataloged_shop):
    run, files = stored(cataloged_shop[1], "events")
    issues = AnalysisResultModel.model_validate(files[ISSUES])
    assert referenced_tables(issues, "events") == ("customers",)
    orphan = next(i for i in issues.issues if i.type == "orphan_references")
    # set aside by a review, the reference is still one; a table referencing itself draws nothing
    aside = issues.model_copy(update={"issues": [], "reviewed": [orphan]})
    assert referenced_tables(aside, "events") == ("customers",)
    assert referenced_tables(aside, "customers") == ()
