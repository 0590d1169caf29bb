"""Every MariaDB/MySQL column type through the profile, the detectors and the snapshot
(no column type aborts a table, on MySQL too), with an empty table, a 1-row table, an all-NULL column and
reserved-word, quoted and unicode names."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import duckdb
import pyarrow as pa
import pytest
from backends import load_tables
from degraded import grouped, lost_statistics, skipped_detectors

from cataloger_dagster.core.issues.detectors import detect_issues
from cataloger_dagster.core.profile.profiling import compute_profile
from cataloger_dagster.resources.database.resource import DatabaseResource

pytestmark = pytest.mark.mysql

EVERY_TYPE = """
CREATE TABLE every_type (
  id INT PRIMARY KEY,
  t_tinyint TINYINT, t_tinyint_u TINYINT UNSIGNED, t_smallint SMALLINT, t_smallint_u SMALLINT UNSIGNED,
  t_mediumint MEDIUMINT, t_mediumint_u MEDIUMINT UNSIGNED, t_int INT, t_int_u INT UNSIGNED,
  t_bigint BIGINT, t_bigint_u BIGINT UNSIGNED, t_bool BOOLEAN,
  t_decimal DECIMAL(10,2), t_decimal_wide DECIMAL(65,30), t_float FLOAT, t_double DOUBLE,
  t_bit1 BIT(1), t_bit64 BIT(64),
  t_date DATE, t_datetime DATETIME(6), t_timestamp TIMESTAMP NULL, t_time TIME(6), t_year YEAR,
  t_char CHAR(10), t_varchar VARCHAR(255), t_text TEXT, t_longtext LONGTEXT,
  t_binary BINARY(4), t_varbinary VARBINARY(16), t_blob BLOB, t_longblob LONGBLOB,
  t_enum ENUM('small','medium','large'), t_set SET('red','green','blue'), t_json JSON,
  t_geometry GEOMETRY, t_point POINT,
  t_all_null VARCHAR(20),
  `select` INT, `a``b"c'd` VARCHAR(10), `ünïcødé 名前` VARCHAR(10), `x%s ?` DOUBLE
)"""
ROWS = 40


def _row(i: int) -> str:
    """Row i: varied values, extremes on rows 1-6, every column NULL but the key on every 10th."""
    n = i % 7
    values = [
        -128 + i * 6, i * 6, -32768 + i * 1600, i * 1600, -8388608 + i * 400000, i * 400000,
        -2147483648 + i * 100000000, i * 100000000,
        -9223372036854775808 if i == 1 else i * 1000, 18446744073709551615 if i == 2 else i * 1000, i % 2,
        f"{i * 1.25:.2f}", f"{i}.{'1' * 30}", i * 0.5, i * 1e10,
        f"b'{i % 2}'", "b'" + "1" * 64 + "'" if i == 3 else f"b'{i:b}'",
        "'0000-00-00'" if i == 4 else f"'20{i % 25:02d}-0{1 + n}-1{n}'",  # MySQL's zero date
        f"'2024-01-0{1 + n} 12:34:56.{i:06d}'", f"'2024-02-0{1 + n} 01:02:03'",
        "'-838:59:59'" if i == 5 else f"'{i}:30:00.5'", 1901 + i,
        f"'c{n}'", f"'varchar {n} é'", f"'text {i}'", "REPEAT('x', 70000)" if i == 6 else f"'long {i}'",
        f"X'{i:08x}'", f"X'{i:04x}'", f"X'{i:02x}ff'", f"X'{i:02x}00'",
        ["'small'", "'medium'", "'large'"][i % 3], ["''", "'red'", "'red,blue'", "'green,blue,red'"][i % 4],
        ["'{\"a\": 1}'", "'[1, 2, 3]'", "'\"text\"'", "'null'"][i % 4],
        f"ST_GeomFromText('POINT({i} {n})')" if i % 2 else f"ST_GeomFromText('LINESTRING(0 0, {i} {n})')",
        f"POINT({i}, {n})",
    ]
    values = ["NULL" if i % 10 == 0 else str(v) for v in values]
    return f"({i}, {', '.join(values)}, NULL, {i}, 'q{n}', 'ü{n}', {i * 0.1})"


SCRIPT = [
    EVERY_TYPE,
    "INSERT INTO every_type VALUES " + ", ".join(_row(i) for i in range(1, ROWS + 1)),
    "CREATE TABLE empty_table (id INT, name VARCHAR(10), amount DOUBLE, flag BOOLEAN, day DATE)",
    "CREATE TABLE one_row (id INT, name VARCHAR(10), amount DOUBLE, flag BOOLEAN, day DATE, j JSON, g GEOMETRY)",
    "INSERT INTO one_row VALUES (1, 'only', 2.5, TRUE, '2024-01-01', '{\"k\": 1}', POINT(1, 2))",
]
# the types the resource gives ibis for the types ibis misreads (database/mysql_types.py, mysql_table)
READ_AS = {"t_bool": "boolean", "t_bit1": "boolean", "t_bit64": "decimal(20, 0)", "t_year": "int16",
           "t_bigint_u": "decimal(20, 0)", "t_set": "string", "t_geometry": "string", "t_point": "string",
           "t_enum": "string", "t_json": "string", "t_blob": "binary"}


@pytest.fixture(scope="module")
def mysql_types(module_scratch) -> DatabaseResource:
    url = load_tables("mysql", {"placeholder": pa.table({"x": [1]})}, module_scratch)  # skips without a server
    import MySQLdb

    parts = urlsplit(url)
    con = MySQLdb.connect(host=parts.hostname, port=parts.port, user=unquote(parts.username),
                          password=unquote(parts.password), database=parts.path.strip("/"), charset="utf8mb4")
    with con.cursor() as cur:
        cur.execute("DROP TABLE placeholder")
        for statement in SCRIPT:
            cur.execute(statement)
    con.commit()
    con.close()
    db = DatabaseResource(url=url)
    yield db
    db.close()


@pytest.fixture(scope="module")
def catalogued(mysql_types, tmp_path_factory):
    """Each table's profile, issues and snapshot, and the detectors' warnings."""
    out = {}
    with skipped_detectors() as skipped:
        catalog = mysql_types.catalog()
        for name, table in catalog.items():
            profile = compute_profile(table, database="types", table_name=name,
                                      fingerprint=mysql_types.fingerprint(name))
            issues = detect_issues(table, profile, catalog=catalog)
            snapshot = mysql_types.write_snapshot(name, tmp_path_factory.mktemp(name))
            out[name] = (profile, issues, snapshot)
    return out, skipped


def test_every_table_and_type_goes_through_every_stage(mysql_types, catalogued):
    tables, _ = catalogued
    assert sorted(tables) == ["empty_table", "every_type", "one_row"]
    schema = mysql_types.table("every_type").schema()
    assert {name: str(schema[name]) for name in READ_AS} == READ_AS
    profile, issues, snapshot = tables["every_type"]
    assert profile.row_count == ROWS == snapshot.rows and profile.column_count == len(schema)
    columns = {c.name: c for c in profile.columns}
    assert columns["t_all_null"].nulls == ROWS
    assert columns["t_year"].min == 1902 and columns["t_year"].max == 1940
    assert columns["t_bit1"].top_values and {v.value for v in columns["t_bit1"].top_values} == {True, False}
    assert "red,blue" in {v.value for v in columns["t_set"].top_values}
    assert "POINT(1 1)" in {v.value for v in columns["t_point"].top_values}
    assert any(i.type == "missing_values" and i.affectedColumns == ["t_all_null"] for i in issues)
    assert tables["empty_table"][0].row_count == 0 and tables["one_row"][0].row_count == 1
    with duckdb.connect(snapshot.path, read_only=True) as con:
        wide, geometry, year = con.execute(
            "SELECT t_decimal_wide, t_geometry, t_year FROM every_type WHERE id = 2").fetchone()
    assert wide == "2.111111111111111111111111111111" and geometry == "LINESTRING(0 0,2 2)" and year == 1903


def test_no_statistic_or_detector_is_lost_on_any_mysql_type(catalogued):
    """Fails today: see the message (profiling's NaN probe, quantiles, NOT NULL keys)."""
    tables, skipped = catalogued
    lost = [problem for name, (profile, _, _) in tables.items() for problem in lost_statistics(name, profile)]
    assert not lost and not skipped, "\n  ".join(
        ["statistics lost:", *grouped(lost), "detectors skipped:", *grouped(skipped)])
