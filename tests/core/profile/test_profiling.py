"""compute_profile against DuckDB's own answers (plain SQL and SUMMARIZE)."""

from __future__ import annotations

import json
import math
import sqlite3

import duckdb
import ibis
import pytest

from cataloger_dagster.core.models import Fingerprint
from cataloger_dagster.core.profile.profiling import PATTERN_REGEX, QUANTILES, SENTINELS, compute_profile

N = 400

TYPES_SQL = f"""
CREATE TABLE every AS
SELECT
  CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 37) % 101 - 20 END::INTEGER AS int_col,
  (i % 5)::TINYINT AS tiny_col,
  CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 7919) % 100000) / 100.0 END::DECIMAL(10, 2) AS dec_col,
  CASE WHEN i % 11 = 0 THEN 'nan'::DOUBLE WHEN i % 9 = 0 THEN NULL
       ELSE ((i * 31) % 997) / 7.0 END AS dbl_col,
  CASE WHEN i % 19 = 0 THEN NULL
       ELSE ['Zürich', '東京', 'naïve café', ' padded ', 'N/A', '', 'a@b.com',
             '03/15/2024', '2024-01-0' || (i % 9 + 1), '1,200', '-12.5', 'https://x.org/a',
             '+1 555-123-4567', '   '][i % 14 + 1] END AS txt_col,
  'user' || (i % 40) || '@example.com' AS email_col,
  CASE WHEN i % 23 = 0 THEN NULL ELSE DATE '2020-01-01' + ((i * 13) % 900)::INTEGER END AS date_col,
  TIMESTAMPTZ '2023-03-01 00:00:00+00' + to_minutes(((i * 7) % 5000)::BIGINT) AS tstz_col,
  CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 = 0 END AS bool_col,
  uuid() AS uuid_col,
  ('\\x' || lpad(to_hex(i % 256), 2, '0'))::BLOB AS blob_col,
  [i, i + 1] AS list_col,
  {{'a': i, 'b': 'x' || i}} AS struct_col,
  MAP([i % 3], ['v' || i]) AS map_col,
  json_object('k', i % 4) AS json_col,
  ['lo', 'mid', 'hi'][i % 3 + 1]::ENUM('lo', 'mid', 'hi') AS enum_col,
  to_days((i % 30)::INTEGER) AS interval_col
FROM range({N}) r(i)
"""


def fp(rows: int) -> Fingerprint:
    return Fingerprint(schema_hash="x", row_count=rows, value="x")


@pytest.fixture(scope="module")
def every(tmp_path_factory):
    path = tmp_path_factory.mktemp("prof") / "every.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(TYPES_SQL)
    messages: list[str] = []
    table = ibis.duckdb.connect(str(path), read_only=True).table("every")
    prof = compute_profile(table, database="db", table_name="every", fingerprint=fp(N),
                           progress=messages.append)
    raw = duckdb.connect(str(path), read_only=True)
    yield prof, raw, messages
    raw.close()


def one(raw, sql):
    return raw.execute(sql).fetchone()


def close(a, b, rel=1e-9):
    return a == b or (a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-9))


def test_counts_nulls_distinct_match_summarize(every):
    prof, raw, messages = every
    assert prof.row_count == one(raw, "SELECT count(*) FROM every")[0] == N
    assert prof.column_count == 17 and messages
    # SUMMARIZE itself fails on NaN (stddev out of range), so it sees the rest
    summary = {r[0]: r for r in raw.execute("SUMMARIZE SELECT * EXCLUDE (dbl_col) FROM every").fetchall()}
    for col in prof.columns:
        count, = one(raw, f'SELECT count("{col.name}") FROM every')
        assert col.count == count, col.name
        assert col.nulls == N - count and close(col.null_fraction, (N - count) / N)
        # SUMMARIZE's null_percentage, to two decimals
        if col.name in summary:
            assert math.isclose(col.null_fraction * 100, float(summary[col.name][-1]), abs_tol=0.01)
        if col.distinct is not None:
            where = "WHERE NOT isnan(dbl_col)" if col.kind == "float" else ""
            exact, = one(raw, f'SELECT count(DISTINCT "{col.name}") FROM every {where}')
            assert col.distinct == exact and not col.distinct_approximate, col.name


