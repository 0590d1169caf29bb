"""A real browser (Debian's headless chromium, driven by Playwright) on what users look at.

The store's pages (catalog page, recent summary, index, as `cataloger run` writes them)
and the Dagster UI of a real `dagster dev` (the `catalog_stack` fixture): no console
error, no request leaves the machine (every request is recorded; anything that is not
file:, data:, blob: or 127.0.0.1 is a failure, and is aborted so it really does not leave),
and the charts are drawn (SVG with a non-zero box). Screenshots go to test-artifacts/browser/.

With CATALOGER_UPDATE_DOCS=1 the UI screenshots are also written to docs/ for docs/ui.md.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.conftest import service_unavailable
from e2e_support import REPO

pytestmark = [pytest.mark.slow, pytest.mark.chromium]

CHROMIUM = os.environ.get("CATALOGER_CHROMIUM") or shutil.which("chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = REPO / "test-artifacts" / "browser"
DOCS = REPO / "docs"
LOCAL_HOSTS = {"127.0.0.1"}
TABLE = "customers"


def is_local(url: str) -> bool:
    parsed = urlparse(url)
    if parsed.scheme in ("file", "data", "about"):
        return True
    if parsed.scheme == "blob":  # blob:http://127.0.0.1:port/uuid: local if its origin is
        return is_local(url[len("blob:"):])
    return parsed.scheme in ("http", "https", "ws", "wss") and parsed.hostname in LOCAL_HOSTS


@dataclass
class Recorder:
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return [f"request left the machine: {u}" for u in self.blocked] + self.errors


@pytest.fixture(scope="module")
def chromium() -> str:
    """The browser's path; skips (fails in CI) where it is absent.  Starts nothing, so that the
    fixtures that run Dagster can ask for it first and not run for a test that would skip."""
    if not CHROMIUM or not os.path.isfile(CHROMIUM) or not os.access(CHROMIUM, os.X_OK):
        service_unavailable(f"chromium ({CHROMIUM or 'not on PATH'}: apt-get install chromium, "
                            "or set CATALOGER_CHROMIUM to its path)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        service_unavailable("Playwright for Python (pip install -e '.[dev]')")
    return CHROMIUM


@pytest.fixture(scope="module")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS, timeout=60_000)
        try:
            yield browser
        finally:
            browser.close()


# Fixtures that run Dagster come before `page` in each test's arguments: Dagster must not
# run inside the event loop that Playwright's sync API keeps in this thread.
@pytest.fixture
def page(browser):
    """A fresh page that records every request and every console error."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, service_workers="block")
    rec = Recorder()

    def route(r):
        url = r.request.url
        rec.requests.append(url)
        if is_local(url):
            r.continue_()
        else:
            rec.blocked.append(url)
            r.abort()

    context.route("**/*", route)
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    # route() sees only what the page fetches; this sees what the browser itself does too
    pg.on("request", lambda req: None if is_local(req.url) or req.url in rec.blocked else rec.blocked.append(req.url))
    pg.on("console", lambda m: rec.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda exc: rec.errors.append(f"uncaught: {exc}"))
    pg.recorder = rec
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture(scope="module")
def store_pages(chromium, local_sandbox_for_module, demo_db, tmp_path_factory) -> dict[str, Path]:
    """Pages a `cataloger run` of two demo tables wrote: catalog page, recent summary, index."""
    from cataloger_dagster.cli.runner import catalog_database

    store = tmp_path_factory.mktemp("browser_store")
    report = catalog_database(database=f"duckdb:///{demo_db}", store=str(store),
                              tables=[TABLE, "orders"], exploration_rate=0.0)
    assert not report.failed, [t.error for t in report.failed]
    page = Path(next(t.html for t in report.tables if t.table == TABLE))
    return {"catalog": page, "recent_summary": page.parent / "recent_summary.html", "index": Path(report.index)}


def shoot(pg, name: str, docs: bool = False) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    pg.screenshot(path=str(path), full_page=not docs)
    assert path.stat().st_size > 1000
    if docs and os.environ.get("CATALOGER_UPDATE_DOCS"):
        # taller than the window, so that docs/ui.md shows the metadata's links too;
        # the Dagster UI scrolls inside its own panes, which full_page would not capture
        size = pg.viewport_size
        pg.set_viewport_size({"width": size["width"], "height": 1300})
        pg.wait_for_timeout(500)
        DOCS.mkdir(exist_ok=True)
        pg.screenshot(path=str(DOCS / f"{name}.png"))
        pg.set_viewport_size(size)
    return path


