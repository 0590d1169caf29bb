"""Table and database names that used to break paths: each gets a folder of its
own in the store and a file of its own in Dagster's storage; none fails another table or
the index, and every link of the index resolves.

The database is a real DuckDB file named 'my db.duckdb'; the catalog is the real runner
(`cataloger_dagster.cli.runner.catalog_database`) with the local sandbox, over a local folder
and over S3 (moto's server).
"""

from __future__ import annotations

import json
import uuid
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import boto3
import dagster as dg
import duckdb
import pytest
from click.testing import CliRunner
from markupsafe import escape

from cataloger_dagster.cli import main
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.io_manager import TableIOManager
from cataloger_dagster.resources.store import LocalStore, store_name
from cataloger_dagster.cli.runner import catalog_database
from cataloger_dagster.core.layout import CATALOG_FILE

DATABASE = "my db.duckdb"               # the store's name of 'my db.duckdb': the file's name
NORMAL = ["customers", "orders"]
HOSTILE = [
    "a/b", "a", "..", ".", "%", "50%25", "x" * 300, "index.html", "catalog.json", "INDEX_HISTORY", "database_runs",
    "table_facts", "review_log", "-rf",
    "my table", "#frag?q=1", "../../escape",
]
# the database's own logs beside its tables: runs of `cataloger run`, table facts, reviews
DATABASE_LOGS = ("database_runs", "table_facts", "review_log")
# Dagster's UI cannot take these as partition keys: reported as failures, nothing else
REFUSED = ["line\nbreak", "odd...name"]
ALL = NORMAL + HOSTILE + REFUSED
# S3 (moto) is slower: the names that need escaping in a key or a link, and one refused
S3_TABLES = ["orders", "a/b", "..", "%", "x" * 300, "index.html", "my table", "#frag?q=1", "line\nbreak"]


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "my db.duckdb"
    with duckdb.connect(str(path)) as con:
        for i, name in enumerate(ALL):
            # each table its own row count, so a page shown for the wrong table is caught
            con.execute(f"CREATE TABLE {quoted(name)} AS "
                        f"SELECT range AS id, 'v' || (range % 3) AS grp FROM range({10 + i})")
    return path


class Links(HTMLParser):
    def __init__(self, html: str):
        super().__init__()
        self.hrefs: list[str] = []
        self.codes: list[str] = []
        self._in_code = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)
        self._in_code = tag == "code"

    def handle_endtag(self, tag):
        self._in_code = False if tag == "code" else self._in_code

    def handle_data(self, data):
        if self._in_code:
            self.codes.append(data)


def relative_targets(html: str) -> list[str]:
    """The store paths (relative to the index's folder) of the index's links to files."""
    targets = []
    for href in Links(html).hrefs:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or not parts.path:
            continue  # in-page anchors and outside links
        targets.append(unquote(parts.path))
    return targets


def check_report(report, names: list[str], *, folder_of) -> dict:
    """Every table has its verdict, and each cataloged one's page is in its own folder."""
    by_table = {t.table: t for t in report.tables}
    assert set(by_table) == set(names)
    for name in set(names) & set(REFUSED):
        assert by_table[name].status == "failed"
        assert "partition key" in by_table[name].error and "rename it" in by_table[name].error
    for name in set(names) - set(REFUSED):
        assert by_table[name].status == "ok", (name, by_table[name].error)
        assert by_table[name].html == folder_of(name, by_table[name].run) + "/catalog.html"
    return by_table


def check_index(html: str, read, names: list[str], *, expected_pages: dict[str, str]) -> None:
    """Every link of the index reaches a stored page, the right one; every table is listed."""
    timelapses = {name: f"{page.split('/')[0]}/timelapse.html" for name, page in expected_pages.items()}
    # the database at a glance links some of the same pages again: none other
    assert set(relative_targets(html)) == {*expected_pages.values(), *timelapses.values()}
    html = html[html.index('<section id="tables">'):]   # the table of tables: each table once
    targets = relative_targets(html)
    assert sorted(targets) == sorted([*expected_pages.values(), *timelapses.values()])
    for name, target in timelapses.items():   # each table's timelapse, in its own folder
        page = read(target)
        assert page is not None and f"<h1>{escape(name)}</h1>" in page, (name, target)
    for name, target in expected_pages.items():
        page = read(target)
        assert page is not None, (name, target)
        # the table's own page: its name, and the row count its table was made with
        assert f"<h1>{escape(name)}</h1>" in page, name
        assert f"<b>{10 + ALL.index(name)}</b> rows" in page, name
    assert sorted(Links(html).codes) == sorted(names)