def test_numeric_statistics(every):
    prof, raw, _ = every
    for name in ("int_col", "tiny_col", "dec_col", "dbl_col"):
        col = prof.column(name)
        x = f"{name}::DOUBLE"
        where = f"WHERE {name} IS NOT NULL AND NOT isnan({x})"
        mn, mx, mean, std = one(raw, f"SELECT min({x}), max({x}), avg({x}), stddev_samp({x}) FROM every {where}")
        assert close(col.min, mn) and close(col.max, mx), name
        assert close(col.mean, mean) and close(col.std, std), name
        qs = one(raw, f"SELECT quantile_cont({x}, {list(QUANTILES.values())}) FROM every {where}")[0]
        assert all(close(col.quantiles[k], q) for k, q in zip(QUANTILES, qs)), name
        assert sum(col.histogram.counts) == col.count - (col.nan_count or 0), name
        assert len(col.histogram.edges) == len(col.histogram.counts) + 1
        assert close(col.histogram.edges[0], mn) and close(col.histogram.edges[-1], mx)
        # DuckDB's own equal-width bucketing over the same range and bin count
        bins = len(col.histogram.counts)
        want = dict(raw.execute(
            f"SELECT least(floor(({x} - {mn}::DOUBLE) / (({mx}::DOUBLE - {mn}::DOUBLE) / {bins})), "
            f"{bins - 1})::INT b, "
            f"count(*) FROM every {where} GROUP BY 1").fetchall())
        assert col.histogram.counts == [want.get(j, 0) for j in range(bins)], name
    dbl = prof.column("dbl_col")
    assert dbl.nan_count == one(raw, "SELECT count(*) FILTER (isnan(dbl_col)) FROM every")[0] > 0
    assert any("nan" in n.lower() for n in dbl.notes) or dbl.nan_count


def test_top_values_match_group_by(every):
    prof, raw, _ = every
    for name in ("int_col", "txt_col", "email_col", "bool_col", "enum_col", "date_col"):
        col = prof.column(name)
        got = {str(tv.value)[:10]: tv.count for tv in col.top_values}
        want = raw.execute(
            f'SELECT "{name}", count(*) n FROM every WHERE "{name}" IS NOT NULL '
            f'GROUP BY 1 ORDER BY n DESC LIMIT 10').fetchall()
        assert sorted(got.values()) == sorted(n for _, n in want), name
        # values above the last count are not ties, so they must be the same values
        for value, n in want:
            if n > want[-1][1]:
                assert got[str(value)[:10]] == n, (name, value)


def test_text_lengths_and_patterns(every):
    prof, raw, _ = every
    for name in ("txt_col", "email_col", "enum_col"):
        col = prof.column(name)
        mn, mx, mean = one(raw, f"SELECT min(length({name})), max(length({name})), avg(length({name})) FROM every")
        assert (col.length.min, col.length.max) == (mn, mx) and close(col.length.mean, mean)
        s = f"{name}::VARCHAR"
        for pat, rx in PATTERN_REGEX.items():
            want, = one(raw, f"SELECT count(*) FILTER (regexp_matches({s}, '{rx}')) FROM every")
            assert col.pattern_counts[pat] == want, (name, pat)
        sent = ", ".join(f"'{w}'" for w in SENTINELS)
        want = one(raw, f"SELECT count(*) FILTER (lower(trim({s}, ' \t\n\r')) IN ({sent})), "
                        f"count(*) FILTER (trim({s}, ' \t\n\r') = ''), "
                        f"count(*) FILTER (trim({s}, ' \t\n\r') <> {s} AND trim({s}, ' \t\n\r') <> '') "
                        f"FROM every")
        got = tuple(col.pattern_counts[p] for p in ("sentinel", "blank", "padded"))
        assert got == want, name
    assert prof.column("txt_col").pattern_counts["sentinel"] > 0
    assert prof.column("txt_col").pattern_counts["padded"] > 0
    assert prof.column("email_col").semantic_type == "email"
    assert prof.column("enum_col").semantic_type == "category"
    assert prof.column("txt_col").semantic_type in ("text", "category")


