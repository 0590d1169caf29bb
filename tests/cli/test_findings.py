"""cli/findings.py: each finding of `cataloger run --json` says what was found, the numbers behind
it (never a value of the table), its investigation's verdict and why, and its review state; and
the documented example holds to the documented schema."""

import json

from run_json import SCHEMA, assert_valid_run_json

from cataloger_dagster.cli.findings import EVIDENCE_NUMBERS, summarize, summarize_all
from cataloger_dagster.cli.runner import CatalogReport, TableReport
from cataloger_dagster.core.models import CodeInvestigation, IssueModel, ReviewMark

SECRET = "ssn-078-05-1120"


def finding(**update) -> IssueModel:
    return IssueModel(**{
        "id": "people_invalid_format_ssn", "type": "invalid_format", "severity": "low", "category": "quick_fixes",
        "description": "3 values of ssn (0.30%) are not valid ssn values.", "suggestedAction": "Fix them.",
        "affectedColumns": ["ssn"], "affectedRows": 3,
        "details": {"rows": 3, "fraction": 0.003, "examples": [SECRET], "pattern": "ddd-dd-dddd",
                    "band": {"low": 0.0, "high": 0.01, "method": "robust"}, "nan": float("nan"),
                    "chart": {"series": {"rows": [1.0, 2.0]}}}, **update})


def check(**update) -> CodeInvestigation:
    return CodeInvestigation(**{
        "code": "print(1)", "success": True, "output": {}, "issue_id": "people_invalid_format_ssn",
        "verdict": "confirmed", "reason": "3 of 1,000 values do not match ddd-dd-dddd",
        "evidence": {"rows": 3, "percent": 0.3, "examples": [SECRET], "all_counted": True}, **update})


def test_a_finding_says_its_numbers_verdict_and_reason_and_no_value_of_the_table():
    summary = summarize(finding(), check())
    assert summary.description.startswith("3 values of ssn")
    assert summary.evidence.finding == {"rows": 3, "fraction": 0.003, "band.low": 0.0, "band.high": 0.01}
    assert summary.evidence.investigation == {"rows": 3, "percent": 0.3, "all_counted": True}
    assert (summary.verdict, summary.verdict_reason) == ("confirmed", "3 of 1,000 values do not match ddd-dd-dddd")
    assert (summary.review, summary.review_mark, summary.source) == ("none", None, "detector")
    assert SECRET not in summary.model_dump_json()


def test_counts_by_value_are_left_out_since_their_keys_are_the_tables_values():
    # a spelling's rows by spelling: every key a value of the table, every value a count
    summary = summarize(finding(details={"rows": 4, "twins": {"shipped ": 3, SECRET: 1},
                                         "band": {"low": 0.0, "method": "robust"}}), check())
    assert summary.evidence.finding == {"rows": 4, "band.low": 0.0}
    assert SECRET not in summary.model_dump_json() and "shipped" not in summary.model_dump_json()


def test_the_evidence_stays_short():
    many = {f"n{i}": i for i in range(50)}
    summary = summarize(finding(details=many), check(evidence=many))
    assert len(summary.evidence.finding) == len(summary.evidence.investigation) == EVIDENCE_NUMBERS


def test_a_finding_not_investigated_or_whose_check_failed_says_so():
    assert summarize(finding()).verdict is None and summarize(finding()).evidence.investigation == {}
    failed = summarize(finding(), check(success=False, verdict=None, reason=None,
                                        error="Traceback (most recent call last):\n  ...\nZeroDivisionError: division by zero\n"))
    assert failed.verdict == "error" and failed.verdict_reason == "its check's code failed: ZeroDivisionError: division by zero"
    assert summarize(finding(), check(verdict=None)).verdict == "no_verdict"


def test_the_review_state_is_the_persons_verdict_and_the_mark_what_it_makes_of_this_run():
    def marked(state, verdict):
        mark = ReviewMark(state=state, verdict=verdict, reviewer="ana", at="2026-11-20T10:00:00Z",
                          note="known", reviewed_id="people_invalid_format_ssn")
        return summarize(finding(review=mark))

    assert [(s.review, s.review_mark.mark) for s in (
        marked("accepted", "accept"), marked("dismissed", "dismiss"), marked("worse_since_dismissed", "dismiss"),
        marked("expected", "expected"), marked("changed_since_expected", "expected"))] == [
        ("accepted", "accepted"), ("dismissed", "dismissed"), ("dismissed", "worse_since_dismissed"),
        ("expected", "expected"), ("expected", "changed_since_expected")]
    assert marked("accepted", "accept").review_mark.reviewer == "ana"


def test_each_finding_takes_its_own_investigation():
    other = check(issue_id="people_missing_values_name", verdict="refuted", reason="no value is missing")
    found = summarize_all([finding(), finding(id="people_missing_values_name", type="missing_values")],
                          [check(), other])
    assert [s.verdict for s in found] == ["confirmed", "refuted"]


def test_a_report_holds_to_the_documented_schema_and_the_example_too():
    mark = ReviewMark(state="expected", verdict="expected", reviewer="ana", at="2026-11-20T10:00:00Z",
                      reviewed_id="people_invalid_format_ssn")
    report = CatalogReport(database="duckdb:///data/people.duckdb", store="local folder /s", catalog="people.duckdb",
                           tables=[TableReport(table="people", status="ok", issues=[summarize(finding(), check())],
                                               reviewed=[summarize(finding(review=mark))]),
                                   TableReport(table="broken", status="failed", error="cannot be read")])
    assert_valid_run_json(json.loads(report.to_json()))
    assert_valid_run_json(json.loads((SCHEMA.parent / "run-json-example.json").read_text()))
