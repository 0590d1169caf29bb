"""What a value is, as the pages show it: identifiers without thousands separators, moments as
"2 hours ago" relative to the page's generation time with the exact value on hover."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from cataloger_dagster.core.models import (
    ColumnProfile,
    ColumnSummaryModel,
    DatasetSummaryModel,
    DatasetUnderstandingModel,
    Fingerprint,
    TableProfile,
)
from cataloger_dagster.core.render.formats import ago, exact, generation_time, identifier_columns, run_moment, time_ago

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)


def _col(name: str, kind: str = "integer") -> ColumnProfile:
    return ColumnProfile(name=name, dtype=kind, kind=kind, count=10, nulls=0, null_fraction=0.0)


def _understanding(descriptions: dict[str, str]) -> DatasetUnderstandingModel:
    return DatasetUnderstandingModel(
        summary=DatasetSummaryModel(name="t", description="", rowCount=10, columnCount=len(descriptions),
                                    observations=[]),
        columns=[ColumnSummaryModel(name=n, dataType="numeric", description=d, sampleValues=[])
                 for n, d in descriptions.items()],
        suggested_context="")


def test_identifiers_are_the_integer_columns_whose_name_or_meaning_says_so():
    columns = [_col("order_id"), _col("customerID"), _col("zip code"), _col("fiscal_year"), _col("station"),
               _col("amount"), _col("rating"), _col("order_id_text", "string"), _col("total", "float")]
    profile = TableProfile(database="d", table="t", row_count=10, column_count=len(columns), columns=columns,
                           sample_rows=[], fingerprint=Fingerprint(schema_hash="s", row_count=10, value="v"))
    # by name alone: the last word of the name says the value names a thing
    assert identifier_columns(profile) == {"order_id", "customerID", "zip code", "fiscal_year"}
    # the understanding can say it of a column whose name does not, never of a non-integer one
    said = _understanding({"station": "Identifier of the weather station", "amount": "Money amount",
                           "total": "Key figure of the order"})
    assert identifier_columns(profile, said) == {"order_id", "customerID", "zip code", "fiscal_year", "station"}


@pytest.mark.parametrize("moment, said", [
    ("2026-05-01T10:00:00.123456Z", "2 hours ago"),     # 1 h 59 min 59.9 s, as a person rounds it
    ("2026-05-01T11:59:30Z", "just now"),
    ("2026-05-01T11:58:00+00:00", "2 minutes ago"),
    ("2026-04-30T12:00:00", "1 day ago"),                # no zone: UTC, as the store writes it
    ("2025-05-01T12:00:00Z", "1 year ago"),
    ("2026-05-08T12:00:00Z", "in 1 week"),
    ("0001-01-01", "2,025 years ago"),
    ("not a time", "not a time"),
])
def test_ago_is_relative_to_the_time_given(moment, said):
    assert ago(moment, NOW) == said


def test_time_ago_carries_the_exact_moment_for_hover_and_machines():
    html = str(time_ago("2026-05-01T10:00:00.123456Z", NOW))
    assert html == ('<time datetime="2026-05-01T10:00:00.123456Z" title="2026-05-01 10:00:00 UTC">'
                    "2 hours ago</time>")
    assert exact("2026-05-01T12:30:00+02:00") == "2026-05-01 10:30:00 UTC"
    # what is no moment stays text, escaped
    assert str(time_ago("<b>", NOW)) == "&lt;b&gt;" and str(time_ago(None, NOW)) == "—"


def test_a_run_timestamp_is_the_moment_its_pages_are_generated_at():
    assert run_moment("2026-05-01T10:00:00.123456Z") == datetime(2026, 5, 1, 10, 0, 0, 123456, tzinfo=timezone.utc)
    assert run_moment("not a time") is None
    assert generation_time(datetime(2026, 5, 1)) == datetime(2026, 5, 1, tzinfo=timezone.utc)
