"""People's verdicts on a real DuckDB table's classes, applied to its next classification: a
refuted class stops on its column (and its values leave in clear), a missed class is added
(and masked), and refutals on similar columns raise the share a class needs elsewhere."""

from __future__ import annotations

import ibis
import pytest

from cataloger_dagster.core.models import Fingerprint, TableProfile
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.core.reviews.model import Review, class_review_id
from cataloger_dagster.core.sensitive.masking import protect_profile
from cataloger_dagster.core.sensitive.teaching import (
    STRICT_SHARE,
    Teaching,
    class_precision,
    similar_key,
    snapshot,
    taught,
)
from personal_accounts import ROWS, make_accounts


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> TableProfile:
    path = make_accounts(tmp_path_factory.mktemp("teach") / "accounts.duckdb")
    table = ibis.duckdb.connect(str(path)).table("accounts")
    fp = Fingerprint(schema_hash="x", row_count=ROWS, value="x")
    return compute_profile(table, database="accounts.duckdb", table_name="accounts", fingerprint=fp)


def classes(profile: TableProfile) -> dict[str, list[str]]:
    return {c.name: [s.name for s in c.sensitive] for c in profile.columns}


def verdict(profile: TableProfile, column: str, key: str, said: str, table: str = "accounts") -> Review:
    col = next(c for c in profile.columns if c.name == column)
    return Review(table=table, issue_id=class_review_id(key, column), verdict=said, reviewer="ana",
                  data_class=snapshot(col, key))


def test_the_classifier_alone_takes_firms_for_people_and_misses_the_contact(profile):
    assert classes(profile) == {"id": [], "customer_name": ["person_name"], "contact": [], "email": ["email"]}


def test_not_personal_stops_the_class_on_its_column_and_its_values_leave_in_clear(profile):
    review = verdict(profile, "customer_name", "person_name", "not_personal")
    out = taught(profile, Teaching(reviews=[review]))
    assert classes(out)["customer_name"] == [] and classes(out)["email"] == ["email"]
    column = next(c for c in out.columns if c.name == "customer_name")
    assert any("not person name" in n and "ana" in n for n in column.notes)
    shown = protect_profile(out)
    assert shown.sample_rows[0]["customer_name"] == "Acme Holdings"  # the trade-off: no longer masked
    assert shown.sample_rows[0]["email"] != profile.sample_rows[0]["email"]  # the rest still is


def test_personal_adds_a_missed_class_and_masking_starts(profile):
    review = verdict(profile, "contact", "person_name", "personal")
    assert review.data_class.found is False
    out = taught(profile, Teaching(reviews=[review]))
    added = next(c for c in out.columns if c.name == "contact").sensitive
    assert [(s.name, s.source, s.reviewed) for s in added] == [("person_name", "review", True)]
    assert protect_profile(out).sample_rows[0]["contact"] == "Xxx Xxxxxxxx"


def test_the_latest_verdict_wins_and_a_confirmation_marks_the_class_reviewed(profile):
    refuted = verdict(profile, "email", "email", "not_personal")
    confirmed = verdict(profile, "email", "email", "personal")
    out = taught(profile, Teaching(reviews=[refuted, confirmed]))
    (email,) = next(c for c in out.columns if c.name == "email").sensitive
    assert email.reviewed and email.source == "classifier" and any("confirmed" in s for s in email.signals)


def refutals(profile: TableProfile, times: int, confirmations: int = 0) -> dict[str, list[Review]]:
    """``times`` other tables whose customer_name people said is not personal."""
    logs = {f"t{i}": [verdict(profile, "customer_name", "person_name", "not_personal", f"t{i}")] for i in range(times)}
    for i in range(confirmations):
        logs[f"c{i}"] = [verdict(profile, "customer_name", "person_name", "personal", f"c{i}")]
    return logs


def test_refutals_on_similar_columns_raise_the_share_a_class_needs(profile):
    precision = class_precision(refutals(profile, 3))
    assert precision[similar_key("person_name", "string", True)].refuted == 3
    out = taught(profile, Teaching(precision=precision))
    assert classes(out)["customer_name"] == []  # 70% of the sample is below STRICT_SHARE
    note = next(c for c in out.columns if c.name == "customer_name").notes[-1]
    assert "refuted it 3 times" in note and f"{STRICT_SHARE:.0%}" in note
    assert classes(out)["email"] == ["email"]  # another class learns nothing from them


@pytest.mark.parametrize("times, confirmations", [(2, 0), (3, 3)])
def test_too_few_refutals_or_as_many_confirmations_change_nothing(profile, times, confirmations):
    out = taught(profile, Teaching(precision=class_precision(refutals(profile, times, confirmations))))
    assert classes(out)["customer_name"] == ["person_name"]


def test_a_columns_own_verdict_outranks_what_similar_columns_taught(profile):
    own = verdict(profile, "customer_name", "person_name", "personal")
    out = taught(profile, Teaching(reviews=[own], precision=class_precision(refutals(profile, 5))))
    assert classes(out)["customer_name"] == ["person_name"]


def test_a_review_of_a_finding_teaches_no_class(profile):
    finding = Review(table="accounts", issue_id="accounts_outliers_id", verdict="dismiss", reviewer="ana")
    assert taught(profile, Teaching(reviews=[finding])) == profile
    assert class_precision({"accounts": [finding]}) == {}


def test_only_a_class_the_classifier_gave_counts_toward_its_precision(profile):
    missed = verdict(profile, "contact", "person_name", "personal")
    refuted_unfound = verdict(profile, "contact", "email", "not_personal")
    assert not missed.data_class.found and not refuted_unfound.data_class.found
    assert class_precision({"t": [missed, refuted_unfound]}) == {}
