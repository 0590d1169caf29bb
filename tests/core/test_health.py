"""A table's health score and its band."""

from __future__ import annotations

from cataloger_dagster.core.health import health_band, health_score
from cataloger_dagster.core.models import AnalysisResultModel, IssueModel
from tests.core.render.test_pages import make_results


def test_health_score_responds_to_severity_rows_and_pass_rate():
    profile, _, issues, _ = make_results(hostile=False)

    def one(**kw) -> AnalysisResultModel:
        base = dict(id="X", type="missing_values", severity="low", description="d", affectedColumns=["amount"],
                    suggestedAction="a", category="quick_fixes", affectedRows=60)
        base.update(kw)
        return AnalysisResultModel(issues=[IssueModel(**base)], summary="", completedAt="")

    none = AnalysisResultModel(issues=[], summary="", completedAt="")
    assert health_score(profile, none) == 100.0
    low, medium, high = (health_score(profile, one(severity=s)) for s in ("low", "medium", "high"))
    assert 100.0 > low > medium > high
    assert health_score(profile, one(severity="high", affectedRows=6000)) < high
    assert health_score(profile, one(severity="high", affectedRows=None)) == health_score(
        profile, one(severity="high", affectedRows=6000))
    full = health_score(profile, issues)
    assert health_score(profile, issues, pass_rate=1.0) == full
    assert health_score(profile, issues, pass_rate=0.5) < full
    many = AnalysisResultModel(issues=[i.model_copy(update={"id": f"I{n}", "severity": "high"})
                                       for n, i in enumerate(issues.issues * 40)], summary="", completedAt="")
    assert 0.0 <= health_score(profile, many, pass_rate=0.0) < 1.0
    assert health_band(90) == "good" and health_band(70) == "fair" and health_band(10) == "poor"