def assert_charts_drawn(pg, selector: str, at_least: int) -> int:
    charts = pg.locator(selector)
    n = charts.count()
    assert n >= at_least, f"expected at least {at_least} charts ({selector}), found {n}"
    for i in range(n):
        chart = charts.nth(i)
        box = chart.bounding_box()
        assert box and box["width"] > 0 and box["height"] > 0, f"chart {i} has no size: {box}"
        assert chart.is_visible(), f"chart {i} is hidden"
        # drawn, not empty: each chart has shapes of its own
        assert chart.locator("rect, path, line, polyline").count() > 0, f"chart {i} draws nothing"
    return n


def assert_clean(pg) -> None:
    rec = pg.recorder
    assert rec.requests, "no request was recorded: the recorder is not wired"
    assert not rec.problems(), "\n".join(rec.problems())


def test_catalog_page(store_pages, page):
    page.goto(store_pages["catalog"].as_uri(), wait_until="load")
    assert TABLE in page.title() or TABLE in page.locator("h1").first.inner_text()
    for section in ("overview", "issues", "columns", "investigations"):
        assert page.locator(f"section#{section}").is_visible(), f"section {section} not shown"
    columns = page.locator("article.card.column").count()
    assert columns >= 3
    # one histogram or bar chart per column at least for most columns
    assert_charts_drawn(page, "svg.chart", at_least=columns // 2)
    shoot(page, "catalog_page")
    # for the README: the top of the page a reader meets (summary cards, the understanding and
    # the column dictionary)
    shoot(page, "page-catalog", docs=True)
    assert_clean(page)


def test_recent_summary_page(store_pages, page):
    page.goto(store_pages["recent_summary"].as_uri(), wait_until="load")
    assert page.locator("h1").first.is_visible()
    assert TABLE in page.content()
    assert page.locator("h2").count() >= 1
    shoot(page, "recent_summary")
    assert_clean(page)


def test_index_page(store_pages, page):
    page.goto(store_pages["index"].as_uri(), wait_until="load")
    links = page.locator("a[href$='catalog.html']")
    assert links.count() >= 2, "the index links fewer catalog pages than tables catalogued"
    texts = page.locator("body").inner_text()
    assert TABLE in texts and "orders" in texts
    # the link works from the browser: it opens the table's page
    page.locator(f"a[href*='{TABLE}'][href$='catalog.html']").first.click()
    page.wait_for_load_state("load")
    assert page.url.endswith("catalog.html") and TABLE in page.url
    page.go_back(wait_until="load")
    shoot(page, "index")
    # the search runs in the page: a column's name finds its table
    page.fill("#search", "email")
    assert page.locator(f"tr[data-table='{TABLE}']").is_visible()
    assert "column" in page.locator(f"tr[data-table='{TABLE}'] .match").inner_text()
    page.fill("#search", "")
    page.evaluate("window.scrollTo(0, 0)")
    shoot(page, "page-index", docs=True)
    assert_clean(page)


@pytest.fixture
def catalog_stack(local_sandbox, tmp_path):
    """The suite's `catalog_stack` for the one test here that looks at the Dagster UI, stopped when
    that test ends: left running for the module, its daemon, webserver and code servers would take
    a core from the review tests below (eight times slower on two cores)."""
    from e2e_support import catalog_stack_session

    yield from catalog_stack_session(tmp_path / "dagster_dev")


def test_dagster_ui_asset_page(chromium, catalog_stack, page):
    catalog_stack.catalog_partition(TABLE)
    location, _ = catalog_stack.repository()
    base = catalog_stack.dev.url

    page.goto(f"{base}/assets/catalog_page?partition={TABLE}&view=partitions", wait_until="load")
    # the latest materialization's metadata, as the UI renders it from the run above
    page.get_by_text("dagster/row_count").first.wait_for(state="visible")
    page.get_by_text("catalog.html").first.wait_for(state="visible")
    assert page.get_by_text(TABLE).first.is_visible()
    assert page.locator("svg").count() > 0
    shoot(page, "ui-asset-partition", docs=True)

    page.goto(f"{base}/locations/{location}/asset-groups/catalog/lineage", wait_until="load")
    # without the side navigation the graph has room for its detailed nodes
    page.get_by_text("Hide navigation").click()
    for asset in ("table_profile", "investigations", "catalog_index"):
        page.get_by_text(asset, exact=True).first.wait_for(state="visible")
    # the lineage graph draws its edges as paths in one large SVG under the asset nodes
    graph = page.evaluate("""() => Math.max(0, ...[...document.querySelectorAll('svg')]
        .filter(s => s.querySelector('path'))
        .map(s => { const r = s.getBoundingClientRect(); return Math.min(r.width, r.height); }))""")
    assert graph > 100, f"no lineage graph drawn (largest SVG side {graph}px)"
    shoot(page, "ui-asset-graph")

    # the sensor's page: its ticks, the partitions it added and the runs it requested
    page.goto(f"{base}/locations/{location}/sensors/database_change_sensor", wait_until="load")
    page.get_by_text("database_change_sensor").first.wait_for(state="visible")
    page.get_by_text("Running").first.wait_for(state="visible")
    shoot(page, "ui-sensor", docs=True)
    assert_clean(page)


RELOAD = """mutation Reload($name: String!) {
  reloadRepositoryLocation(repositoryLocationName: $name) { __typename }
}"""
TABLE_ASSETS = "{ assetNodes { assetKey { path } } }"


def test_dagster_ui_lists_the_users_tables(chromium, catalog_stack, page):
    """Dagster's asset catalog after a table is cataloged and the code location reloaded: the
    table is an asset of its own, catalog/<database>/<table>, with its columns and description."""
    from cataloger_dagster.assets.table_specs import table_key
    from e2e_support import wait_for

    catalog_stack.catalog_partition(TABLE)
    location, _ = catalog_stack.repository()
    dev = catalog_stack.dev
    assert dev.graphql(RELOAD, {"name": location})["reloadRepositoryLocation"]["__typename"] == "WorkspaceLocationEntry"
    key = table_key(catalog_stack.database.name, TABLE).path
    wait_for(f"{'/'.join(key)} in the asset catalog",
             lambda: any(n["assetKey"]["path"] == key for n in dev.graphql(TABLE_ASSETS)["assetNodes"]),
             timeout=120, every=2)

    # the folder of the database's tables, as the catalog lists them
    page.goto(f"{dev.url}/assets/{'/'.join(key[:2])}", wait_until="load")
    page.get_by_text(TABLE, exact=True).first.wait_for(state="visible")
    page.get_by_text("Loading", exact=False).first.wait_for(state="hidden")
    shoot(page, "ui-table-assets", docs=True)

    # one table: its description, its columns with their meanings, its row count and findings
    page.goto(f"{dev.url}/assets/{'/'.join(key)}", wait_until="load")
    page.get_by_text("Columns").first.wait_for(state="visible")
    page.get_by_text("customer_id").first.wait_for(state="visible")
    shoot(page, "ui-table-asset", docs=True)
    assert_clean(page)


def test_recorder_catches_outside_requests_and_console_errors(page, tmp_path):
    """The guard itself: a page that reaches outside and logs an error does not pass."""
    html = tmp_path / "leaky.html"
    html.write_text('<html><body><img src="https://example.invalid/pixel.png">'
                    '<script>console.error("boom")</script><svg width="10" height="10"></svg></body></html>')
    page.goto(html.as_uri(), wait_until="load")
    rec = page.recorder
    assert "https://example.invalid/pixel.png" in rec.blocked
    assert any("boom" in e for e in rec.errors)
    with pytest.raises(AssertionError, match="left the machine"):
        assert_clean(page)
    with pytest.raises(AssertionError, match="draws nothing"):
        assert_charts_drawn(page, "svg", at_least=1)


# ------------------------------------------------- reviews: the control on the page, three ways


def shell_run(command: str, cwd: Path) -> "subprocess.CompletedProcess":
    """Run what was copied from a page through a real shell, as a reader pasting it would, with
    the `cataloger` next to this Python first on PATH and no settings from the environment."""
    import subprocess
    import sys

    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "cataloger").is_file(), f"no cataloger command in {bin_dir}: pip install -e ."
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOGER_")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def copy_from_control(pg, issue_id: str, verdict: str, note: str, what: str = "command") -> str:
    """Use an issue's Review control as a reader does; what its Copy button put on the clipboard."""
    index = pg.evaluate("id => [...document.querySelectorAll('details.review')].findIndex(d => d.dataset.issueId === id)",
                        issue_id)
    assert index >= 0, f"no review control for issue {issue_id!r}"
    control = pg.locator("details.review").nth(index)
    if not control.evaluate("d => d.open"):
        control.locator("summary").click()
    control.locator(f"input[type=radio][value={verdict}]").check()
    control.locator(".review-note-input").fill(note)
    control.locator(".review-copied").evaluate("e => { e.textContent = ''; }")
    control.locator(f".review-copy[data-copy='review-{what}']").click()
    control.locator(".review-copied").filter(has_text="copied").wait_for()
    copied = pg.evaluate("navigator.clipboard.readText()")
    assert copied == control.locator(f".review-{what}").text_content()
    return copied


