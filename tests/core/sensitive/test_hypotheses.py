"""A column's class as a hypothesis for the investigations stage: one per class the classifier gave
from the whole values and the sandbox can check, and the verdicts read back without changing the
stored profile."""

from __future__ import annotations

from cataloger_dagster.core.models import ColumnProfile, SensitiveClass, TableProfile
from cataloger_dagster.core.sensitive.hypotheses import class_hypotheses, standing_classes


def _column(name: str, *classes: SensitiveClass) -> ColumnProfile:
    return ColumnProfile(name=name, dtype="string", kind="string", count=10, nulls=0, null_fraction=0.0,
                         distinct=10, sensitive=list(classes))


def test_the_verdicts_come_from_the_runs_investigations_and_keep_the_class_in_the_profile():
    from cataloger_dagster.core.models import CodeInvestigation, TableProfile
    from cataloger_dagster.core.sensitive.hypotheses import class_hypotheses, with_verdicts

    email = SensitiveClass(name="email", share=1.0, sampled=200, matched=200, signals=["email-validator"])
    in_text = SensitiveClass(name="phone", share=0.2, sampled=200, matched=40, in_text=True)
    profile = TableProfile.model_construct(table="t", columns=[_column("contact", email), _column("note", in_text)])
    [hypothesis] = class_hypotheses(profile)  # a class inside free text is no claim about the whole value
    assert hypothesis.details["needed"] == 0.8 and hypothesis.affectedColumns == ["contact"]
    said = with_verdicts(profile, [CodeInvestigation(code="", success=True, output=None, issue_id=hypothesis.id,
                                                     verdict="refuted")])
    assert [c.verdict for c in said.columns[0].sensitive] == ["refuted"]
    assert profile.columns[0].sensitive[0].verdict is None  # the stored profile is not changed


def test_only_the_classifiers_claims_on_whole_values_become_hypotheses():
    said = SensitiveClass(name="email", share=0.0, sampled=0, matched=0, source="review", reviewed=True)
    name = SensitiveClass(name="person_name", share=0.9, sampled=200, matched=180, signals=["column name: name"])
    card = SensitiveClass(name="payment_card", share=0.6, sampled=200, matched=120, signals=["column name: card"])
    profile = TableProfile.model_construct(table="t", columns=[_column("a", said), _column("b", name),
                                                               _column("c", card)])
    named, card_claim = class_hypotheses(profile)  # a person's review is no claim to test
    assert named.affectedColumns == ["b"] and card_claim.affectedColumns == ["c"]
    assert card_claim.details["needed"] == 0.5  # its name points at it
    # the rules the classifier applied, by name: those needing the column's name only when it had it
    assert named.details["rules"] == ["person_name"] and card_claim.details["rules"] == ["payment_card"]
    phone = SensitiveClass(name="phone", share=0.9, sampled=200, matched=180, signals=["phonenumbers"])
    by_values = class_hypotheses(TableProfile.model_construct(table="t", columns=[_column("d", phone)]))
    assert by_values[0].details["rules"] == ["phone"] and by_values[0].details["needed"] == 0.8
    named_phone = phone.model_copy(update={"signals": ["column name: phone"]})
    by_name = class_hypotheses(TableProfile.model_construct(table="t", columns=[_column("phone", named_phone)]))
    assert by_name[0].details["rules"] == ["phone_shaped", "phone"]  # the cheaper shape first


def test_a_refuted_class_no_longer_stands():
    kept = SensitiveClass(name="email", share=1.0, sampled=9, matched=9, verdict="confirmed")
    gone = SensitiveClass(name="iban", share=0.9, sampled=9, matched=8, verdict="refuted")
    assert [c.name for c in standing_classes(_column("x", kept, gone))] == ["email"]


def _said(profile, column, data_class, verdict):
    from cataloger_dagster.core.models import CodeInvestigation
    from cataloger_dagster.core.sensitive.hypotheses import hypothesis_id

    return CodeInvestigation(code="", success=True, output=None, verdict=verdict,
                             issue_id=hypothesis_id(profile.table, column, data_class))


def test_a_later_confirming_verdict_brings_a_refuted_class_back_and_a_review_outranks_a_verdict():
    from cataloger_dagster.core.sensitive.hypotheses import with_verdicts

    found = SensitiveClass(name="email", share=1.0, sampled=200, matched=200, signals=["email-validator"])
    reviewed = found.model_copy(update={"reviewed": True})
    profile = TableProfile.model_construct(table="t", columns=[_column("a", found), _column("b", reviewed)])
    refuted = with_verdicts(profile, [_said(profile, "a", "email", "refuted"), _said(profile, "b", "email", "refuted")])
    # a person said column b holds e-mail addresses: no verdict refutes it
    assert [[c.verdict for c in col.sensitive] for col in refuted.columns] == [["refuted"], [None]]
    assert [len(standing_classes(col)) for col in refuted.columns] == [0, 1]
    again = with_verdicts(refuted, [_said(profile, "a", "email", "confirmed")])
    assert [c.verdict for c in again.columns[0].sensitive] == ["confirmed"]
    assert with_verdicts(refuted, []).columns[0].sensitive[0].verdict == "refuted"  # none new: it is carried


def test_the_verdicts_carried_are_the_latest_stored_runs(tmp_path):
    from cataloger_dagster.core.layout import INVESTIGATIONS
    from cataloger_dagster.core.models import InvestigationsResult
    from cataloger_dagster.core.results import save_result
    from cataloger_dagster.core.sensitive.hypotheses import last_investigations
    from cataloger_dagster.resources.store import LocalStore, table_prefix

    store = LocalStore(root=str(tmp_path))
    profile = TableProfile.model_construct(table="t", columns=[])
    assert last_investigations(store, "d.duckdb", "t") == []  # the first run: nothing to carry
    prefix = table_prefix("d.duckdb", "t")
    for timestamp, verdict in (("20260101T000000Z", "confirmed"), ("20260102T000000Z", "refuted")):
        save_result(store, prefix, timestamp, INVESTIGATIONS,
                    InvestigationsResult(table="t", investigations=[_said(profile, "a", "email", verdict)]))
    assert [i.verdict for i in last_investigations(store, "d.duckdb", "t")] == ["refuted"]
