"""cli/app.py: the `cataloger` verbs demo-db, demo, run and profile, invoked in-process with click's
CliRunner on real DuckDB files (the same verbs as a subprocess are in tests/e2e/test_cli.py).

Each invocation runs in an empty folder, so that no `.env` but the test's own is read.
"""

import json
from importlib.metadata import version
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from cataloger_dagster.cli.app import main
from cataloger_dagster.cli.options import MISSING_DATABASE
from cataloger_dagster.demo import create_demo_database
from cataloger_dagster.resources.defaults import DEMO_DATABASE
from shop import make_shop

# the variables the verbs read, unset unless a test sets them
UNSET = {"CATALOGER_DATABASE": None, "CATALOGER_STORE": None, "CATALOGER_AGENT": None, "CATALOGER_SANDBOX": None}


@pytest.fixture
def invoke(tmp_path, monkeypatch):
    # load_dotenv writes into os.environ; monkeypatch puts back what a test's .env may add
    for name in UNSET:
        monkeypatch.setenv(name, "placeholder")
        monkeypatch.delenv(name)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)

    def run(*args, env=None):
        return CliRunner().invoke(main, list(args), env={**UNSET, **(env or {})}, catch_exceptions=False)

    return run


@pytest.fixture
def shop(tmp_path):
    return make_shop(tmp_path / "shop.duckdb")


def test_version_is_the_installed_packages(invoke):
    out = invoke("--version")
    assert out.exit_code == 0 and version("cataloger-dagster") in out.output


# ---------------------------------------------------------------- demo-db


def test_demo_db_json_describes_what_it_wrote(invoke, tmp_path):
    target = tmp_path / "demo.duckdb"
    out = invoke("demo-db", str(target), "--scale", "0.02", "--seed", "3", "--json")
    assert out.exit_code == 0, out.output
    info = json.loads(out.output)
    assert (info["path"], info["seed"], info["scale"]) == (str(target), 3, 0.02)
    with duckdb.connect(str(target), read_only=True) as con:
        for table, n in info["tables"].items():
            assert con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] == n


def test_demo_db_text_and_refusal_to_overwrite(invoke, tmp_path):
    target = tmp_path / "demo.duckdb"
    out = invoke("demo-db", str(target), "--scale", "0.02")
    assert out.exit_code == 0 and out.output.strip() == f"demo database written to {target}"
    before = target.read_bytes()
    again = invoke("demo-db", str(target), "--scale", "0.02")
    assert again.exit_code == 1
    assert again.output.startswith("Error: ") and "already exists" in again.output
    assert "Traceback" not in again.output and target.read_bytes() == before


# ---------------------------------------------------------------- profile


def test_profile_text_lists_every_column(invoke, shop):
    out = invoke("profile", "--database", f"duckdb://{shop}", "--table", "events")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0] == "events: 2,030 rows, 5 columns"
    assert [line.split()[0] for line in lines[1:]] == ["event_id", "customer_id", "page", "status", "x"]
    page = next(line for line in lines if line.split()[0] == "page")
    assert "nulls=203" in page and "distinct=7" in page


def test_profile_json_is_the_profile(invoke, shop):
    out = invoke("profile", "--database", f"duckdb://{shop}", "--table", "customers", "--json")
    assert out.exit_code == 0, out.output
    profile = json.loads(out.output)
    assert (profile["table"], profile["row_count"], profile["column_count"]) == ("customers", 200, 2)
    assert profile["fingerprint"]["row_count"] == 200 and len(profile["sample_rows"]) == 5


def test_profile_needs_a_database(invoke):
    out = invoke("profile", "--table", "events")
    assert out.exit_code == 2 and out.output.splitlines()[-1] == f"Error: {MISSING_DATABASE}"


def test_profile_reads_the_database_from_the_environment_and_dotenv(invoke, tmp_path, shop):
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE only_here AS SELECT 1 AS id")
    Path(".env").write_text(f"CATALOGER_DATABASE=duckdb://{other}\n")
    from_file = invoke("profile", "--table", "only_here", "--json")
    assert from_file.exit_code == 0, from_file.output
    assert json.loads(from_file.output)["row_count"] == 1
    # the environment wins over the file
    from_env = invoke("profile", "--table", "events", "--json", env={"CATALOGER_DATABASE": f"duckdb://{shop}"})
    assert from_env.exit_code == 0, from_env.output
    assert json.loads(from_env.output)["row_count"] == 2030


def test_profile_errors_are_one_clean_line(invoke, tmp_path, shop):
    missing = invoke("profile", "--database", f"duckdb://{tmp_path / 'nope.duckdb'}", "--table", "t")
    assert missing.exit_code == 1 and "does not exist" in missing.output and "Traceback" not in missing.output
    unknown = invoke("profile", "--database", f"duckdb://{shop}", "--table", "no_such_table")
    assert unknown.exit_code == 1 and "no_such_table" in unknown.output and "Traceback" not in unknown.output


# ---------------------------------------------------------------- run


