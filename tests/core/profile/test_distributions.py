"""Query 2, the distributions: top values, histograms, the sample's quantiles and pattern
counts, read back and scaled to the table when sampled."""

from __future__ import annotations

import math

import duckdb
import ibis
import pytest

from cataloger_dagster.core.models import Fingerprint
from cataloger_dagster.core.profile.aggregates import QUANTILES, Figures
from cataloger_dagster.core.profile.distributions import HistogramPlan, apportion, histogram, histogram_plan, quantiles
from cataloger_dagster.core.profile.kinds import Column
from cataloger_dagster.core.profile.patterns import PATTERN_REGEX
from cataloger_dagster.core.profile.profiling import ProfileOptions, compute_profile


def fp(rows: int) -> Fingerprint:
    return Fingerprint(schema_hash="x", row_count=rows, value="x")


def one(raw, sql):
    return raw.execute(sql).fetchone()


def close(a, b, rel=1e-9):
    return a == b or (a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-9))


def _column(kind: str, dtype: str) -> Column:
    return Column(0, "c", ibis.dtype(dtype), kind, ibis.literal(1))


def test_apportion_scales_counts_to_the_exact_total_by_largest_remainder():
    assert apportion({0: 1, 1: 1, 2: 1}, 10) == {0: 4, 1: 3, 2: 3}
    assert sum(apportion({0: 7, 1: 2, 5: 1}, 1_000_003).values()) == 1_000_003
    assert apportion({0: 0}, 5) == {0: 0}


def test_a_histogram_has_no_more_bins_than_whole_values_or_days():
    f = Figures(min=3, max=7)
    assert histogram_plan(_column("integer", "int64"), f, 20) == HistogramPlan(3.0, 7.0, 5)
    days = Figures(min="2024-01-01", max="2024-01-03")
    assert histogram_plan(_column("date", "date"), days, 20).bins == 3
    assert histogram_plan(_column("float", "float64"), Figures(min=None, max=2.0), 20) is None
    h = histogram(_column("integer", "int64"), HistogramPlan(0.0, 10.0, 5), {0: 2, 4: 1}, 3)
    assert h.edges == [0, 2, 4, 6, 8, 10] and h.counts == [2, 0, 0, 0, 1]
    single = histogram(_column("integer", "int64"), HistogramPlan(4.0, 4.0, 1), {}, 9)
    assert single.edges == [4, 4] and single.counts == [9]


def test_quantiles_come_from_whichever_query_computed_them_and_say_how():
    c = _column("float", "float64")
    assert quantiles(c, Figures(q_parts={j: float(j) for j in range(5)})) == dict(zip(QUANTILES, [0.0, 1, 2, 3, 4]))
    assert c.notes == []
    assert quantiles(c, Figures(q_sample=[1.0, None, 3.0, 4.0, 5.0]))["p25"] is None
    assert c.notes == ["quantiles: approximate, estimated on the seeded sample (t-digest)"]
    assert quantiles(c, Figures(q=float("nan"))) is None
    d = _column("date", "date")
    assert quantiles(d, Figures(q=[86400.0] * 5))["p50"] == "1970-01-02"


LARGE = 300_000

LARGE_SQL = f"""
CREATE TABLE big AS
SELECT
  i AS id,
  CASE WHEN i % 20 = 0 THEN NULL ELSE (hash(i) % 50000)::BIGINT END AS key,
  CASE WHEN i % 97 = 0 THEN 'nan'::DOUBLE ELSE ((hash(i * 3) % 100000) / 100.0) ^ 2 END AS amount,
  CASE WHEN hash(i * 5) % 10 < 5 THEN 'a' WHEN hash(i * 5) % 10 < 8 THEN 'b' ELSE 'c' END AS grade,
  CASE WHEN i % 10 = 0 THEN 'NA' ELSE 'user' || (hash(i * 7) % 90000) || '@example.com' END AS email,
  DATE '2020-01-01' + (hash(i * 11) % 1000)::INTEGER AS day
FROM range({LARGE}) r(i)
"""


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    path = tmp_path_factory.mktemp("large") / "big.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(LARGE_SQL)
    table = ibis.duckdb.connect(str(path), read_only=True).table("big")
    raw = duckdb.connect(str(path), read_only=True)
    yield table, raw
    raw.close()


