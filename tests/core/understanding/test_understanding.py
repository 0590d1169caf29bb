"""`heuristic_understanding`: a DatasetUnderstandingModel from a profile's column names and
statistics alone: data types, descriptions, observations and the suggested context."""

from __future__ import annotations

from cataloger_dagster.core.models import ColumnProfile, Fingerprint, TableProfile, ValueCount
from cataloger_dagster.core.understanding import heuristic_understanding

ROWS = 200


def col(name, kind="integer", *, count=ROWS, distinct=None, null_fraction=0.0, **kw) -> ColumnProfile:
    nulls = round(null_fraction * ROWS)
    return ColumnProfile(name=name, dtype="x", kind=kind, count=count - nulls, nulls=nulls,
                         null_fraction=null_fraction, distinct=distinct, **kw)


def profile(table: str, columns: list[ColumnProfile], sample_rows=None) -> TableProfile:
    return TableProfile(database="shop", table=table, row_count=ROWS, column_count=len(columns), columns=columns,
                        sample_rows=sample_rows or [], fingerprint=Fingerprint(schema_hash="s", row_count=ROWS,
                                                                                value="v"))


COLUMNS = [
    col("order_id", distinct=ROWS),
    col("customer_id", distinct=40),
    col("status", "string", distinct=3, semantic_type="category",
        top_values=[ValueCount(value="shipped", count=120), ValueCount(value="pending", count=60),
                    ValueCount(value="void", count=20)]),
    col("rating", distinct=5),                        # few distinct numbers: categorical
    col("amount", "decimal", distinct=150, null_fraction=0.25),
    col("ordered_at", "timestamp", distinct=ROWS, min="2024-01-01T00:00:00", max="2024-12-31T00:00:00"),
    col("ship_day", "string", semantic_type="date", null_fraction=0.5),
    col("contact_email", "string", semantic_type="email"),
    col("is_gift", "boolean", distinct=2),
    col("legacyCode", "string", semantic_type="number"),
]


def by_name(understanding):
    return {c.name: c for c in understanding.columns}


def test_data_types_follow_kinds_and_semantic_types():
    types = {c.name: c.dataType for c in heuristic_understanding(profile("orders", COLUMNS)).columns}
    assert types == {"order_id": "numeric", "customer_id": "numeric", "status": "categorical",
                     "rating": "categorical", "amount": "numeric", "ordered_at": "date", "ship_day": "date",
                     "contact_email": "string", "is_gift": "boolean", "legacyCode": "string"}


def test_few_distinct_numbers_are_categorical_only_on_enough_rows_and_not_for_ids():
    small = [col("rating", count=40, distinct=5), col("store_id", distinct=5), col("grade", distinct=13)]
    types = {c.name: c.dataType for c in heuristic_understanding(profile("t", small)).columns}
    assert types == {"rating": "numeric", "store_id": "numeric", "grade": "numeric"}


def test_descriptions_read_the_names_and_the_statistics():
    cols = by_name(heuristic_understanding(profile("orders", COLUMNS)))
    assert cols["order_id"].description == "Identifier of the order — unique for every row."
    assert cols["customer_id"].description == "Identifier of the customer."
    assert cols["status"].description == (
        "Current status of the order (a small set of values) — 3 distinct values, most often "
        "'shipped', 'pending', 'void'.")
    # the name is all pattern, no stem left: the entity stands in for it
    assert cols["amount"].description == "Money amount (order) — 25% missing."
    shipments = by_name(heuristic_understanding(profile("shipments", [col("shipping_cost", "float")])))
    assert shipments["shipping_cost"].description == "Money amount (shipping)."
    assert cols["ordered_at"].description.startswith("When the ordered happened")
    assert cols["contact_email"].description == "Email address of the order — holds email values."
    assert cols["is_gift"].description == "Yes/no flag: gift."
    # camelCase reads as words; numbers kept as text are pointed out
    assert cols["legacyCode"].description == "Legacy code of the order — numbers stored as text."
    assert cols["ship_day"].description == "Date of the ship — dates stored as text; 50% missing."


def test_summary_observations_and_context():
    u = heuristic_understanding(profile("public.orders", COLUMNS))
    assert (u.summary.name, u.summary.rowCount, u.summary.columnCount) == ("public.orders", ROWS, len(COLUMNS))
    # the schema is left out of the entity; "orders" is made singular
    assert u.summary.description == "public.orders holds 200 order records with 10 attributes, one row per order (order_id)."
    assert u.summary.observations == [
        "Each row is identified by order_id.",
        "ordered_at runs from 2024-01-01T00:00:00 to 2024-12-31T00:00:00.",
        "Most often missing: ship_day (50%), amount (25%).",
        "Links to other tables through customer_id.",
    ]
    assert u.suggested_context.startswith(
        "The public.orders table records order data keyed by order_id and links to other tables via customer_id.")
    assert "without a language model" in u.suggested_context


def test_a_table_without_key_dates_or_gaps():
    u = heuristic_understanding(profile("categories", [col("label", "string", distinct=3)]))
    assert u.summary.observations == []
    assert u.summary.description == "categories holds 200 category records with 1 attribute."  # one attribute, singular
    assert u.suggested_context.startswith("The categories table records category data.")


def test_sample_values_are_the_first_three_rows():
    rows = [{"order_id": i, "status": s} for i, s in enumerate(["a", "b", "c", "d"])]
    cols = by_name(heuristic_understanding(profile("orders", COLUMNS[:3], sample_rows=rows)))
    assert cols["order_id"].sampleValues == [0, 1, 2]
    assert cols["status"].sampleValues == ["a", "b", "c"]
    assert cols["customer_id"].sampleValues == [None, None, None]     # not in the sample rows


def test_the_same_profile_gives_the_same_understanding():
    p = profile("orders", COLUMNS)
    assert heuristic_understanding(p) == heuristic_understanding(p)
    assert [c.name for c in heuristic_understanding(p).columns] == [c.name for c in COLUMNS]


def test_the_understanding_says_once_which_column_explains_the_nulls():
    from cataloger_dagster.core.models import NullPattern
    sentence = "category is NULL exactly when wind < 65."
    cols = [col("wind", distinct=30), col("category", distinct=3, null_fraction=0.4),
            col("pressure", distinct=60, null_fraction=0.05),
            *(col(f"wk{w}", distinct=90, null_fraction=w / 10) for w in range(1, 4))]
    prof = profile("storms", cols).model_copy(update={"null_patterns": [
        NullPattern(kind="below", columns=["category"], by="wind", value=65, rows=80, sentence=sentence)]})
    understood = heuristic_understanding(prof)
    observations = understood.summary.observations
    assert observations.count(sentence) == 1
    assert "wk1…wk3 (3 columns) are one measure over several columns, judged together." in observations
    # an explained NULL is no gap: category (40%) is not among the columns most often missing
    assert [o for o in observations if o.startswith("Most often missing")] == [
        "Most often missing: wk3 (30%), wk2 (20%), wk1 (10%)."]
    category = by_name(understood)["category"].description
    assert "NULL by design (exactly when wind < 65)" in category and "missing" not in category