def off_loop(func, *args, **kwargs):
    """Run Dagster in a thread of its own: not inside the event loop Playwright keeps in this one."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(func, *args, **kwargs).result()


@pytest.fixture(scope="module")
def reviewed_demo(chromium, local_sandbox_for_module, demo_db, tmp_path_factory):
    """The demo's customers table catalogued once, in a store of its own."""
    from cataloger_dagster.cli.runner import catalog_database

    store = tmp_path_factory.mktemp("review_store")
    report = catalog_database(database=f"duckdb:///{demo_db}", store=str(store), tables=[TABLE],
                              exploration_rate=0.0)
    assert not report.failed, [t.error for t in report.failed]
    return {"db": demo_db, "store": store, "page": Path(report.tables[0].html)}


def test_three_ways_to_review_land_in_one_log_and_the_timelapse(reviewed_demo, page, tmp_path):
    import dagster as dg
    from click.testing import CliRunner

    from cataloger_dagster.cli import main
    from cataloger_dagster.cli.runner import catalog_database
    from cataloger_dagster.core.reviews.record import latest_issues
    from cataloger_dagster.jobs import REVIEW_OP, build_review_job
    from cataloger_dagster.resources.store import LocalStore, table_prefix
    from cataloger_dagster.settings.factories import resources

    store = LocalStore(root=str(reviewed_demo["store"]))
    _, issues, _ = latest_issues(store, "demo.duckdb", TABLE)
    assert len(issues.issues) >= 3, "the demo's customers table should have several planted issues"
    by_cli, by_job, by_page = (i.id for i in issues.issues[:3])

    # 1. the command line
    out = CliRunner().invoke(main, ["review", TABLE, by_cli, "--dismiss", "--note", "cli", "--name", "demo.duckdb",
                                    "--store", str(reviewed_demo["store"])], env={"CATALOGER_DATABASE": None})
    assert out.exit_code == 0, out.output
    # 2. the Dagster job, with the resources the code location gives it
    res = resources(database=f"duckdb://{reviewed_demo['db']}", store=str(reviewed_demo["store"]))
    job = dg.Definitions(jobs=[build_review_job("ops-team")], resources={k: res[k] for k in ("database", "store")})
    assert off_loop(job.resolve_job_def("review_issue").execute_in_process, run_config={"ops": {REVIEW_OP: {"config": {
        "table": TABLE, "issue_id": by_job, "verdict": "expected", "note": "job"}}}}).success
    # 3. the command copied from the catalog page, run in a shell
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(reviewed_demo["page"].as_uri(), wait_until="load")
    command = copy_from_control(page, by_page, "accept", "from the page")
    done = shell_run(command, tmp_path)
    assert done.returncode == 0, done.stderr
    shoot(page, "review_control")
    assert_clean(page)

    log = store.read_reviews(table_prefix("demo.duckdb", TABLE))
    assert [(r.issue_id, r.verdict, r.note) for r in log] == [
        (by_cli, "dismiss", "cli"), (by_job, "expected", "job"), (by_page, "accept", "from the page")]
    assert log[1].reviewer == "ops-team" and log[1].via.startswith("dagster run ")

    # the next run: the timelapse lists both runs and the three reviews, and counts the dismissal
    report = off_loop(catalog_database, database=f"duckdb:///{reviewed_demo['db']}",
                      store=str(reviewed_demo["store"]), tables=[TABLE], exploration_rate=0.0)
    assert not report.failed
    timelapse = reviewed_demo["store"] / "demo.duckdb" / TABLE / "timelapse.html"
    page.goto(timelapse.as_uri(), wait_until="load")
    assert page.locator("tr.run").count() == 2
    assert page.locator("table.reviews tbody tr").count() == 3
    assert page.locator("tr.run").first.locator("td").nth(4).inner_text() == "1"   # dismissed, newest run
    # the reader's trends (rows, issues, health, pass rate) are drawn; what the pipeline spent
    # (cells, tokens) waits in the closed Run details, drawn once opened
    assert_charts_drawn(page, "svg.chart.trend >> visible=true", at_least=4)
    page.locator("details.run-details > summary").first.click()
    assert_charts_drawn(page, "svg.chart.trend", at_least=6)
    page.locator("tr.run").last.get_by_text("catalog").click()          # a link to an earlier run's page
    page.wait_for_load_state("load")
    assert page.url.endswith("catalog.html") and page.locator("details.review").count() >= 3
    shoot(page, "timelapse_linked_run")
    page.goto(Path(report.index).as_uri(), wait_until="load")
    page.locator("a.timelapse").first.click()
    page.wait_for_load_state("load")
    assert page.url.endswith("timelapse.html")
    assert_clean(page)


