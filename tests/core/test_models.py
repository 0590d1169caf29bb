"""`models`: the contracts between stages.  `severity_counts` (one count by severity for models and
stored JSON alike), `missing_severity`, `pass_rate`, `TableProfile.column`, and the seed field names
and value sets that stored JSON, prompts and agents rely on."""

import pydantic
import pytest

from cataloger_dagster.core.models import (
    SEVERITIES,
    AnalysisResultModel,
    CodeInvestigation,
    ColumnProfile,
    ColumnSummaryModel,
    Fingerprint,
    InvestigationsResult,
    IssueModel,
    SmartFixFollowupModel,
    TableProfile,
    missing_severity,
    pass_rate,
    severity_counts,
)


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


# --------------------------------------------------------------------------
# the missing-values thresholds and the pass rate
# --------------------------------------------------------------------------


@pytest.mark.parametrize("fraction, severity", [
    (1.0, "high"), (0.5001, "high"),
    (0.5, "medium"), (0.2, "medium"),      # ">50% high, 20-50% medium": both ends are medium
    (0.1999, "low"), (0.0, "low"),
])
def test_missing_severity_follows_the_seed_thresholds(fraction, severity):
    assert missing_severity(fraction) == severity


def inv(success: bool, verdict) -> CodeInvestigation:
    return CodeInvestigation(code="", success=success, output=None, verdict=verdict)


def test_pass_rate_counts_investigations_that_ran_and_decided():
    assert pass_rate(None) is None and pass_rate([]) is None
    assert pass_rate([inv(True, "confirmed"), inv(True, "refuted")]) == 1.0
    # "inconclusive" decides nothing; code that ran without a verdict, or failed, is not a pass
    assert pass_rate([inv(True, "inconclusive"), inv(True, "refuted"), inv(True, None), inv(False, None),
                      inv(False, "confirmed")]) == 0.2


# --------------------------------------------------------------------------
# the models
# --------------------------------------------------------------------------


def profile() -> TableProfile:
    return TableProfile(
        database="shop", table="orders", row_count=3, column_count=2,
        columns=[ColumnProfile(name=n, dtype="int64", kind="integer", count=3, nulls=0, null_fraction=0.0)
                 for n in ("id", "Id")],
        sample_rows=[], fingerprint=Fingerprint(schema_hash="s", row_count=3, value="v"),
    )


def test_a_profile_finds_its_columns_by_exact_name():
    p = profile()
    assert p.column("Id") is p.columns[1] and p.column("id") is p.columns[0]
    with pytest.raises(KeyError, match="'orders' has no column 'ID'"):
        p.column("ID")


def test_issue_values_are_limited_to_the_seed_sets():
    with pytest.raises(pydantic.ValidationError):
        issue(1, "critical")
    with pytest.raises(pydantic.ValidationError):
        IssueModel(id="i", type="t", severity="low", description="", affectedColumns=[], suggestedAction="",
                   category="slow_fixes")
    with pytest.raises(pydantic.ValidationError):
        ColumnSummaryModel(name="c", dataType="integer", description="", sampleValues=[])
    with pytest.raises(pydantic.ValidationError):
        inv(True, "maybe")


def test_stored_json_with_the_seed_field_names_round_trips():
    stored = {"issues": [{"id": "orders_missing_values_note", "type": "missing_values", "severity": "high",
                          "description": "d", "affectedColumns": ["note"], "suggestedAction": "fill",
                          "category": "quick_fixes", "affectedRows": 7, "temporalPattern": None}],
              "summary": "s", "completedAt": "2026-01-01T00:00:00Z"}
    result = AnalysisResultModel.model_validate(stored)
    # our own fields have defaults, so seed-shaped JSON reads as it is
    assert result.issues[0].source == "detector" and result.issues[0].details == {}
    dumped = result.model_dump(mode="json")
    assert {k: dumped["issues"][0][k] for k in stored["issues"][0]} == stored["issues"][0]
    assert AnalysisResultModel.model_validate(dumped) == result


def test_mutable_defaults_are_not_shared():
    a, b = issue(1, "low"), issue(2, "low")
    a.details["rows"] = 3
    assert b.details == {}
    r1 = InvestigationsResult(table="t", investigations=[])
    r1.reused.append("x")
    assert InvestigationsResult(table="t", investigations=[]).reused == []


def test_issues_stored_before_followups_existed_load_without_one():
    stored = {"issues": [{"id": "o_outliers_total", "type": "outliers", "severity": "medium", "description": "d",
                          "affectedColumns": ["total"], "suggestedAction": "a", "category": "smart_fixes",
                          "source": "detector", "details": {"rows": 3}}],
              "summary": "s", "completedAt": "2026-01-01T00:00:00Z"}
    result = AnalysisResultModel.model_validate(stored)
    assert result.issues[0].followup is None
    assert AnalysisResultModel.model_validate(result.model_dump(mode="json")) == result


