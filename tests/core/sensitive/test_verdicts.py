"""Recording a person's verdict on a column's class of personal data in a real local store: the
verdict lands in the table's review log with a snapshot of what the classifier had said, and each
bad request is one error naming the table, the column or the class."""

from __future__ import annotations

import pytest

from cataloger_dagster.core.layout import PROFILE
from cataloger_dagster.core.models import ColumnProfile, Fingerprint, SensitiveClass, TableProfile
from cataloger_dagster.core.reviews.model import class_review_id
from cataloger_dagster.core.reviews.record import ReviewError
from cataloger_dagster.core.sensitive.verdicts import ClassReview, latest_profile, record_class_review
from cataloger_dagster.resources.store import LocalStore, table_prefix

DATABASE = "people.duckdb"


def _column(name: str, *classes: str) -> ColumnProfile:
    found = [SensitiveClass(name=c, share=0.9, sampled=10, matched=9) for c in classes]
    return ColumnProfile(name=name, dtype="string", kind="string", count=10, nulls=0, null_fraction=0.0, distinct=10, sensitive=found)


@pytest.fixture
def store(tmp_path) -> LocalStore:
    store = LocalStore(root=str(tmp_path / "store"))
    prefix = table_prefix(DATABASE, "people")
    ts = store.open_run(prefix, "a-run", table="people")
    profile = TableProfile(table="people", database=DATABASE, row_count=10, column_count=2, sample_rows=[],
                           fingerprint=Fingerprint(schema_hash="s", row_count=10, value="v"),
                           columns=[_column("mail", "email"), _column("note")])
    store.write_json(prefix, ts, PROFILE, profile.model_dump(mode="json"))
    return store


def test_not_personal_refutes_each_class_the_column_holds_and_keeps_what_was_said(store):
    written = record_class_review(store, DATABASE, ClassReview("people", "mail", "not_personal", reviewer="ana",
                                                                note="test data"))
    assert [r.issue_id for r, _ in written] == [class_review_id("email", "mail")]
    (kept,) = store.read_reviews(table_prefix(DATABASE, "people"))
    assert kept.verdict == "not_personal" and kept.reviewer == "ana" and kept.note == "test data"
    assert kept.data_class is not None and kept.data_class.data_class == "email" and kept.data_class.column == "mail"


def test_personal_adds_the_named_class_to_a_column_that_held_none(store):
    (review, _), = record_class_review(store, DATABASE, ClassReview("people", "note", "personal", "phone", reviewer="bo"))
    assert review.issue_id == class_review_id("phone", "note") and review.verdict == "personal"


@pytest.mark.parametrize("args, named", [
    (("mail", "maybe", None), "verdict 'maybe'"),
    (("mail", "personal", "horoscope"), "class 'horoscope'"),
    (("mail", "personal", None), "column 'mail' of table 'people'"),
    (("nope", "not_personal", None), "no column 'nope'"),
    (("note", "not_personal", None), "column 'note' of table 'people' holds no class"),
])
def test_each_bad_request_is_one_error_naming_what_is_wrong(store, args, named):
    column, verdict, data_class = args
    with pytest.raises(ReviewError, match=named.replace("(", r"\(")):
        record_class_review(store, DATABASE, ClassReview("people", column, verdict, data_class))
    assert store.read_reviews(table_prefix(DATABASE, "people")) == []


def test_a_table_never_cataloged_says_how_to_catalog_it(tmp_path):
    with pytest.raises(ReviewError, match=r"no run .*cataloger run --table"):
        latest_profile(LocalStore(root=str(tmp_path)), DATABASE, "ghost")
