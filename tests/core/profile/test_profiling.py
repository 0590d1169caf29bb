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