def test_temporal_and_boolean(every):
    prof, raw, _ = every
    d = prof.column("date_col")
    mn, mx = one(raw, "SELECT min(date_col), max(date_col) FROM every")
    assert (d.min, d.max) == (mn.isoformat(), mx.isoformat())
    assert sum(d.histogram.counts) == d.count and d.histogram.edges[0] == mn.isoformat()
    ts = prof.column("tstz_col")
    mn, mx = one(raw, "SELECT min(epoch(tstz_col)), max(epoch(tstz_col)) FROM every")
    from datetime import datetime, timezone
    assert datetime.fromisoformat(ts.min).timestamp() == mn
    assert datetime.fromisoformat(ts.max).timestamp() == mx
    q = one(raw, f"SELECT quantile_cont(epoch(tstz_col), {list(QUANTILES.values())}) FROM every")[0]
    for k, want in zip(QUANTILES, q):
        assert math.isclose(datetime.fromisoformat(ts.quantiles[k]).timestamp(), want, abs_tol=1e-3)
    assert sum(ts.histogram.counts) == ts.count
    b = prof.column("bool_col")
    trues, count = one(raw, "SELECT count(*) FILTER (bool_col), count(bool_col) FROM every")
    assert close(b.mean, trues / count) and (b.min, b.max) == (False, True)


def test_types_without_a_statistic_get_a_note(every):
    prof, _, _ = every
    expect = {"struct_col": "struct", "map_col": "map", "list_col": "array", "blob_col": "binary",
              "json_col": "json", "uuid_col": "uuid", "bool_col": "boolean", "interval_col": "interval"}
    for name, word in expect.items():
        col = prof.column(name)
        assert any(f"not defined for {word}" in n for n in col.notes), (name, col.notes)
    assert prof.column("struct_col").min is None and prof.column("struct_col").histogram is None
    assert prof.column("list_col").length.max == 2
    assert prof.column("interval_col").max is not None


def test_sample_rows_are_json_safe(every):
    prof, raw, _ = every
    assert len(prof.sample_rows) == 5
    text = json.dumps(prof.sample_rows, allow_nan=False)
    assert set(prof.sample_rows[0]) == {c.name for c in prof.columns}
    assert json.loads(text)[0]["struct_col"]["b"].startswith("x")
    json.dumps(prof.model_dump(mode="json"), allow_nan=False)


def _wide_table(path, ncols: int):
    kinds = ["i::BIGINT", "i / 3.0", "'v' || (i % 7)", "DATE '2024-01-01' + (i % 30)::INTEGER", "i % 2 = 0"]
    cols = ", ".join(f"{kinds[j % 5]} AS c{j}" for j in range(ncols))
    with duckdb.connect(str(path)) as con:
        con.execute(f"CREATE TABLE t AS SELECT {cols} FROM range(50) r(i)")
    return ibis.duckdb.connect(str(path), read_only=True).table("t")


def test_query_count_does_not_grow_with_columns(tmp_path):
    narrow = compute_profile(_wide_table(tmp_path / "a.duckdb", 5), database="d", table_name="t",
                             fingerprint=fp(50))
    wide = compute_profile(_wide_table(tmp_path / "b.duckdb", 40), database="d", table_name="t",
                           fingerprint=fp(50))
    assert narrow.column_count == 5 and wide.column_count == 40
    assert narrow.queries == wide.queries <= 4


def test_approximate_distinct_above_threshold(tmp_path):
    table = _wide_table(tmp_path / "c.duckdb", 5)
    prof = compute_profile(table, database="d", table_name="t", fingerprint=fp(50),
                           approx_distinct_above=10)
    assert prof.approximate and prof.column("c0").distinct_approximate
    assert abs(prof.column("c0").distinct - 50) <= 50 * 0.15   # HyperLogLog error
    assert any("approximate" in n for n in prof.column("c1").notes)


def test_sqlite_table(tmp_path):
    path = tmp_path / "s.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (i INTEGER, f REAL, s TEXT, d DATE)")
    rows = [(i if i % 5 else None, i / 4, ["a@b.com", "NA", "x", " y "][i % 4], f"2024-01-{i % 28 + 1:02d}")
            for i in range(60)]
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    con.commit()
    prof = compute_profile(ibis.sqlite.connect(path).table("t"), database="s", table_name="t",
                           fingerprint=fp(60))
    i = prof.column("i")
    got = con.execute("SELECT count(i), count(DISTINCT i), min(i), max(i), avg(i) FROM t").fetchone()
    assert (i.count, i.distinct, i.min, i.max) == got[:4] and close(i.mean, got[4])
    assert i.nulls == 60 - got[0]
    s = prof.column("s")
    assert s.pattern_counts["sentinel"] == 15 and s.pattern_counts["email"] == 15
    assert s.pattern_counts["padded"] == 15
    assert [tv.count for tv in s.top_values] == [15, 15, 15, 15]
    assert sum(prof.column("f").histogram.counts) == 60
    assert any("quantiles" in n for n in i.notes)    # SQLite has no quantile function
    assert len(prof.sample_rows) == 5


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
                           sample_rows=100_000)
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


