"""A catalog's identity: its name, the source it records, and an index of its own stored results.

Real `cataloger run`s (`catalog_database`, real Dagster, the local sandbox) over small DuckDB
and SQLite files that share a stem, in one Dagster instance and one store, and over two
schemas of the running PostgreSQL server.
"""

import json
import re
import sqlite3
import uuid
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from cataloger_dagster.cli.runner import catalog_database
from cataloger_dagster.core.layout import CATALOG_FILE, store_name
from cataloger_dagster.resources.store import LocalStore
from cataloger_dagster.resources.store.identity import CatalogIdentityError
from cataloger_dagster.settings.factories import plain_database
from tests.conftest import sandbox_problem, service_unavailable

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

DUCKDB_TABLES = ["riders", "stations", "trips"]


def make_bikes_duckdb(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE trips AS SELECT range AS trip_id, range % 3 AS station FROM range(60)")
        con.execute("CREATE TABLE stations AS SELECT range AS station, 'st' || range AS label FROM range(3)")
        con.execute("CREATE TABLE riders AS SELECT range AS rider_id FROM range(10)")
    return path


def make_bikes_sqlite(path: Path) -> Path:
    """The same stem and a `trips` table of other types (trip_id is text here)."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE trips (trip_id TEXT, station INTEGER)")
    con.executemany("INSERT INTO trips VALUES (?, ?)", [(f"t{i}", i % 3) for i in range(60)])
    con.commit()
    con.close()
    return path


def index_rows(index: str) -> dict[str, str]:
    """{table: the text of its row} of an index page."""
    html = Path(index).read_text()
    return {m.group(1): m.group(2) for m in re.finditer(r'<tr [^>]*data-table="([^"]*)"(.*?)</tr>', html, re.S)}


def issue_types(report, table: str) -> set[str]:
    return {i.type for t in report.tables if t.table == table for i in t.issues}


@pytest.fixture(scope="module")
def bikes(tmp_path_factory):
    """One store and one Dagster instance; bikes.duckdb catalogued, then bikes.sqlite, then
    bikes.duckdb's `trips` alone, then a typo'd table."""
    problem = sandbox_problem("local")
    if problem:
        service_unavailable(problem)
    tmp = tmp_path_factory.mktemp("identity")
    duck, lite = make_bikes_duckdb(tmp / "bikes.duckdb"), make_bikes_sqlite(tmp / "bikes.sqlite")
    store = tmp / "store"
    # a catalog the stem named before: bikes.duckdb's first run says where it is
    legacy = LocalStore(root=str(store))
    legacy.open_run(f"bikes/{store_name('trips')}", "an-earlier-run", table="trips")
    common = {"store": str(store), "sandbox": "local", "exploration_rate": 0.0}
    with dg.instance_for_test() as instance:
        runs = {"all": catalog_database(database=f"duckdb://{duck}", instance=instance, **common)}
        runs["sqlite"] = catalog_database(database=f"sqlite://{lite}", instance=instance, **common)
        runs["one"] = catalog_database(database=f"duckdb://{duck}", tables=["trips"], instance=instance, **common)
        runs["typo"] = catalog_database(database=f"duckdb://{duck}", tables=["Trips"], instance=instance, **common)
        yield {"tmp": tmp, "store": store, "instance": instance, "duck": duck, "lite": lite, "common": common,
               "runs": runs}


def test_each_source_has_a_catalog_named_by_its_whole_file_name(bikes):
    store, runs = bikes["store"], bikes["runs"]
    assert runs["all"].catalog == "bikes.duckdb" and runs["sqlite"].catalog == "bikes.sqlite"
    assert runs["all"].index == str(store / "bikes.duckdb" / "index.html")
    assert runs["sqlite"].index == str(store / "bikes.sqlite" / "index.html")
    assert sorted(p.name for p in (store / "bikes.duckdb").iterdir() if p.name in DUCKDB_TABLES) == DUCKDB_TABLES
    assert [p.name for p in (store / "bikes.sqlite").iterdir() if p.name in DUCKDB_TABLES] == ["trips"]
    # each catalog records its source, the absolute file path
    for folder, path in (("bikes.duckdb", bikes["duck"]), ("bikes.sqlite", bikes["lite"])):
        recorded = json.loads((store / folder / CATALOG_FILE).read_text())
        assert recorded["name"] == folder and recorded["sources"] == [f"{folder.split('.')[1]}://{path.resolve()}"]


def test_a_second_database_of_the_same_stem_raises_no_schema_change(bikes):
    runs = bikes["runs"]
    assert [t.status for t in runs["sqlite"].tables] == ["ok"]
    assert "schema_change" not in issue_types(runs["sqlite"], "trips")
    # and the DuckDB file's next run compares with its own history only
    assert "schema_change" not in issue_types(runs["one"], "trips")


def test_a_second_database_in_the_same_dagster_home_leaves_each_index_its_own_tables(bikes):
    runs = bikes["runs"]
    assert sorted(bikes["instance"].get_dynamic_partitions("tables")) == DUCKDB_TABLES   # the instance mixes them
    sqlite_rows = index_rows(runs["sqlite"].index)
    assert list(sqlite_rows) == ["trips"]            # not bikes.duckdb's riders and stations, "missing"
    duck_rows = index_rows(runs["one"].index)
    assert sorted(duck_rows) == DUCKDB_TABLES
    assert not any("missing" in row for row in duck_rows.values())


def test_one_table_run_keeps_the_other_tables_in_the_index(bikes):
    one = bikes["runs"]["one"]
    assert [t.table for t in one.tables] == ["trips"] and one.tables[0].status == "ok"
    rows = index_rows(one.index)
    assert sorted(rows) == DUCKDB_TABLES
    assert f"<b>{len(DUCKDB_TABLES)}</b> tables" in Path(one.index).read_text()
    # the others link their last page, from the full run
    for table in ("riders", "stations"):
        run = next(t.run for t in bikes["runs"]["all"].tables if t.table == table)
        assert run in rows[table].replace("%3A", ":") and ">ok<" in rows[table]


def test_a_typo_in_table_fails_alone_and_drops_no_table_from_the_index(bikes):
    typo = bikes["runs"]["typo"]
    assert [(t.table, t.status) for t in typo.tables] == [("Trips", "failed")]
    assert "table 'Trips' not found" in typo.tables[0].error
    rows = index_rows(typo.index)
    assert sorted(rows) == DUCKDB_TABLES
    assert not any("missing" in row for row in rows.values())


def test_the_first_run_says_where_the_results_under_the_old_name_are(bikes):
    (note,) = bikes["runs"]["all"].notes
    assert "'bikes.duckdb'" in note and "'bikes'" in note and "--name 'bikes'" in note
    assert bikes["runs"]["one"].notes == []                    # said once
    assert bikes["runs"]["sqlite"].notes != []                 # it may be the SQLite file's too
    # the old catalog is left as it was, not claimed by either
    assert not (bikes["store"] / "bikes" / CATALOG_FILE).exists()


def test_a_name_another_source_uses_is_refused_before_any_run(bikes):
    other = make_bikes_duckdb(bikes["tmp"] / "elsewhere" / "bikes.duckdb")
    before = sorted(p.name for p in (bikes["store"] / "bikes.duckdb" / "trips").iterdir())
    with pytest.raises(CatalogIdentityError) as refused:
        catalog_database(database=f"duckdb://{other}", instance=bikes["instance"], **bikes["common"])
    message = str(refused.value)
    assert "\n" not in message
    assert str(bikes["duck"].resolve()) in message and str(other.resolve()) in message and "--name" in message
    assert sorted(p.name for p in (bikes["store"] / "bikes.duckdb" / "trips").iterdir()) == before


def test_the_command_says_the_refusal_in_one_line(bikes):
    from click.testing import CliRunner

    from cataloger_dagster.cli.app import main

    other = bikes["tmp"] / "typed" / "bikes.duckdb"
    make_bikes_duckdb(other)
    out = CliRunner().invoke(main, ["run", "--database", f"duckdb://{other}", "--store", str(bikes["store"])],
                             env={"CATALOGER_NAME": None})
    assert out.exit_code == 1 and "Traceback" not in out.output
    last = out.output.splitlines()[-1]
    assert last.startswith("Error: the catalog 'bikes.duckdb'") and str(other.resolve()) in last and "--name" in last


def test_a_run_launched_by_dagster_is_refused_in_its_first_step(bikes, monkeypatch):
    """A sensor's, the schedule's or the UI's run: the same check, in table_profile (TableRun.open)."""
    from cataloger_dagster.assets.table_profile import table_profile
    from cataloger_dagster.settings.factories import resources

    other = bikes["tmp"] / "launched" / "bikes.duckdb"
    make_bikes_duckdb(other)
    monkeypatch.setenv("CATALOGER_DATABASE", f"duckdb://{other}")   # resources() sets it: undone after
    res = resources(database=f"duckdb://{other}", store=str(bikes["store"]), sandbox="local")
    result = dg.materialize([table_profile], partition_key="trips", instance=bikes["instance"], resources=res,
                            raise_on_error=False)
    assert not result.success
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    message = failure.step_failure_data.error.cause.message   # the error table_profile raised
    assert "holds the results of" in message and str(other.resolve()) in message and "--name" in message
    recorded = json.loads((bikes["store"] / "bikes.duckdb" / CATALOG_FILE).read_text())
    assert f"duckdb://{other.resolve()}" not in recorded["sources"]


def test_a_name_given_with_name_adds_the_source_to_that_catalog(bikes):
    other = bikes["tmp"] / "elsewhere" / "bikes.duckdb"
    if not other.exists():
        make_bikes_duckdb(other)
    report = catalog_database(database=f"duckdb://{other}", name="bikes.duckdb", tables=["riders"],
                              instance=bikes["instance"], **bikes["common"])
    assert report.catalog == "bikes.duckdb" and [t.status for t in report.tables] == ["ok"]
    recorded = json.loads((bikes["store"] / "bikes.duckdb" / CATALOG_FILE).read_text())
    assert recorded["sources"] == [f"duckdb://{bikes['duck'].resolve()}", f"duckdb://{other.resolve()}"]


@pytest.fixture
def pg_schemas(postgres_schema):
    """A table of one name in `public` and in a fresh schema, with other types; dropped after."""
    schema, conn = postgres_schema
    table = f"trips_{uuid.uuid4().hex[:8]}"
    conn.execute(f"CREATE TABLE public.{table} AS SELECT g AS trip_id, g % 3 AS station FROM generate_series(1, 40) g")
    conn.execute(f"CREATE TABLE {schema}.{table} AS SELECT 't' || g AS trip_id, g % 3 AS station "
                 "FROM generate_series(1, 40) g")
    try:
        yield schema, table
    finally:
        conn.execute(f"DROP TABLE public.{table}")


def test_postgresql_schemas_get_a_catalog_each_and_no_password_in_it(pg_schemas, postgres_admin_url, tmp_path,
                                                                      local_sandbox):
    schema, table = pg_schemas
    secret = "s3cr3t-pw"
    url = postgres_admin_url.replace("postgres://postgres@", f"postgres://postgres:{secret}@")
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        public = catalog_database(database=f"{url}?schema=public", store=str(store), sandbox="local",
                                  tables=[table], exploration_rate=0.0, instance=instance)
        other = catalog_database(database=f"{url}?schema={schema}", store=str(store), sandbox="local",
                                 tables=[table], exploration_rate=0.0, instance=instance)
    assert [t.status for t in public.tables] == [t.status for t in other.tables] == ["ok"]
    assert public.catalog.endswith("/cataloger_test/public") and other.catalog.endswith(f"/cataloger_test/{schema}")
    assert public.catalog.startswith("127.0.0.1_")
    assert "schema_change" not in issue_types(other, table)
    folders = {p.name for p in store.iterdir()}
    assert folders == {store_name(public.catalog), store_name(other.catalog)}
    recorded = json.loads((store / store_name(other.catalog) / CATALOG_FILE).read_text())
    assert recorded["sources"] == [f"postgres://127.0.0.1:{other.catalog.split('_')[1].split('/')[0]}"
                                   f"/cataloger_test?schema={schema}"]
    for path in store.rglob("*"):
        assert secret not in path.name
        if path.is_file() and path.suffix in (".json", ".html"):
            assert secret not in path.read_text(errors="replace")


@pytest.mark.parametrize("url, name", [
    ("duckdb:///data/bikes.duckdb", "bikes.duckdb"),
    ("sqlite:///data/bikes.sqlite", "bikes.sqlite"),
    ("bikes.duckdb", "bikes.duckdb"),
    ("postgres://u:pw@127.0.0.1:5432/bikes?schema=ops", "127.0.0.1_5432/bikes/ops"),
    ("postgresql://u:pw@db.example/bikes", "db.example_5432/bikes/public"),
    ("postgres://u@h/bikes?password=pw&schema=ops", "h_5432/bikes/ops"),
    ("mysql://u:pw@127.0.0.1:3306/bikes", "127.0.0.1_3306/bikes"),
])
def test_the_default_name_is_the_whole_source_and_never_a_password(url, name):
    from cataloger_dagster.resources.database.resource import DatabaseResource

    db = DatabaseResource(url=url)
    assert db.database_name == name
    assert "pw" not in db.source.replace("postgres", "")
    assert DatabaseResource(url=url, name="mine").database_name == "mine"


def test_postgres_schemas_and_spellings(tmp_path):
    from cataloger_dagster.resources.database.resource import DatabaseResource

    public, ops = (DatabaseResource(url=f"postgres://u:pw@h/bikes?schema={s}") for s in ("public", "ops"))
    assert public.database_name != ops.database_name and public.source != ops.source
    # no schema is the one a role starts in; postgresql:// is postgres://
    assert DatabaseResource(url="postgresql://u@h:5432/bikes").source == public.source


def test_catalog_name_setting_names_the_catalog_of_every_resource(monkeypatch, tmp_path):
    from cataloger_dagster.settings.factories import database_resource
    from cataloger_dagster.settings.model import load_settings

    monkeypatch.setenv("CATALOGER_DATABASE", f"duckdb://{tmp_path}/bikes.duckdb")
    monkeypatch.setenv("CATALOGER_NAME", "bikes-prod")
    settings = load_settings()
    assert plain_database(settings).database_name == "bikes-prod"
    assert database_resource(settings=settings).name == "bikes-prod"   # what the Dagster definitions get
    monkeypatch.delenv("CATALOGER_NAME")
    assert plain_database(load_settings()).database_name == "bikes.duckdb"
