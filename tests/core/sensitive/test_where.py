"""Where personal data lives: one row per column holding a class about a person, secrets left
out, the share from the classifier only, and a person's confirmation carried."""

from __future__ import annotations

from cataloger_dagster.core.models import ColumnProfile, SensitiveClass
from cataloger_dagster.core.sensitive.where import personal_column, where_personal_data, refuted_by_investigation


def _column(name: str, *classes: SensitiveClass) -> ColumnProfile:
    return ColumnProfile(name=name, dtype="string", kind="string", count=10, nulls=0, null_fraction=0.0, distinct=10,
                         sensitive=list(classes))


def test_a_column_about_a_person_is_listed_with_its_highest_classifier_share():
    row = personal_column("t", _column("c", SensitiveClass(name="email", share=0.8, sampled=10, matched=8),
                                       SensitiveClass(name="phone", share=0.95, sampled=20, matched=19)))
    assert row is not None and row.classes == ("email", "phone") and row.share == 0.95 and not row.reviewed
    assert row.as_json() == {"table": "t", "column": "c", "classes": ("email", "phone"), "share": 0.95,
                             "reviewed": False, "verdict": None, "refuted": ()}


def test_a_secret_is_sensitive_but_not_personal_and_a_plain_column_is_not_listed():
    secret = SensitiveClass(name="secret", share=1.0, sampled=5, matched=5)
    assert personal_column("t", _column("key", secret)) is None
    assert personal_column("t", _column("plain")) is None


def test_a_class_a_person_added_has_no_share_but_is_reviewed():
    added = SensitiveClass(name="person_name", share=0.0, sampled=0, matched=0, source="review", reviewed=True)
    row = personal_column("t", _column("who", added))
    assert row is not None and row.share is None and row.reviewed


def test_the_list_is_by_table_then_column_and_skips_the_unlisted():
    email = SensitiveClass(name="email", share=1.0, sampled=3, matched=3)
    rows = [personal_column("b", _column("z", email)), None, personal_column("a", _column("y", email)),
            personal_column("b", _column("a", email))]
    assert [(r.table, r.column) for r in where_personal_data(rows)] == [("a", "y"), ("b", "a"), ("b", "z")]


def test_a_class_its_investigation_refuted_leaves_the_list_and_the_verdict_of_the_rest_is_said():
    refuted = SensitiveClass(name="email", share=1.0, sampled=200, matched=200, verdict="refuted")
    confirmed = SensitiveClass(name="phone", share=0.9, sampled=200, matched=180, verdict="confirmed")
    open_ = SensitiveClass(name="person_name", share=0.9, sampled=200, matched=180, verdict="inconclusive")
    mixed = personal_column("t", _column("m", refuted, confirmed))
    assert mixed.classes == ("phone",) and mixed.refuted == ("email",) and mixed.verdict == "confirmed"
    assert personal_column("t", _column("n", open_)).verdict == "inconclusive"
    gone = personal_column("t", _column("g", refuted))
    assert gone.classes == () and gone.verdict == "refuted" and gone.share is None
    assert [r.column for r in where_personal_data([mixed, gone])] == ["m"]
    assert [r.column for r in refuted_by_investigation([mixed, gone, None])] == ["g"]