def test_hostile_names_catalog_into_their_own_folders(hostile_db, tmp_path, local_sandbox, monkeypatch):
    store = tmp_path / "store"
    home = tmp_path / "dagster_home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    db_folder = store / store_name(DATABASE)
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        report = catalog_database(database=f"duckdb://{hostile_db}", store=str(store),
                                  sandbox=local_sandbox, exploration_rate=0.0, instance=instance)

    by_table = check_report(report, ALL, folder_of=lambda name, run: str(db_folder / store_name(name) / run))
    assert report.index == str(db_folder / "index.html")

    # the store holds the database's folder alone; in it, one folder per cataloged table,
    # the index and its history, the database's logs, nothing written outside any of them
    assert [p.name for p in store.iterdir()] == [store_name(DATABASE)]
    cataloged = NORMAL + HOSTILE
    assert {p.name for p in db_folder.iterdir()} == {
        "index.html", "index_history", CATALOG_FILE, *DATABASE_LOGS, *(store_name(n) for n in cataloged)}
    assert not list(tmp_path.rglob("escape")) and not (tmp_path / "index.html").exists()
    for name in cataloged:
        [run] = [p.name for p in (db_folder / store_name(name)).iterdir() if p.is_dir()]
        assert run == by_table[name].run
        assert (db_folder / store_name(name) / "timelapse.html").is_file()   # beside its runs, inside its folder
        profile = json.loads((db_folder / store_name(name) / run / "profile.json").read_text())
        assert profile["table"] == name and profile["row_count"] == 10 + ALL.index(name)

    # the index: every link resolves to the right page, every table is listed
    html = (db_folder / "index.html").read_text()
    check_index(
        html,
        lambda target: (db_folder / target).read_text() if (db_folder / target).is_file() else None,
        ALL,
        expected_pages={n: f"{store_name(n)}/{by_table[n].run}/catalog.html" for n in cataloged},
    )

    # reading back: the store lists every table by its name, and the scripts command finds each
    assert LocalStore(root=str(store)).list_tables(DATABASE) == sorted(cataloged)
    for name in ("a/b", "x" * 300, "index.html", "..", "-rf"):
        out = CliRunner().invoke(
            main, ["scripts", "list", "--database", f"duckdb://{hostile_db}", "--store", str(store),
                   "--json", "--", name],
            env={"CATALOGER_DATABASE": None, "CATALOGER_STORE": None}, catch_exceptions=False)
        assert out.exit_code == 0, out.output
        data = json.loads(out.output)
        assert data["table"] == name and data["database"] == DATABASE
        assert [r["timestamp"] for r in data["runs"]] == [by_table[name].run]
        assert all(r["uri"].startswith(str(db_folder / store_name(name)) + "/") for r in data["runs"])

    # the results' one copy is each table's own run folder in the store: Dagster's storage holds none
    storage = home / "storage"
    for asset in ("table_profile", "table_understanding", "quality_issues", "investigations"):
        assert not (storage / asset).exists()
    for name in cataloged:
        folder = db_folder / store_name(name) / by_table[name].run
        assert all((folder / f).is_file() for f in ("understanding.json", "issues.json", "investigations.json"))


def test_hostile_names_catalog_into_s3(hostile_db, s3_env, local_sandbox):
    s3 = boto3.client("s3", endpoint_url=s3_env, region_name="us-east-1")
    s3_bucket = f"hostile-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=s3_bucket)
    store = f"s3://{s3_bucket}/catalogs"
    base = f"catalogs/{store_name(DATABASE)}"
    with dg.instance_for_test() as instance:
        report = catalog_database(database=f"duckdb://{hostile_db}", store=store, tables=S3_TABLES,
                                  sandbox=local_sandbox, exploration_rate=0.0, instance=instance)
    by_table = check_report(
        report, S3_TABLES, folder_of=lambda name, run: f"s3://{s3_bucket}/{base}/{store_name(name)}/{run}")
    assert report.index == f"s3://{s3_bucket}/{base}/index.html"

    keys = {o["Key"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket=s3_bucket)
            for o in page.get("Contents", [])}
    cataloged = [n for n in S3_TABLES if n not in REFUSED]
    # every key in its table's folder of the database's folder, or the index (and its history)
    tops = {key[len(base) + 1:].split("/")[0] for key in keys}
    assert all(key.startswith(base + "/") for key in keys)
    assert tops == {"index.html", "index_history", CATALOG_FILE, *DATABASE_LOGS, *(store_name(n) for n in cataloged)}

    def read(target: str) -> str | None:
        key = f"{base}/{target}"
        return s3.get_object(Bucket=s3_bucket, Key=key)["Body"].read().decode() if key in keys else None

    html = read("index.html")
    check_index(html, read, S3_TABLES, expected_pages={
        n: f"{store_name(n)}/{by_table[n].run}/catalog.html" for n in cataloged})


