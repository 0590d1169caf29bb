import json
import os
import re
import subprocess
from pathlib import Path

import duckdb
import pytest

from cli_support import CATALOGER, cataloger, database_with_a_broken_view


def test_run_json_over_the_demo_database(local_sandbox, demo_db, tmp_path):
    store = tmp_path / "store"
    out = cataloger("run", "--database", f"duckdb://{demo_db}", "--store", str(store), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {"database", "catalog", "store", "index", "tables", "resumed_from", "totals", "notes"}
    assert report["resumed_from"] is None
    tables = {t["table"]: t for t in report["tables"]}
    with duckdb.connect(str(demo_db), read_only=True) as con:
        names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert set(tables) == names
    for t in tables.values():
        assert t["status"] == "ok" and t["error"] is None
        assert Path(t["html"]).is_file() and t["run"] in t["html"]
        assert {"pass_rate", "sandbox_cells", "tokens", "issues"} <= set(t)
        for issue in t["issues"]:
            assert set(issue) == {"id", "type", "severity", "category", "affectedColumns", "affectedRows",
                                  "description", "source", "evidence", "verdict", "verdict_reason", "review",
                                  "review_mark"}
    assert any(t["issues"] for t in tables.values())
    for t in tables.values():  # investigations ran for every table with issues
        assert t["sandbox_cells"] >= 1
        if t["issues"]:
            assert t["pass_rate"] == 1.0
    assert Path(report["index"]).is_file()
    assert report["index"] == str(store.resolve() / "demo.duckdb" / "index.html")


@pytest.mark.slow
def test_one_failing_table_does_not_stop_the_others(tmp_path):
    db = database_with_a_broken_view(tmp_path / "mixed.duckdb", rows=100)
    store = tmp_path / "store"
    out = cataloger("run", "--database", f"duckdb://{db}", "--store", str(store), "--json")
    assert out.returncode == 1
    report = json.loads(out.stdout)
    tables = {t["table"]: t for t in report["tables"]}
    assert tables["good"]["status"] == "ok"
    assert tables["broken"]["status"] == "failed" and "broken" in tables["broken"]["error"]
    index = Path(report["index"]).read_text()
    assert "broken" in index and "good" in index


@pytest.mark.slow
def test_unknown_table_is_reported(demo_db, tmp_path):
    out = cataloger("run", "--database", f"duckdb://{demo_db}", "--store", str(tmp_path / "s"),
                    "--table", "customers", "--table", "no_such_table", "--json")
    assert out.returncode == 1
    tables = {t["table"]: t for t in json.loads(out.stdout)["tables"]}
    assert tables["customers"]["status"] == "ok"
    assert "no_such_table" in tables["no_such_table"]["error"]


@pytest.mark.slow
def test_profile_json(demo_db):
    out = cataloger("profile", "--database", f"duckdb://{demo_db}", "--table", "orders", "--json")
    assert out.returncode == 0, out.stderr
    profile = json.loads(out.stdout)
    assert profile["table"] == "orders" and profile["row_count"] > 0
    assert len(profile["sample_rows"]) == 5


@pytest.mark.slow
def test_demo_db_refuses_to_overwrite(demo_db):
    out = cataloger("demo-db", str(demo_db))
    assert out.returncode != 0 and "exist" in (out.stderr + out.stdout).lower()


def test_password_never_printed(postgres_admin_url, postgres_schema, tmp_path):
    schema, conn = postgres_schema
    conn.execute(f"CREATE TABLE {schema}.things AS SELECT g AS id, 'x' || g AS label FROM generate_series(1, 50) g")
    url = postgres_admin_url.replace("postgres://postgres@", "postgres://postgres:pw-T0pS3cret@") + f"?schema={schema}"
    out = cataloger("run", "--database", url, "--store", str(tmp_path / "s"), "--json")
    assert out.returncode == 0, out.stderr
    assert "pw-T0pS3cret" not in out.stdout + out.stderr
    assert json.loads(out.stdout)["database"].startswith("postgres://postgres:***@")
    for path in (tmp_path / "s").rglob("*"):
        if path.is_file():
            assert b"pw-T0pS3cret" not in path.read_bytes(), path


@pytest.mark.slow
def test_progress_counts_the_tables(tmp_path):
    db = tmp_path / "two.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE a AS SELECT range AS id FROM range(50)")
        con.execute("CREATE TABLE b AS SELECT range AS id, 'x' AS tag FROM range(50)")
    out = cataloger("run", "--database", f"duckdb://{db}", "--store", str(tmp_path / "store"))
    assert out.returncode == 0, out.stderr
    # not a terminal: one line per table as it finishes, with its own time
    assert re.search(r"^  done a in \d+\.\d s$", out.stderr, re.M) and re.search(r"^  done b in \d+\.\d s$", out.stderr, re.M)
    assert "cataloged 2/2 tables" in out.stdout


@pytest.mark.slow
def test_run_makes_a_dagster_home_that_does_not_exist_yet(tmp_path):
    # a fresh clone: the Makefile points DAGSTER_HOME at .dagster_home before anything made it
    db = tmp_path / "one.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT range AS id FROM range(10)")
    home = tmp_path / "not-yet" / ".dagster_home"
    out = subprocess.run(
        [CATALOGER, "run", "--database", f"duckdb://{db}", "--store", str(tmp_path / "store"), "--json"],
        capture_output=True, text=True, timeout=600,
        env={**{k: v for k, v in os.environ.items() if k not in ("CATALOGER_DATABASE", "CATALOGER_STORE")},
             "DAGSTER_HOME": str(home)})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["tables"][0]["status"] == "ok"
    assert (home / "history").is_dir()  # the runs went to that instance


@pytest.mark.slow
def test_a_table_whose_checks_cannot_all_run_is_degraded_not_ok(tmp_path):
    """The reference search of `orders` reads `customers`, a view that fails whenever its rows are
    read: orders is still cataloged, but says which check could not run, everywhere it is shown."""
    db = tmp_path / "degraded.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE orders AS SELECT range AS order_id, range % 40 AS customer_id FROM range(400)")
        con.execute("CREATE TABLE base AS SELECT CASE WHEN range = 7 THEN 'oops' ELSE range::VARCHAR END AS txt "
                    "FROM range(50)")
        con.execute("CREATE VIEW customers AS SELECT CAST(txt AS INTEGER) AS customer_id FROM base")
    store = tmp_path / "store"
    out = cataloger("run", "--database", f"duckdb://{db}", "--store", str(store), "--json")
    report = json.loads(out.stdout)
    tables = {t["table"]: t for t in report["tables"]}
    orders = tables["orders"]
    assert orders["status"] == "degraded", orders
    assert any("orphan references" in d for d in orders["degradations"]), orders["degradations"]
    assert not any("oops" in d for d in orders["degradations"])  # the kind of error, never its text
    # and which table the search could not read
    assert any("table 'customers' could not be read" in d for d in orders["degradations"]), orders["degradations"]
    page = Path(orders["html"]).read_text()
    assert 'id="degraded"' in page and "orphan references" in page
    index = Path(report["index"]).read_text()
    assert "degraded" in index
    assert "DEGRADED" not in out.stdout  # --json prints only the JSON
