"""`cataloger open`: the index to open in a browser, for a local store and an S3 store (moto's
server) alike.  A real `cataloger run` of the shop writes the pages; the command prints the
index's file:// URL (--print: no browser is started), and for S3 copies the pages beside it,
so that every link of the index resolves to a file on this machine."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest
from click.testing import CliRunner

from cataloger_dagster.cli.app import main
from shop import make_shop

pytestmark = [pytest.mark.slow]


def invoke(*args):
    env = {"CATALOGER_DATABASE": None, "CATALOGER_STORE": None, "CATALOGER_NAME": None}
    return CliRunner().invoke(main, ["open", *args], env=env, catch_exceptions=False)


def catalog(db: Path, store: str) -> None:
    from cataloger_dagster.cli.runner import catalog_database

    report = catalog_database(database=f"duckdb://{db}", store=store, tables=["events"], exploration_rate=0.0)
    assert not report.failed, [t.error for t in report.failed]


def links_resolve(index: Path) -> list[str]:
    """Every relative link of the index (the tables' pages, their timelapses), checked to be a file."""
    html = index.read_text()
    hrefs = [h.replace("&amp;", "&") for h in re.findall(r'href="([^"#]+)"', html)]
    assert hrefs
    for href in hrefs:
        target = Path(unquote(urlparse(urljoin(index.as_uri(), href)).path))
        assert target.is_file(), href
    return hrefs


@pytest.fixture(scope="module")
def local_catalog(tmp_path_factory, local_sandbox_for_module):
    tmp = tmp_path_factory.mktemp("open")
    db = make_shop(tmp / "shop.duckdb")
    catalog(db, str(tmp / "store"))
    return db, tmp / "store"


def test_a_local_store_opens_its_own_index(local_catalog):
    db, store = local_catalog
    out = invoke("--database", f"duckdb://{db}", "--store", str(store), "--print")
    assert out.exit_code == 0, out.output
    url = out.stdout.strip()
    assert url == (store / "shop.duckdb" / "index.html").resolve().as_uri()
    data = json.loads(invoke("--name", "shop.duckdb", "--store", str(store), "--json").stdout)
    assert data["url"] == url and data["copied"] == 0
    assert any(h.endswith("catalog.html") for h in links_resolve(Path(data["index"])))


def test_a_catalog_with_no_index_says_how_to_make_one(tmp_path):
    out = invoke("--name", "shop.duckdb", "--store", str(tmp_path / "empty"), "--print")
    assert out.exit_code == 1
    assert "holds no index for database 'shop.duckdb'" in out.output and "cataloger run" in out.output


def test_an_s3_stores_pages_are_copied_and_open_offline(s3_env, tmp_path, local_sandbox):
    from cataloger_dagster.resources.store import store_from_url

    bucket = f"test-{uuid.uuid4().hex[:12]}"
    url = f"s3://{bucket}/team/catalog"
    store_from_url(url).s3_resource().get_client().create_bucket(Bucket=bucket)
    db = make_shop(tmp_path / "shop.duckdb")
    catalog(db, url)

    to = tmp_path / "pages"
    out = invoke("--name", "shop.duckdb", "--store", url, "--to", str(to), "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    index = Path(data["index"])
    assert index == to / "shop.duckdb" / "index.html" and data["url"] == index.resolve().as_uri()
    assert data["copied"] > 3
    hrefs = links_resolve(index)
    assert any(h.endswith("catalog.html") for h in hrefs) and any(h.endswith("timelapse.html") for h in hrefs)
    # the catalog page's own links (the index, what changed, its JSON) resolve too
    page = next(index.parent.glob("events/*/catalog.html"))
    for name in ("recent_summary.html", "profile.json", "issues.json"):
        assert (page.parent / name).is_file()
    assert (index.parent / "events" / "timelapse.html").is_file()
    # the same bytes as the store holds
    store = store_from_url(url)
    assert index.read_text() == store.read_index("shop.duckdb")
