"""No database password at rest: not in Dagster's storage, the store, the logs or the sandbox.

A URL holding a password reaches Dagster only through the CATALOGER_DATABASE variable
(dg.EnvVar), so the job snapshots, run config, tags and metadata Dagster keeps hold the
variable's name, never its value.  Dagster compresses its job snapshots, so a plain
`grep` of $DAGSTER_HOME would miss the very place the password used to leak to:
`occurrences` also looks inside SQLite cells and zlib / gzip streams.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import sqlite3
import subprocess
import sys
import uuid
import zlib
from pathlib import Path
from urllib.parse import quote

import pytest

CATALOGER = str(Path(sys.executable).parent / "cataloger")


# ------------------------------------------------------------------ the search


# gzip's magic, and the headers zlib writes at each of its compression levels
STREAM_START = re.compile(rb"\x1f\x8b|\x78[\x01\x5e\x9c\xda]")


def _inflated(data: bytes):
    """Every zlib or gzip stream found anywhere in `data`, decompressed."""
    view = memoryview(data)
    for match in STREAM_START.finditer(data):
        # wbits 31: a gzip member; 15: a zlib stream.  Either stops at its end, whatever follows
        wbits = 31 if match.group() == b"\x1f\x8b" else 15
        try:
            out = zlib.decompressobj(wbits).decompress(view[match.start():])
        except zlib.error:
            continue
        if out:
            yield out


def _sqlite_cells(path: Path):
    # a value larger than a page is split across overflow pages: only SQLite reassembles it
    con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in con.execute(f'SELECT * FROM "{table}"'):
                for cell in row:
                    if isinstance(cell, str):
                        yield table, cell.encode()
                    elif isinstance(cell, bytes):
                        yield table, cell
    finally:
        con.close()


def _views(path: Path):
    """(where, bytes) for the file itself and everything packed inside it."""
    data = path.read_bytes()
    yield "", data
    for blob in _inflated(data):
        yield " (compressed stream)", blob
    if data.startswith(b"SQLite format 3\x00"):
        for table, cell in _sqlite_cells(path):
            yield f" (table {table})", cell
            for blob in _inflated(cell):
                yield f" (table {table}, compressed)", blob


def occurrences(root: Path, needle: bytes) -> list[str]:
    """Where `needle` is found under `root`: in files, SQLite cells, compressed streams."""
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        found += [f"{path}{where}" for where, data in _views(path) if needle in data]
    return found


def test_the_search_finds_a_password_wherever_dagster_could_keep_it(tmp_path):
    canary = f"canary-{uuid.uuid4().hex}".encode()
    (tmp_path / "plain.log").write_bytes(b"before " + canary + b" after")
    (tmp_path / "packed.gz").write_bytes(gzip.compress(b"x" * 100 + canary))
    db = tmp_path / "runs.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE snapshots (id TEXT, body BLOB)")
    # as Dagster keeps a job snapshot: zlib-compressed, larger than a page (overflow pages)
    body = zlib.compress(os.urandom(20_000).hex().encode() + canary)
    con.execute("INSERT INTO snapshots VALUES ('a', ?)", (body,))
    con.commit()
    con.close()
    assert canary not in db.read_bytes()  # a grep would have missed it
    hits = occurrences(tmp_path, canary)
    assert any(h.endswith("plain.log") for h in hits)
    assert any("packed.gz (compressed stream)" in h for h in hits)
    assert any("runs.db (table snapshots, compressed)" in h for h in hits)
    assert occurrences(tmp_path, b"canary-" + uuid.uuid4().hex.encode()) == []


# ------------------------------------------------------------------ the runs


@pytest.fixture
def secret_database(postgres_admin_url, postgres_schema):
    """(URL with a distinctive password, the password's unique core) of a schema with one small table."""
    schema, conn = postgres_schema
    conn.execute(f"CREATE TABLE {schema}.things AS "
                 "SELECT g AS id, 'x' || g AS label, g % 3 AS grp FROM generate_series(1, 60) g")
    core = uuid.uuid4().hex  # every form of the password (raw, URL-quoted, JSON) contains it
    password = f"pw-{core}/:@!"  # characters that must be quoted in a URL
    assert quote(password, safe="") != password
    # the CI server trusts every local connection, so any password is accepted
    url = postgres_admin_url.replace("postgres://postgres@", f"postgres://postgres:{quote(password, safe='')}@")
    assert core in url
    return f"{url}?schema={schema}", core.encode()


def assert_nowhere(secret: bytes, *places: Path, texts: dict[str, str] | None = None):
    for name, text in (texts or {}).items():
        assert secret.decode() not in text, f"the password is in {name}"
    for place in places:
        hits = occurrences(place, secret)
        assert not hits, f"the password is stored in: {hits}"


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.bwrap
@pytest.mark.parametrize("given_as", ["flag", "variable"])
def test_cataloger_run_keeps_the_password_at_rest_nowhere(secret_database, local_sandbox, tmp_path, given_as):
    url, secret = secret_database
    home, store = tmp_path / "dagster_home", tmp_path / "store"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOGER_")}
    env.update(DAGSTER_HOME=str(home), CATALOGER_SANDBOX="local")
    args = [CATALOGER, "run", "--store", str(store), "--json", "--table", "things", "--table", "missing"]
    if given_as == "flag":
        args += ["--database", url]
    else:
        env["CATALOGER_DATABASE"] = url
    out = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)

    report = json.loads(out.stdout)
    tables = {t["table"]: t for t in report["tables"]}
    assert tables["things"]["status"] == "ok", out.stderr[-3000:]
    assert tables["missing"]["status"] == "failed" and "postgres:***@" in tables["missing"]["error"]
    assert report["database"].startswith("postgres://postgres:***@")
    assert Path(report["index"]).is_file() and Path(tables["things"]["html"]).is_file()
    assert sorted((home / "history").glob("runs*")), "the runs were not kept in DAGSTER_HOME"
    assert_nowhere(secret, tmp_path, texts={"stdout": out.stdout, "stderr": out.stderr})
    # The search reaches the job snapshots (compressed, inside runs.db), where the URL used to
    # be kept: the variable naming the database is found there instead.
    snapshot_hits = occurrences(home / "history", b'\\"env\\": \\"CATALOGER_DATABASE\\"')
    assert any("runs.db (table snapshots, compressed)" in h for h in snapshot_hits), snapshot_hits


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.bwrap
def test_dagster_dev_keeps_the_password_at_rest_nowhere(secret_database, local_sandbox, tmp_path):
    from e2e_support import catalog_stack_session, wait_for

    url, secret = secret_database
    session = catalog_stack_session(tmp_path / "dev", database_url=url)
    stack = next(session)
    try:
        dev = stack.dev
        # the database-change sensor lists the tables and fingerprints them: it adds the partition
        wait_for("the sensor to add the `things` partition",
                 lambda: "things" in json.dumps(dev.graphql(PARTITIONS)), timeout=120, every=2)
        run_id = stack.catalog_partition("things")
        run = dev.graphql(RUN_CONFIG, {"id": run_id})["runOrError"]
        assert secret.decode() not in json.dumps(run)
        location, repository = stack.repository()
        resource = dev.graphql(RESOURCE, {"selector": {
            "repositoryLocationName": location, "repositoryName": repository, "resourceName": "database",
        }})["topLevelResourceDetailsOrError"]
        # the UI shows which variable holds the URL, never the URL
        assert {"key": "url", "value": "CATALOGER_DATABASE", "type": "ENV_VAR"} in resource["configuredValues"]
        assert secret.decode() not in json.dumps(resource)
    finally:
        session.close()  # stops dagster dev, so every file is complete before the search
    pages = sorted(stack.store.rglob("catalog.html"))
    assert pages and "things" in pages[0].parts
    home = stack.dev.home
    assert (home / "dagster-dev.log").is_file()  # the output of dagster dev, its daemon and runs
    assert_nowhere(secret, home, stack.store)
    snapshot_hits = occurrences(home / "history", b'\\"env\\": \\"CATALOGER_DATABASE\\"')
    assert any("(table snapshots, compressed)" in h for h in snapshot_hits), snapshot_hits