def _mixed_rows(n: int):
    return [(i if i % 5 else None, i / 4, ["a@b.com", "NA", "x", " y "][i % 4], f"u{i}@x.org",
             f"2024-01-{i % 28 + 1:02d}") for i in range(n)]


def _check_large_mode_degrades(prof, rows: int):
    """Approximate + sampled mode forced on a small table of a backend that
    lacks some of DuckDB's functions: a note per missing piece, no crash (the fifth query: the
    NULL patterns of a column with NULLs)."""
    assert prof.approximate and prof.row_count == rows and prof.queries <= 5
    i, f, s, d = (prof.column(n) for n in ("i", "f", "s", "d"))
    assert i.count == rows - rows // 5 and i.nulls == rows // 5 and f.count == rows
    assert (i.min, i.max) == (1, rows - 1) and close(f.mean, (rows - 1) / 8)
    assert sum(f.histogram.counts) == rows and sum(d.histogram.counts) == rows
    assert all(c.notes for c in prof.columns)
    assert abs(s.pattern_counts["sentinel"] - rows / 4) <= 0.1 * rows
    assert abs(s.pattern_counts["email"] - rows / 4) <= 0.1 * rows
    assert s.top_values and abs(s.top_values[0].count - rows / 4) <= 0.1 * rows
    assert prof.column("e").semantic_type == "email"
    json.dumps(prof.model_dump(mode="json"), allow_nan=False)


def test_sqlite_large_mode_degrades_gracefully(tmp_path):
    path = tmp_path / "big.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (i INTEGER, f REAL, s TEXT, e TEXT, d DATE)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", _mixed_rows(3000))
    con.commit()
    prof = compute_profile(ibis.sqlite.connect(path).table("t"), database="s", table_name="t",
                           fingerprint=fp(3000), approx_distinct_above=1000, sample_rows=1000)
    _check_large_mode_degrades(prof, 3000)
    # SQLite has no seeded sample: every row is counted, exactly
    assert [tv.count for tv in prof.column("s").top_values] == [750] * 4
    assert any("quantiles" in n for n in prof.column("f").notes)


def test_postgres_large_mode(postgres_admin_url, postgres_schema):
    schema, conn = postgres_schema
    conn.execute(f"CREATE TABLE {schema}.t (i int, f double precision, s text, e text, d date)")
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {schema}.t VALUES (%s, %s, %s, %s, %s)", _mixed_rows(3000))
    url = postgres_admin_url.replace("postgres://", "postgresql://")
    table = ibis.connect(url).table("t", database=schema)
    prof = compute_profile(table, database="pg", table_name="t", fingerprint=fp(3000),
                           approx_distinct_above=1000, sample_rows=1000)
    _check_large_mode_degrades(prof, 3000)
    assert any("sample" in n for n in prof.column("s").notes)        # PostgreSQL samples
    assert prof.column("f").quantiles is not None


# --------------------------------------------------------------------------
# backend parity: the same data gives the same profile on DuckDB, PostgreSQL and SQLite
# --------------------------------------------------------------------------

PENGUIN_COLUMNS = {"species": "TEXT", "island": "TEXT", "bill_length_mm": "DOUBLE PRECISION",
                   "body_mass_g": "INTEGER", "sex": "TEXT", "year": "INTEGER", "seen": "DATE",
                   "mass_text": "TEXT", "ok": "BOOLEAN"}


def _penguin_rows(n: int = 344):
    """palmerpenguins' shape: three species on three islands, a few NULLs and 'NA' strings,
    a number column stored as text (with its 'NA'), dates, a flag."""
    species = ["Adelie", "Gentoo", "Chinstrap"]
    islands = ["Torgersen", "Biscoe", "Dream"]
    rows = []
    for i in range(n):
        mass = None if i % 97 == 3 else 2700 + (i * 137) % 3600
        rows.append((species[i % 3] if i % 50 else "Adelie Penguin", islands[(i * 7) % 3],
                     None if i % 101 == 5 else round(32.1 + ((i * 53) % 275) / 10, 1), mass,
                     None if i % 31 == 0 else ("NA" if i % 29 == 0 else ["male", "female"][i % 2]),
                     2007 + i % 3, f"20{7 + i % 3:02d}-{i % 12 + 1:02d}-{i % 28 + 1:02d}",
                     "NA" if mass is None else str(mass), i % 4 != 0))
    return rows


