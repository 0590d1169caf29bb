import ibis

from cataloger_dagster.core.guardrails import guards, pins
from cataloger_dagster.core.guardrails.model import Unguarded
from cataloger_dagster.core.models import ColumnProfile, Fingerprint, IssueModel, ReviewMark, TableProfile

T = ibis.table({"code": "string", "n": "int64"}, name="t")
PROFILE = TableProfile(database="d", table="t", row_count=10, column_count=0, columns=[], sample_rows=[],
                       fingerprint=Fingerprint(schema_hash="h", row_count=10, value="v"))
FACTS = pins.Facts(T, "duckdb", PROFILE)


def _issue(type_, columns, **details):
    return IssueModel(id=f"t_{type_}", type=type_, severity="medium", description="d", affectedColumns=columns,
                      suggestedAction="a", category="quick_fixes", affectedRows=4, details=details)


def _mark(state):
    return ReviewMark(state=state, verdict="", reviewer="r", at="2026-11-27T00:00:00Z", reviewed_id="x", rows_then=2)


def test_what_a_finding_s_verdict_and_review_make_of_it():
    issue = _issue("whitespace_values", ["code"])
    assert guards.standing(issue, {issue.id: "confirmed"}) == "finding"
    assert guards.standing(issue, {issue.id: "refuted"}) is None
    assert guards.standing(issue, {}) is None  # open, not yet confirmed
    assert guards.standing(issue.model_copy(update={"review": _mark("accepted")}), {}) == "finding"
    assert guards.standing(issue.model_copy(update={"review": _mark("dismissed")}), {issue.id: "confirmed"}) is None
    assert guards.standing(issue.model_copy(update={"review": _mark("expected")}), {}) == "expected"


def test_placeholders_of_a_number_column_are_compared_as_numbers():
    g = guards.guard(FACTS, _issue("sentinel_values", ["n"], values={"-999": 3, "NA": 1}), "finding", {})
    assert g.kind == "placeholder" and "-999" in g.sql and "'-999'" not in g.sql and g.high == 4


def test_a_finding_without_a_row_test_is_named_as_unguarded():
    got = guards.guard(FACTS, _issue("mixed_units", ["code"]), "finding", {})
    assert isinstance(got, Unguarded) and "no test of single rows" in got.reason
    bare = guards.guard(FACTS, _issue("orphan_references", ["code"], target_table="gone"), "finding", {})
    assert isinstance(bare, Unguarded) and "details" in bare.reason


def test_rows_repeated_with_their_key_are_guarded_as_the_keys_uniqueness_and_bare_repeats_are_not():
    folded = _issue("duplicate_rows", ["code", "n"], duplicate_rows=3,
                    repeated_keys={"code": {"duplicated_values": 3, "rows": 6}})
    g = guards.guard(FACTS, folded, "finding", {})
    assert (g.name, g.kind, g.columns, g.guards) == ("unique:code", "unique", ["code"], folded.id)
    assert g.high == guards.tolerance.grown(3)  # the folded key finding's level, not the rows' 4
    assert '"code"' in g.sql
    bare = guards.guard(FACTS, _issue("duplicate_rows", ["code", "n"], duplicate_rows=3), "finding", {})
    assert isinstance(bare, Unguarded)
    two_keys = _issue("duplicate_rows", ["code", "n"], repeated_keys={"code": {}, "n": {}})
    assert isinstance(guards.guard(FACTS, two_keys, "finding", {}), Unguarded)
