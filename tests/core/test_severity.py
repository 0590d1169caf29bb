"""`models.severity_counts`: one count by severity for models and stored JSON alike."""

from cataloger_dagster.core.models import SEVERITIES, IssueModel, severity_counts


def issue(n: int, severity: str) -> IssueModel:
    return IssueModel(id=f"i{n}", type="missing_values", severity=severity, description="d",
                      affectedColumns=["c"], suggestedAction="a", category="quick_fixes")


def test_counts_every_severity_most_severe_first():
    issues = [issue(1, "low"), issue(2, "high"), issue(3, "low")]
    counts = severity_counts(i.severity for i in issues)
    assert counts == {"high": 1, "medium": 0, "low": 2}
    assert list(counts) == list(SEVERITIES) == ["high", "medium", "low"]


def test_stored_json_counts_the_same_and_ignores_unknown_severities():
    stored = [{"severity": "high"}, {"severity": "critical"}, {}, {"severity": "medium"}]
    assert severity_counts(i.get("severity") for i in stored) == {"high": 1, "medium": 1, "low": 0}
    assert severity_counts([]) == {"high": 0, "medium": 0, "low": 0}