HOSTILE_TABLE = "it's $(touch pwned) `touch pwned2` \"<script>alert(1)</script>\""
HOSTILE_COLUMN = "a'b $(touch pwned3)\n`x` <img src=x onerror=alert(2)>"


def test_the_review_control_keeps_hostile_names_and_notes_as_data(local_sandbox, tmp_path, page):
    import duckdb

    from cataloger_dagster.cli.runner import catalog_database
    from cataloger_dagster.core.shown import has_control
    from cataloger_dagster.resources.store import LocalStore, table_prefix

    db = tmp_path / "hostile.duckdb"
    quoted_table, quoted_column = HOSTILE_TABLE.replace('"', '""'), HOSTILE_COLUMN.replace('"', '""')
    with duckdb.connect(str(db)) as con:
        con.execute(f'CREATE TABLE "{quoted_table}" AS SELECT range AS id, '
                    f'CASE WHEN range % 2 = 0 THEN NULL ELSE \'v\' END AS "{quoted_column}" FROM range(200)')
    store = tmp_path / "store"
    report = off_loop(catalog_database, database=f"duckdb:///{db}", store=str(store), exploration_rate=0.0)
    assert not report.failed, [t.error for t in report.failed]
    work = tmp_path / "shell"
    work.mkdir()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(Path(report.tables[0].html).as_uri(), wait_until="load")
    assert page.locator("script").count() == 1 and page.locator("img").count() == 0
    issue_id = page.evaluate("[...document.querySelectorAll('details.review')].map(d => d.dataset.issueId)"
                             ".find(id => id.includes('pwned3'))")
    assert issue_id and "\n" in issue_id
    note = "it's fine $(touch pwned4) `touch pwned5` \"q\" \\ <script>alert(3)</script> ; exit 3"
    command = copy_from_control(page, issue_id, "dismiss", note)
    done = shell_run(command, work)
    assert done.returncode == 0, done.stderr
    [entry] = LocalStore(root=str(store)).read_reviews(table_prefix("hostile.duckdb", HOSTILE_TABLE))
    assert (entry.table, entry.issue_id, entry.note, entry.verdict) == (HOSTILE_TABLE, issue_id, note, "dismiss")
    assert not list(work.glob("pwned*")) and not list(tmp_path.glob("pwned*")) and not dialogs
    # a note with control characters: the page's script quotes it as bash's $'...', as shell_word does
    typed = "ctl \x15touch pwned6\x0f sep \u2028 rlo \u202e end"
    command = copy_from_control(page, issue_id, "accept", typed)
    assert "$'" in command and not has_control(command)
    assert shell_run(command, work).returncode == 0
    entries = LocalStore(root=str(store)).read_reviews(table_prefix("hostile.duckdb", HOSTILE_TABLE))
    assert (entries[-1].note, entries[-1].verdict) == (typed, "accept") and not list(work.glob("pwned*"))
    # and the launchpad config it shows parses back to the same strings
    import yaml
    config = yaml.safe_load(copy_from_control(page, issue_id, "expected", note, what="config"))
    assert config["ops"]["record_review"]["config"] == {
        "table": HOSTILE_TABLE, "issue_id": issue_id, "verdict": "expected", "note": note}
    assert_clean(page)