def test_names_differing_only_in_case_get_their_own_folders(postgres_admin_url, postgres_schema, tmp_path,
                                                            local_sandbox):
    # DuckDB and SQLite fold the case of names; PostgreSQL keeps quoted ones apart
    schema, conn = postgres_schema
    names = ["orders", "Orders", "ORDERS"]
    for i, name in enumerate(names):
        conn.execute(f"CREATE TABLE {schema}.{quoted(name)} AS SELECT g AS id FROM generate_series(1, {5 + i}) g")
    url = f"{postgres_admin_url}?schema={schema}"
    store = tmp_path / "store"
    with dg.instance_for_test() as instance:
        report = catalog_database(database=url, store=str(store), sandbox=local_sandbox,
                                  exploration_rate=0.0, instance=instance)
    assert [(t.table, t.status) for t in sorted(report.tables, key=lambda t: t.table)] == [
        (n, "ok") for n in sorted(names)]
    db_folder = Path(report.index).parent
    assert {p.name for p in db_folder.iterdir()} == {"index.html", "index_history", CATALOG_FILE, *DATABASE_LOGS, *names}
    for i, name in enumerate(names):
        [run] = [t.run for t in report.tables if t.table == name]
        profile = json.loads((db_folder / name / run / "profile.json").read_text())
        assert profile["table"] == name and profile["row_count"] == 5 + i


def test_the_sensor_adds_and_runs_every_table_but_the_names_dagster_refuses(hostile_db, capfd):
    from cataloger_dagster.definitions import defs
    from cataloger_dagster.resources.database.resource import DatabaseResource

    sensor = defs.resolve_sensor_def("database_change_sensor")
    with dg.instance_for_test() as instance:
        with dg.build_sensor_context(
            instance=instance,
            instance_ref=instance.get_ref(),  # as the daemon: partition keys are validated
            definitions=defs,
            resources={"database": DatabaseResource(url=f"duckdb://{hostile_db}")},
        ) as context:
            data = sensor.evaluate_tick(context)
    [added] = [r for r in data.dynamic_partitions_requests if isinstance(r, dg.AddDynamicPartitionsRequest)]
    assert sorted(added.partition_keys) == sorted(NORMAL + HOSTILE)
    assert sorted(r.partition_key for r in data.run_requests) == sorted(NORMAL + HOSTILE)
    err = capfd.readouterr().err
    for name in REFUSED:
        assert f"table {name!r} is not catalogued" in err and "partition key" in err


@pytest.mark.slow
def test_the_io_manager_keeps_every_partition_key_in_its_assets_folder(tmp_path):
    keys = ["../../outside", "a/b", "a", ".", "..", "x" * 300, "/etc/passwd-copy"]
    tables = dg.DynamicPartitionsDefinition(name="tables")

    @dg.asset(partitions_def=tables)
    def upstream(context) -> str:
        return f"value of {context.partition_key}"

    @dg.asset(partitions_def=tables)
    def downstream(upstream: str) -> str:
        return upstream + "!"

    home = tmp_path / "home"
    home.mkdir()
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        instance.add_dynamic_partitions("tables", keys)
        for key in keys:
            result = dg.materialize([upstream, downstream], partition_key=key, instance=instance,
                                    resources={"io_manager": TableIOManager(),
                                               "store": LocalStore(root=str(home / "store")),
                                               "database": DatabaseResource(url=f"duckdb:///{home / DATABASE}")})
            assert result.output_for_node("downstream") == f"value of {key}!"
    storage = home / "storage"
    for asset in ("upstream", "downstream"):
        assert {p.name for p in (storage / asset).iterdir()} == {store_name(k) for k in keys}
        assert all(p.is_file() for p in (storage / asset).iterdir())
    # nothing beside the instance's own files, and no asset folder but the two
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]
    assert not list(tmp_path.rglob("outside")) and not list(tmp_path.rglob("passwd-copy"))
    assert {p.name for p in storage.iterdir() if not _is_run_folder(p)} == {"upstream", "downstream"}


def _is_run_folder(path: Path) -> bool:
    # the instance keeps each run's compute logs in a folder named by the run id
    return path.is_dir() and len(path.name) == 36 and path.name.count("-") == 4


def test_the_definitions_store_outputs_through_the_table_io_manager():
    from cataloger_dagster.definitions import defs

    assert isinstance(defs.resources["io_manager"], TableIOManager)