SANDBOX_VIEW = """
import glob, json, os
seen = {"environ": dict(os.environ), "processes": []}
for folder in glob.glob("/proc/[0-9]*"):
    for name in ("environ", "cmdline"):
        try:
            with open(f"{folder}/{name}", "rb") as f:
                seen["processes"].append(f.read().decode(errors="replace"))
        except OSError:
            pass
print(json.dumps(seen))
"""


def test_the_sandbox_never_sees_the_database_url(sandbox_backend, monkeypatch):
    import dagster as dg

    from cataloger_dagster.resources.database.snapshots import SNAPSHOT_URL
    from cataloger_dagster.settings.factories import resources

    secret = f"pw-{uuid.uuid4().hex}"
    monkeypatch.delenv("CATALOGER_SANDBOX_ISOLATION", raising=False)  # the real isolation
    monkeypatch.setenv("CATALOGER_DATABASE", "")  # restored afterwards: resources() sets it
    res = resources(database=f"postgres://u:{secret}@db.example/prod?sslpassword={secret}x",
                    sandbox=sandbox_backend)
    assert os.environ["CATALOGER_DATABASE"].startswith("postgres://u:pw-")  # as `cataloger run` leaves it
    # as a run uses it: the pool starts the sandbox with the run (prestart), the investigations take it
    with dg.build_resources({"sandbox": res["sandbox"], "sandbox_pool": res["sandbox_pool"]}) as built:
        with built.sandbox.session(env={"DB_CONNECTION_STRING": SNAPSHOT_URL}, pool=built.sandbox_pool) as runtime:
            result = runtime.execute(SANDBOX_VIEW)
    assert result.ok, result.error
    seen = json.loads(result.stdout)
    assert seen["environ"]["DB_CONNECTION_STRING"] == SNAPSHOT_URL  # the snapshot, never the source
    assert "CATALOGER_DATABASE" not in seen["environ"]
    assert seen["processes"], "the cell could not read its own process"
    assert secret not in result.stdout + result.stderr


PARTITIONS = "{ assetNodes { assetKey { path } partitionKeysByDimension { partitionKeys } } }"
RUN_CONFIG = """query Run($id: ID!) { runOrError(runId: $id) { ... on Run {
  runConfigYaml tags { key value }
  assetMaterializations { metadataEntries { label ... on TextMetadataEntry { text }
                                            ... on UrlMetadataEntry { url } ... on PathMetadataEntry { path } } }
} } }"""
RESOURCE = """query Resource($selector: ResourceSelector!) {
  topLevelResourceDetailsOrError(resourceSelector: $selector) {
    __typename ... on ResourceDetails { configuredValues { key value type } }
  }
}"""