def test_a_followup_keeps_seed_001s_shape_and_its_option_count():
    seed = {"prompt": "Which format should be the canonical name?",
            "options": [{"key": "most_frequent", "label": "Most common: 'iPhone 13'"},
                        {"key": "custom", "label": "Let me specify"}],
            "onResponse": {"most_frequent": {"action": "standardize_values",
                                             "parameters": {"column": "Product", "canonical": "iPhone 13"}}}}
    followup = SmartFixFollowupModel.model_validate(seed)
    assert followup.onResponse["most_frequent"].script is None and followup.examples is None
    assert followup.model_dump(mode="json", include={"prompt", "options"}) == {k: seed[k] for k in ("prompt", "options")}
    issue_ = IssueModel(id="i", type="outliers", severity="low", description="d", affectedColumns=["c"],
                        suggestedAction="a", category="smart_fixes", followup=followup)
    assert IssueModel.model_validate_json(issue_.model_dump_json()) == issue_
    for options in ([seed["options"][0]], seed["options"] * 3):   # one question, 2-4 options
        with pytest.raises(pydantic.ValidationError):
            SmartFixFollowupModel.model_validate({**seed, "options": options})


def test_results_stored_before_reviews_existed_still_read():
    from cataloger_dagster.core.models import AnalysisResultModel

    stored = {"issues": [{"id": "t_missing_values_a", "type": "missing_values", "severity": "low",
                          "description": "d", "affectedColumns": ["a"], "suggestedAction": "s",
                          "category": "quick_fixes"}], "summary": "", "completedAt": ""}
    result = AnalysisResultModel.model_validate(stored)
    assert result.reviewed == [] and result.quieted == []
    assert result.issues[0].review is None and result.issues[0].precision is None


# --------------------------------------------------------------------------
# the kinds of values, defined once
# --------------------------------------------------------------------------


def test_the_kinds_of_numbers_and_times_are_column_kinds():
    import typing

    from cataloger_dagster.core.models import NUMERIC_KINDS, TEMPORAL_KINDS, ColumnKind

    assert set(NUMERIC_KINDS) | set(TEMPORAL_KINDS) <= set(typing.get_args(ColumnKind))
    assert not set(NUMERIC_KINDS) & set(TEMPORAL_KINDS)


# files that may spell the kinds, and why
KINDS_EXEMPT = {
    "core/models.py": "the one definition",
}


def kinds_lists(items: list[str]) -> bool:
    """Whether a literal of column kinds holds every numeric or every temporal kind: a copy of one."""
    import typing

    from cataloger_dagster.core.models import NUMERIC_KINDS, TEMPORAL_KINDS, ColumnKind

    return set(items) <= set(typing.get_args(ColumnKind)) and (
        set(NUMERIC_KINDS) <= set(items) or set(TEMPORAL_KINDS) <= set(items))


def test_the_kinds_scan_finds_a_copy_and_leaves_subsets_and_words():
    assert kinds_lists(["integer", "decimal", "float"]) and kinds_lists(["timestamp", "date", "string"])
    assert not kinds_lists(["float", "decimal"])                      # the non-integer numbers: a choice
    assert not kinds_lists(["updated", "timestamp", "date"])          # words of a column's name


def test_no_second_tuple_of_numeric_or_temporal_kinds():
    from tests.core.test_vocabulary import package_literals

    found = [f"{file}:{line}: {items}" for file, line, items in package_literals(set(KINDS_EXEMPT))
             if kinds_lists(items)]
    assert not found, "kinds listed outside core/models.py (import NUMERIC_KINDS, TEMPORAL_KINDS):\n" + "\n".join(found)


# --------------------------------------------------------------------------
# profiled as text: a typed field, read from profiles stored before it too
# --------------------------------------------------------------------------

_AS_TEXT = dict(name="spot", dtype="point", kind="other", count=3, nulls=0, null_fraction=0.0,
                notes=["top values: counted", "profiled as text: Arrow has no point"])


def test_a_stored_profile_without_the_field_reads_it_from_its_note():
    stored = dict(_AS_TEXT)
    assert ColumnProfile.model_validate(stored).profiled_as_text == "Arrow has no point"
    assert ColumnProfile.model_validate_json(ColumnProfile(**stored).model_dump_json(exclude={"profiled_as_text"})
                                             ).profiled_as_text == "Arrow has no point"
    plain = ColumnProfile(**{**stored, "notes": ["std: not defined for string"]})
    assert plain.profiled_as_text is None
    # written by this version: the field alone says it
    assert ColumnProfile(**stored, profiled_as_text=None).profiled_as_text is None


def test_a_profile_pickled_before_the_field_existed_loads_with_it():
    import pickle

    class Earlier:  # what pickle carries of a profile written before the field: its state lacks it
        def __reduce__(self):
            column = ColumnProfile(**_AS_TEXT)
            state = column.__getstate__()
            for name in ("profiled_as_text", "storage_classes"):
                del state["__dict__"][name]
            return (ColumnProfile.__new__, (ColumnProfile,), state)

    loaded = pickle.loads(pickle.dumps(Earlier()))
    assert isinstance(loaded, ColumnProfile)
    assert loaded.profiled_as_text == "Arrow has no point" and loaded.storage_classes is None
    assert loaded.model_dump()["notes"] == _AS_TEXT["notes"]