def test_run_text_reports_each_failure_and_the_index(invoke, tmp_path, local_sandbox):
    db = tmp_path / "mixed.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE good AS SELECT range AS id, range % 3 AS grp FROM range(60)")
        con.execute("CREATE TABLE gone AS SELECT 1 AS x")
        con.execute("CREATE VIEW broken AS SELECT * FROM gone")
        con.execute("DROP TABLE gone")
    store = tmp_path / "store"
    out = invoke("run", "--database", f"duckdb://{db}", "--store", str(store), "--sandbox", "local")
    assert out.exit_code == 1
    assert f"cataloged 1/2 tables of duckdb://{db}" in out.stdout
    failed = [line for line in out.stdout.splitlines() if line.startswith("  FAILED ")]
    assert len(failed) == 1 and failed[0].startswith("  FAILED broken: table 'broken' in duckdb://")
    assert "(while profiling it) (full error in " in failed[0] and "Traceback" not in out.output
    assert "issues: 0 high, " in out.stdout
    assert f"catalog: {store / 'mixed.duckdb' / 'index.html'}" in out.stdout
    assert (store / "mixed.duckdb" / "index.html").is_file()


def test_run_json_selected_tables(invoke, tmp_path, shop, local_sandbox):
    store = tmp_path / "store"
    out = invoke("run", "--database", f"duckdb://{shop}", "--store", str(store), "--sandbox", "local",
                 "--table", "customers", "--exploration-rate", "0", "--json")
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert [t["table"] for t in report["tables"]] == ["customers"]
    assert report["tables"][0]["status"] == "ok" and Path(report["tables"][0]["html"]).is_file()
    assert not (store / "shop.duckdb" / "events").exists()


def test_run_errors_are_one_clean_line(invoke, tmp_path):
    bad_setting = invoke("run", "--database", f"duckdb://{tmp_path / 'nope.duckdb'}", "--agent", "bogus")
    assert bad_setting.exit_code == 1
    assert "unknown CATALOGER_AGENT 'bogus'" in bad_setting.output and "Traceback" not in bad_setting.output
    unreachable = invoke("run", "--database", f"duckdb://{tmp_path / 'nope.duckdb'}", "--store", str(tmp_path))
    assert unreachable.exit_code == 1
    # the progress bar may have started on stderr; the error is the last line
    last = unreachable.output.splitlines()[-1]
    assert last.startswith("Error: ") and "does not exist" in last and "Traceback" not in unreachable.output
    # a store no table could be written to: said once, naming it and what to do, before any table runs
    (tmp_path / "a_file").write_text("not a folder")
    shop_db = make_shop(tmp_path / "shop.duckdb")
    unwritable = invoke("run", "--database", f"duckdb://{shop_db}", "--store", str(tmp_path / "a_file" / "store"))
    assert unwritable.exit_code == 1 and "Traceback" not in unwritable.output
    last = unwritable.output.splitlines()[-1]
    assert last.startswith("Error: ") and str(tmp_path / "a_file" / "store") in last and "CATALOGER_STORE" in last


def test_run_without_a_database_does_not_fall_back_to_the_demo(invoke):
    # the demo database at its own path is there: still not read without being named
    create_demo_database(Path(DEMO_DATABASE), scale=0.02)
    out = invoke("run", "--store", "catalog")
    assert out.exit_code == 2 and out.output.splitlines()[-1] == f"Error: {MISSING_DATABASE}"
    assert not Path("catalog").exists()


# ---------------------------------------------------------------- demo


def test_demo_catalogs_the_demo_database_it_finds(invoke, local_sandbox):
    demo = Path(DEMO_DATABASE)       # relative: where `make run` and `cataloger demo` put it
    info = create_demo_database(demo, scale=0.02)
    before = demo.read_bytes()
    out = invoke("demo", "--store", "catalog", "--json", env={"CATALOGER_SANDBOX": local_sandbox})
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["database"] == f"duckdb://{DEMO_DATABASE}"
    assert {t["table"] for t in report["tables"]} == set(info["tables"])
    assert all(t["status"] == "ok" for t in report["tables"]), report["tables"]
    assert Path(report["index"]) == Path("catalog", "demo.duckdb", "index.html").resolve()
    assert demo.read_bytes() == before      # found, not written again
    assert "demo database written" not in out.output


def test_demo_writes_the_demo_database_first_when_it_is_missing(invoke, tmp_path):
    target = tmp_path / "new" / "demo.duckdb"
    # a store no table can be written to stops the run before any table: what is left is the database
    (tmp_path / "a_file").write_text("not a folder")
    out = invoke("demo", "--path", str(target), "--store", str(tmp_path / "a_file" / "store"))
    assert out.stderr.splitlines()[0] == f"demo database written to {target}"
    with duckdb.connect(str(target), read_only=True) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {"customers", "orders"} <= tables
    assert out.exit_code == 1 and "CATALOGER_STORE" in out.output.splitlines()[-1]


def test_mcp_refuses_an_http_address_without_a_port(tmp_path):
    result = CliRunner().invoke(main, ["mcp", "--database", f"duckdb://{tmp_path / 'x.duckdb'}",
                                       "--store", str(tmp_path / "store"), "--http", "localhost"])
    assert result.exit_code == 2 and "give HOST:PORT" in result.output