def test_large_table_is_approximate_within_tolerance(large):
    table, raw = large
    # sample_rows below the row count: the sampled mode a 10M-row table gets
    prof = compute_profile(table, database="d", table_name="big", fingerprint=fp(LARGE),
                           options=ProfileOptions(sample_rows=100_000))
    assert prof.approximate and prof.row_count == LARGE and prof.queries <= 4
    for col in prof.columns:
        count, = one(raw, f"SELECT count({col.name}) FROM big")
        assert (col.count, col.nulls) == (count, LARGE - count), col.name   # always exact
        where = "WHERE NOT isnan(amount)" if col.name == "amount" else ""
        exact, = one(raw, f"SELECT count(DISTINCT {col.name}) FROM big {where}")
        assert col.distinct_approximate and any("HyperLogLog" in n for n in col.notes)
        assert abs(col.distinct - exact) <= 0.15 * exact, (col.name, col.distinct, exact)

    amount = prof.column("amount")
    where = "WHERE NOT isnan(amount)"
    mn, mx, mean, std, qs = one(raw, f"SELECT min(amount), max(amount), avg(amount), stddev_samp(amount), "
                                     f"quantile_cont(amount, {list(QUANTILES.values())}) FROM big {where}")
    assert close(amount.min, mn) and close(amount.max, mx)           # exact: every row
    assert close(amount.mean, mean) and close(amount.std, std)
    assert amount.nan_count == one(raw, "SELECT count(*) FILTER (isnan(amount)) FROM big")[0]
    assert any("quantiles: approximate" in n for n in amount.notes)
    for key, want in zip(QUANTILES, qs):
        assert abs(amount.quantiles[key] - want) <= 0.02 * (mx - mn), (key, amount.quantiles[key], want)

    # histogram: the sample's shape, scaled to sum to the exact value count
    h = amount.histogram
    assert sum(h.counts) == amount.count - amount.nan_count
    assert any("histogram: shape from a seeded random sample" in n for n in amount.notes)
    bins = len(h.counts)
    want = dict(raw.execute(
        f"SELECT least(floor((amount - {mn}) / (({mx} - {mn}) / {bins})), {bins - 1})::INT, count(*) "
        f"FROM big {where} GROUP BY 1").fetchall())
    for j, got in enumerate(h.counts):
        assert abs(got - want.get(j, 0)) <= 0.1 * want.get(j, 0) + 0.002 * LARGE, (j, got, want.get(j))

    grade = prof.column("grade")
    exact = dict(raw.execute("SELECT grade, count(*) FROM big GROUP BY 1").fetchall())
    assert [tv.value for tv in grade.top_values] == sorted(exact, key=exact.get, reverse=True)
    for tv in grade.top_values:
        assert abs(tv.count - exact[tv.value]) <= 0.05 * exact[tv.value], tv
    assert any("top values: counted in a seeded random sample" in n for n in grade.notes)

    email = prof.column("email")
    emails, nas = one(raw, f"SELECT count(*) FILTER (regexp_matches(email, '{PATTERN_REGEX['email']}')), "
                           "count(*) FILTER (email = 'NA') FROM big")
    assert abs(email.pattern_counts["email"] - emails) <= 0.02 * LARGE
    assert abs(email.pattern_counts["sentinel"] - nas) <= 0.02 * LARGE
    assert email.semantic_type == "email"
    assert any("pattern counts: counted on a seeded random sample" in n for n in email.notes)

    day = prof.column("day")
    assert (day.min, day.max) == tuple(d.isoformat() for d in one(raw, "SELECT min(day), max(day) FROM big"))
    assert sum(day.histogram.counts) == LARGE and day.quantiles["p50"] is not None

    ident = prof.column("id")                # every value once: no top values
    assert ident.top_values is None and any("top values: omitted" in n for n in ident.notes)


def test_large_table_below_sample_rows_keeps_exact_counts(large):
    table, raw = large
    prof = compute_profile(table, database="d", table_name="big", fingerprint=fp(LARGE))
    assert prof.approximate
    grade = prof.column("grade")
    exact = dict(raw.execute("SELECT grade, count(*) FROM big GROUP BY 1").fetchall())
    assert {tv.value: tv.count for tv in grade.top_values} == exact
    email = prof.column("email")
    emails, = one(raw, f"SELECT count(*) FILTER (regexp_matches(email, '{PATTERN_REGEX['email']}')) FROM big")
    # many-valued text: regexes on a 200k-row sample, noted; few-valued: exact, per distinct value
    assert abs(email.pattern_counts["email"] - emails) <= 0.02 * LARGE
    assert any("pattern counts: counted on a seeded random sample" in n for n in email.notes)
    assert grade.pattern_counts["sentinel"] == 0 and sum(grade.pattern_counts.values()) == 0
    assert sum(prof.column("amount").histogram.counts) == prof.column("amount").count - prof.column("amount").nan_count
    assert not any("sample" in n for c in prof.columns for n in c.notes if not n.startswith("pattern"))
    assert any("approximate" in n for n in prof.column("amount").notes)