def _comparable(prof):
    out = {"rows": prof.row_count}
    for c in prof.columns:
        out[c.name] = {
            "count": c.count, "nulls": c.nulls, "distinct": c.distinct, "min": c.min, "max": c.max,
            "mean": None if c.mean is None else round(c.mean, 9),
            "quantiles": None if c.quantiles is None else {
                k: round(v, 6) if isinstance(v, float) else v for k, v in c.quantiles.items()},
            "patterns": c.pattern_counts, "semantic": c.semantic_type,
            "top": None if c.top_values is None else [(t.value, t.count) for t in c.top_values],
            "histogram": None if c.histogram is None else c.histogram.counts,
        }
    return out


def test_the_same_data_profiles_the_same_on_every_backend(tmp_path, postgres_schema, postgres_admin_url):
    rows = _penguin_rows()
    cols = ", ".join(f"{c} {t}" for c, t in PENGUIN_COLUMNS.items())
    marks = ", ".join("?" * len(PENGUIN_COLUMNS))
    with duckdb.connect(str(tmp_path / "p.duckdb")) as con:
        con.execute(f"CREATE TABLE penguins ({cols})")
        con.executemany(f"INSERT INTO penguins VALUES ({marks})", rows)
    lite = sqlite3.connect(tmp_path / "p.sqlite")
    lite.execute(f"CREATE TABLE penguins ({cols})")
    lite.executemany(f"INSERT INTO penguins VALUES ({marks})", rows)
    lite.commit()
    schema, conn = postgres_schema
    conn.execute(f"CREATE TABLE {schema}.penguins ({cols})")
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {schema}.penguins VALUES ({', '.join(['%s'] * len(PENGUIN_COLUMNS))})", rows)
    tables = {
        "duckdb": ibis.duckdb.connect(str(tmp_path / "p.duckdb"), read_only=True).table("penguins"),
        "sqlite": ibis.sqlite.connect(tmp_path / "p.sqlite").table("penguins"),
        "postgres": ibis.connect(postgres_admin_url.replace("postgres://", "postgresql://")).table(
            "penguins", database=schema),
    }
    profiles = {name: compute_profile(t, database="d", table_name="penguins", fingerprint=fp(len(rows)))
                for name, t in tables.items()}
    for name, prof in profiles.items():
        assert prof.degradations == [], (name, prof.degradations)
    want = _comparable(profiles["duckdb"])
    # the figures that once differed: PostgreSQL's text patterns, SQLite's quantiles
    assert want["mass_text"]["patterns"]["number"] == len(rows) - 4 and want["mass_text"]["patterns"]["sentinel"] == 4
    assert want["bill_length_mm"]["quantiles"]["p50"] is not None
    for name in ("postgres", "sqlite"):
        got = _comparable(profiles[name])
        for column in want:
            assert got[column] == want[column], (name, column)
    lite_notes = profiles["sqlite"].column("body_mass_g").notes
    assert any(n.startswith("quantiles: computed in process (DuckDB) on all 344 rows") for n in lite_notes)


def test_sqlite_quantiles_of_a_big_table_come_from_a_sample_that_says_so(tmp_path, monkeypatch):
    from cataloger_dagster.core.profile import profiling

    monkeypatch.setattr(profiling, "LOCAL_VALUES", 500)      # 2,000 rows x 2 columns: every 8th row
    path = tmp_path / "s.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x INTEGER, y REAL)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(i, i / 2) for i in range(2000)])
    con.commit()
    prof = compute_profile(ibis.sqlite.connect(path).table("t"), database="s", table_name="t", fingerprint=fp(2000))
    x = prof.column("x")
    assert abs(x.quantiles["p50"] - 1000) <= 20 and abs(x.quantiles["p95"] - 1900) <= 20
    assert any("systematic sample of every 8th row (250 of 2,000)" in n for n in x.notes), x.notes


