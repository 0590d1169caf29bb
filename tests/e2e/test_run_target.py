"""`cataloger run` checks what the URL points at before any table runs: a schema that does not
exist, or a database with no table, is one line of stderr and a non-zero exit, and nothing is
written to the store; a system table asked for by name fails alone, refused as such.  An empty
table is cataloged, with one finding of its own."""

import json
import re
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import duckdb
import pytest

from cli_support import cataloger

# the progress bar, drawn on stderr while the database is listed
PROGRESS = re.compile(r"\r?cataloging: [^\r\n]*")


def _stderr_lines(stderr: str) -> list[str]:
    return [line for line in PROGRESS.sub("", stderr).splitlines() if line.strip()]


def test_a_postgres_schema_that_does_not_exist_stops_the_run_in_one_line(postgres_admin_url, tmp_path):
    missing = f"nosuch_{uuid.uuid4().hex[:8]}"
    parts = urlsplit(postgres_admin_url)
    url = parts._replace(query="&".join(filter(None, [parts.query, f"schema={missing}"]))).geturl()
    store = tmp_path / "store"
    out = cataloger("run", "--database", url, "--store", str(store))
    assert out.returncode != 0
    assert "Traceback" not in out.stderr and out.stdout == ""
    [line] = _stderr_lines(out.stderr)
    assert line.startswith("Error: ") and f"schema {missing!r} does not exist" in line and "public" in line
    assert not list(store.rglob("index.html")), "no index is written over the earlier one"


def test_an_empty_database_stops_the_run_in_one_line(tmp_path):
    db = tmp_path / "empty.duckdb"
    duckdb.connect(str(db)).close()
    store = tmp_path / "store"
    out = cataloger("run", "--database", f"duckdb://{db}", "--store", str(store))
    assert out.returncode != 0
    assert "Traceback" not in out.stderr and out.stdout == ""
    [line] = _stderr_lines(out.stderr)
    assert line == f"Error: no tables in duckdb://{db}: nothing to catalog; check the URL's database/schema"
    assert not list(store.rglob("index.html"))


def test_a_system_table_asked_for_fails_alone_refused_as_such(tmp_path):
    db = tmp_path / "one.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE orders AS SELECT range AS id FROM range(20)")
    out = cataloger("run", "--database", f"duckdb://{db}", "--store", str(tmp_path / "store"),
                    "--table", "duckdb_tables", "--json")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    [report] = json.loads(out.stdout)["tables"]
    assert report["table"] == "duckdb_tables" and report["status"] == "failed"
    assert "one of the database's own catalog tables" in report["error"] and "orders" in report["error"]


def test_an_empty_table_is_cataloged_with_one_finding_its_check_confirms(tmp_path):
    db = tmp_path / "shop.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE orders AS SELECT range AS id, range % 5 AS grp FROM range(50)")
        con.execute("CREATE TABLE retired (id INTEGER, name VARCHAR)")
    out = cataloger("run", "--database", f"duckdb://{db}", "--store", str(tmp_path / "store"), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    tables = {t["table"]: t for t in report["tables"]}
    retired = tables["retired"]
    assert retired["status"] == "ok" and [i["type"] for i in retired["issues"]] == ["empty_table"]
    assert retired["issues"][0]["severity"] == "medium" and retired["issues"][0]["affectedColumns"] == []
    # the sandbox ran its check on the snapshot: confirmed
    assert retired["pass_rate"] == 1.0 and retired["sandbox_cells"] >= 1
    assert not [i for i in tables["orders"]["issues"] if i["type"] == "empty_table"]
    page = Path(retired["html"]).read_text()
    assert 'data-health="88.0"' in page and "retired has no rows" in page


@pytest.mark.parametrize("kind", ["postgres", "mysql"])
def test_an_empty_server_schema_or_database_stops_the_run_before_any_table(kind, scratch, tmp_path):
    from backends import load_tables
    from cataloger_dagster.cli.runner import catalog_database
    from cataloger_dagster.resources.database.errors import NoTablesError

    url = load_tables(kind, {}, scratch)
    with pytest.raises(NoTablesError, match=r"^no tables in .*: nothing to catalog; check the URL's database/schema$"):
        catalog_database(database=url, store=str(tmp_path / "store"), sandbox="local")
    assert not (tmp_path / "store").exists() or not list((tmp_path / "store").rglob("*.html"))
