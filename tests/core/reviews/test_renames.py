"""core/reviews/renames.py: a column gone and one come with the same type and statistics between
two runs is a rename, followed across runs; an ambiguous pair is none."""

from cataloger_dagster.core.models import ColumnProfile, Fingerprint, TableProfile
from cataloger_dagster.core.reviews.renames import column_renames, renames_through


def col(name, dtype="int64", lo=0, hi=100, nulls=0, distinct=50):
    return ColumnProfile(name=name, dtype=dtype, kind="integer" if dtype == "int64" else "string", count=100 - nulls,
                         nulls=nulls, null_fraction=nulls / 100, distinct=distinct, min=lo, max=hi)


def profile(*columns):
    return TableProfile(database="d", table="t", row_count=100, column_count=len(columns), columns=list(columns),
                        sample_rows=[], fingerprint=Fingerprint(schema_hash="h", row_count=100, value="v"))


def test_a_column_gone_and_a_like_one_come_is_a_rename():
    before = profile(col("id"), col("qty", lo=1, hi=9, distinct=9), col("note", "string", lo="a", hi="z"))
    after = profile(col("id"), col("quantity", lo=1, hi=9, distinct=9), col("remark", "string", lo="a", hi="z"))
    assert column_renames(before, after) == {"qty": "quantity", "note": "remark"}


def test_other_statistics_or_another_type_is_no_rename():
    before = profile(col("qty", lo=1, hi=9, distinct=9))
    assert column_renames(before, profile(col("quantity", lo=1, hi=900, distinct=9))) == {}
    assert column_renames(before, profile(col("quantity", "string", lo=1, hi=9, distinct=9))) == {}
    assert column_renames(before, profile(col("quantity", lo=1, hi=9, distinct=9, nulls=40))) == {}


def test_two_candidates_rename_nothing():
    before = profile(col("a"))
    assert column_renames(before, profile(col("b"), col("c"))) == {}


def test_renames_are_followed_across_runs_to_the_current_name():
    runs = [profile(col("qty", lo=1, hi=9)), profile(col("quantity", lo=1, hi=9)), profile(col("quantity", lo=1, hi=9)),
            profile(col("units", lo=1, hi=9))]
    assert renames_through(runs) == {"qty": "units", "quantity": "units"}
    # renamed, then dropped: nothing to follow
    assert renames_through([*runs, profile(col("other", "string", lo="a", hi="b"))]) == {}