def test_what_a_backend_cannot_compute_is_profiled_as_text_or_a_degradation(postgres_schema, postgres_admin_url):
    """PostgreSQL money reaches ibis as '$1.50' where it expects a decimal, an enum has no
    length(), ranges and points no Arrow form: each column is profiled as its text, with the
    reason in its notes, and nothing of a backend's error text anywhere."""
    schema, conn = postgres_schema
    conn.execute(f"CREATE TYPE {schema}.mood AS ENUM ('sad', 'ok', 'happy')")
    conn.execute(f"CREATE TABLE {schema}.odd AS SELECT g AS id, (g * 1.5)::numeric::money AS cash, "
                 f"(array['sad', 'ok', 'happy'])[g % 3 + 1]::{schema}.mood AS mood, "
                 "int4range(g, g + 2) AS span, point(g, g) AS spot, g % 2 = 0 AS flag, "
                 "'v' || g AS label FROM generate_series(1, 30) g")
    url = f"{postgres_admin_url}?schema={schema}".replace("postgres://", "postgresql://")
    prof = compute_profile(ibis.connect(url).table("odd"), database="pg", table_name="odd", fingerprint=fp(30))
    assert prof.degradations == []
    for name in ("cash", "mood", "span", "spot"):
        c = prof.column(name)
        assert c.count == 30 and c.top_values and any(n.startswith("profiled as text: ") for n in c.notes), c
        assert c.profiled_as_text and f"profiled as text: {c.profiled_as_text}" in c.notes
        assert not any("Error" in n or "LINE" in n or "does not exist" in n for n in c.notes), c.notes
    assert prof.column("cash").top_values[0].value.startswith("$")
    assert prof.column("flag").mean == 0.5 and prof.column("label").pattern_counts["number"] == 0
    assert prof.sample_rows[0]["span"] == "[1,3)"


def test_a_failing_statistic_is_a_degradation_in_words(tmp_path, monkeypatch):
    """A statistic the database refuses (here a text column's sum, which DuckDB refuses with
    a Conversion Error quoting the value) first makes the column be profiled as its text;
    when it fails even so, it is a Degradation: a sentence, never the database's error."""
    from cataloger_dagster.core.profile import profiling

    path = tmp_path / "d.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t AS SELECT range AS x, 'secret-' || range AS s FROM range(20)")
    table = ibis.duckdb.connect(str(path), read_only=True).table("t")
    real = profiling._column_metrics
    monkeypatch.setattr(profiling, "_column_metrics", lambda c, *a, **k: [
        *real(c, *a, **k), *([profiling._Metric(c.index, "bogus_sum", c.expr.cast("int64").sum())]
                             if c.kind == "string" else [])])
    prof = compute_profile(table, database="d", table_name="t", fingerprint=fp(20))
    s = prof.column("s")
    assert [d.model_dump() for d in prof.degradations] == [
        {"stage": "profile", "column": "s", "reason": "bogus sum could not be computed on duckdb for this string column"}]
    assert s.notes[0] == "profiled as text: duckdb could not compute the statistics of its type (string)"
    assert s.profiled_as_text == "duckdb could not compute the statistics of its type (string)"
    assert s.count == 20 and s.distinct == 20 and s.length.max == 9          # the rest is there
    assert not any("secret" in n or "Error" in n for n in s.notes)
    assert prof.column("x").notes == [] and prof.column("x").mean == 9.5
    assert prof.column("x").profiled_as_text is None


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_wide_table_is_cut_into_queries_the_backend_takes(backend, tmp_path, request):
    """400 columns: more expressions than PostgreSQL's 1,664 per SELECT and more branches
    than SQLite's 500 per UNION, in one table that once failed as a whole."""
    width, rows = 400, 20
    cols = ", ".join(f"c{j} {'INTEGER' if j % 2 else 'TEXT'}" for j in range(width))
    values = [tuple(i * j if j % 2 else f"v{i % 3}" for j in range(width)) for i in range(rows)]
    if backend == "sqlite":
        con = sqlite3.connect(tmp_path / "w.sqlite")
        con.execute(f"CREATE TABLE w ({cols})")
        con.executemany(f"INSERT INTO w VALUES ({', '.join('?' * width)})", values)
        con.commit()
        table = ibis.sqlite.connect(tmp_path / "w.sqlite").table("w")
    else:
        schema, conn = request.getfixturevalue("postgres_schema")
        conn.execute(f"CREATE TABLE {schema}.w ({cols})")
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {schema}.w VALUES ({', '.join(['%s'] * width)})", values)
        url = request.getfixturevalue("postgres_admin_url").replace("postgres://", "postgresql://")
        table = ibis.connect(url).table("w", database=schema)
    prof = compute_profile(table, database="d", table_name="w", fingerprint=fp(rows))
    assert prof.degradations == [] and prof.column_count == width
    assert prof.column("c399").max == 19 * 399 and prof.column("c398").distinct == 3
    assert all(c.top_values for c in prof.columns)
