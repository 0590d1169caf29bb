"""A column family's issues of one type and one cause are one issue naming its members."""

from __future__ import annotations

from cataloger_dagster.core.families import Family
from cataloger_dagster.core.issues.detectors.families import merge_family_issues
from cataloger_dagster.core.models import IssueModel
from tests.support import null_shapes


def _issue(column: str, type_: str = "missing_values", rows: int = 10, severity: str = "low", **details) -> IssueModel:
    return IssueModel(id=f"t_{type_}_{column}", type=type_, severity=severity, description=f"{column} is off.",
                      affectedColumns=[column], suggestedAction="Fix it.", category="quick_fixes",
                      affectedRows=rows, details=details)


def test_scattered_nulls_in_a_family_are_one_missing_values_issue(tables):
    tables.sql(null_shapes.scattered_family_sql(columns=12))
    found = tables.detect("cases")
    missing = [i for i in found.values() if i.type == "missing_values"]
    assert len(missing) == 1
    [issue] = missing
    members = [f"new_sp_m{a}14" for a in range(6)] + [f"new_sp_f{a}14" for a in range(6)]
    assert issue.affectedColumns == members and issue.id == "cases_missing_values_new_sp_N"
    assert issue.details["family"] == {"label": "new_sp_m014…new_sp_f514", "stem": "new_sp_N",
                                       "members": members, "count": 12}
    profile = tables.profile("cases")
    assert issue.details["members"] == {m: profile.column(m).nulls for m in members}
    assert issue.affectedRows == max(issue.details["members"].values())
    assert "12 of the 12 columns of the family new_sp_m014…new_sp_f514" in issue.description


def test_different_causes_in_a_family_stay_apart():
    fam = Family("q#_#", "int64", ("q1_2020", "q2_2020", "q3_2020", "q4_2020"))
    issues = [_issue("q1_2020", "sentinel_values", rows=3, values={"-999": 3}),
              _issue("q2_2020", "sentinel_values", rows=5, values={"-999": 5}, severity="medium"),
              _issue("q3_2020", "sentinel_values", values={"9999": 2}),
              _issue("q4_2020", "missing_values"),
              _issue("country", "missing_values")]
    merged = merge_family_issues("t", issues, [fam])
    assert [i.id for i in merged] == ["t_sentinel_values_qN_N", "t_sentinel_values_q3_2020", "t_missing_values_q4_2020",
                                      "t_missing_values_country"]
    first = merged[0]
    assert first.affectedColumns == ["q1_2020", "q2_2020"] and first.severity == "medium"
    assert first.details["values"] == {"-999": 3} and first.details["members"] == {"q1_2020": 3, "q2_2020": 5}
    assert first.affectedRows == 5


def test_columns_outside_a_family_are_left_alone():
    issues = [_issue("a"), _issue("b")]
    assert merge_family_issues("t", issues, []) == issues
