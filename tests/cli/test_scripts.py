"""`cataloger scripts list|show|diff` over real stores (a local folder and S3 on moto)."""

from __future__ import annotations

import difflib
import json
import uuid

import pytest
from click.testing import CliRunner

from cataloger_dagster.cli import main
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import (
    LocalStore,
    store_from_url,
    table_prefix,
)

SCRIPT = "catalog_script.py"
DB_URL = "duckdb:///data/somewhere/shop.duckdb"   # never opened: only its name is used
TS = [f"2026-03-0{i}T10:00:00.000000Z" for i in range(1, 5)]

CODE_1 = "import ibis\ncon = ibis.connect(DB)\nprint(con.table('orders').count().execute())\n"
CODE_2 = CODE_1 + "print('nulls', 3)\n"
CODE_3 = CODE_2.replace("nulls', 3", "nulls', 4")
# run 1 explored; run 2 reused run 1 and is the best by pass rate; run 3 is
# the latest (worse); run 4 holds no script at all
METRICS = [
    {"cells": 12, "seconds": 8.5, "pass_rate": 0.75, "coverage": 1.0, "explored": True,
     "based_on": None, "verdicts": {"confirmed": 3, "inconclusive": 1}},
    {"cells": 3, "seconds": 1.25, "pass_rate": 1.0, "coverage": 1.0, "explored": False,
     "based_on": TS[0], "verdicts": {"confirmed": 4}},
    {"cells": 2, "seconds": 0.5, "pass_rate": 0.5, "coverage": 1.0, "explored": False,
     "based_on": TS[1], "based_on_table": "customers", "verdicts": {"confirmed": 2}},
]


def invoke(*args, env=None):
    env = {"CATALOGER_DATABASE": None, "CATALOGER_STORE": None, **(env or {})}
    return CliRunner().invoke(main, ["scripts", *args], env=env, catch_exceptions=False)


def fill(store, database="shop.duckdb", table="orders"):
    prefix = table_prefix(database, table)
    for ts, code, metrics in zip(TS, (CODE_1, CODE_2, CODE_3), METRICS):
        store.write_script_with_metrics(prefix, ts, SCRIPT, code, metrics)
    store.write_json(prefix, TS[3], "profile.json", {"rows": 1})   # a run without a script
    return prefix


@pytest.fixture
def store_dir(tmp_path):
    root = tmp_path / "store"
    store = LocalStore(root=str(root))
    fill(store)
    store.write_json(table_prefix("shop.duckdb", "customers"), TS[0], "profile.json", {})
    return root


def common(root):
    return ["--database", DB_URL, "--store", str(root)]


def test_database_name_comes_from_the_url_without_connecting():
    assert DatabaseResource(url=DB_URL).database_name == "shop.duckdb"


# ---------------------------------------------------------------------- list


def test_list_text_marks_the_script_fed_forward(store_dir):
    out = invoke("list", "orders", *common(store_dir))
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    rows = [line for line in lines if line[2:6] == "2026"]
    # newest first, and the run without a script is not listed
    assert [r[2:].split()[0] for r in rows] == [TS[2], TS[1], TS[0]]
    marked = [r for r in rows if r.startswith("*")]
    assert len(marked) == 1 and TS[1] in marked[0]
    assert "100%" in marked[0] and " 3 " in marked[0] and "1.25" in marked[0]
    assert "explored" in rows[2] and "75%" in rows[2]
    assert f"customers@{TS[1]}" in rows[0]


def test_list_json_matches_the_store(store_dir):
    out = invoke("list", "orders", *common(store_dir), "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    store = LocalStore(root=str(store_dir))
    prefix = table_prefix("shop.duckdb", "orders")
    assert (data["database"], data["table"]) == ("shop.duckdb", "orders")
    assert data["best"] == store.best_script(prefix, SCRIPT).timestamp == TS[1]
    assert [r["timestamp"] for r in data["runs"]] == [TS[2], TS[1], TS[0]]
    assert [r["best"] for r in data["runs"]] == [False, True, False]
    for row, metrics in zip(data["runs"], reversed(METRICS)):
        assert row["metrics"] == metrics
        assert (row["pass_rate"], row["cells"], row["seconds"]) == (
            metrics["pass_rate"], metrics["cells"], metrics["seconds"])
        assert row["uri"] == store.uri(prefix, row["timestamp"], SCRIPT)


def test_settings_come_from_the_environment(store_dir):
    out = invoke("list", "orders", "--json",
                 env={"CATALOGER_STORE": str(store_dir), "CATALOGER_DATABASE": DB_URL})
    assert out.exit_code == 0, out.output
    assert len(json.loads(out.stdout)["runs"]) == 3
    # --name (or its older spelling --database-name) wins over the URL's name
    for option in ("--name", "--database-name"):
        out = invoke("list", "orders", "--json", option, "other", "--store", str(store_dir))
        assert out.exit_code == 1 and "'other'" in json.loads(out.stdout)["error"]
    out = invoke("list", "orders", "--json", "--name", "shop.duckdb", "--store", str(store_dir))
    assert out.exit_code == 0 and len(json.loads(out.stdout)["runs"]) == 3


def test_another_databases_catalog_of_the_same_name_is_refused(store_dir):
    from cataloger_dagster.resources.store.identity import claim_database_catalog

    claim_database_catalog(LocalStore(root=str(store_dir)), DatabaseResource(url=DB_URL))
    assert invoke("list", "orders", *common(store_dir), "--json").exit_code == 0   # its own
    elsewhere = ["--database", "duckdb:///data/elsewhere/shop.duckdb", "--store", str(store_dir)]
    out = invoke("list", "orders", *elsewhere, "--json")
    error = json.loads(out.stdout)["error"]
    assert out.exit_code == 1 and "/data/somewhere/shop.duckdb" in error and "--name" in error
    assert invoke("list", "orders", *elsewhere, "--name", "shop.duckdb", "--json").exit_code == 0   # said so


def test_best_follows_the_metrics(tmp_path):
    store = LocalStore(root=str(tmp_path))
    prefix = fill(store)
    # a newer run beats run 2 on time at the same pass rate and coverage
    ts = "2026-03-09T10:00:00.000000Z"
    store.write_script_with_metrics(prefix, ts, SCRIPT, CODE_2, {**METRICS[1], "seconds": 0.1})
    data = json.loads(invoke("list", "orders", *common(tmp_path), "--json").stdout)
    assert data["best"] == ts and [r["timestamp"] for r in data["runs"] if r["best"]] == [ts]


# ---------------------------------------------------------------------- show


def test_show_defaults_to_best_and_prints_code_and_metrics(store_dir):
    out = invoke("show", "orders", *common(store_dir))
    assert out.exit_code == 0, out.output
    assert out.output.endswith(CODE_2)
    header = out.output[: -len(CODE_2)]
    assert TS[1] in header and "fed to the next run" in header
    assert "pass_rate" in header and "1.0" in header and '{"confirmed": 4}' in header


@pytest.mark.parametrize("which, expected", [
    ("latest", 2), ("best", 1), (TS[0], 0),
    ("2026-03-01T10:00:00Z", 0),          # another ISO-8601 spelling of TS[0]
    ("2026-03-03", 2),                    # a unique prefix
])
def test_show_json_picks_the_run(store_dir, which, expected):
    out = invoke("show", "orders", which, *common(store_dir), "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["timestamp"] == TS[expected]
    assert data["code"] == (CODE_1, CODE_2, CODE_3)[expected]
    assert data["metrics"] == METRICS[expected]
    assert data["best"] is (expected == 1)


def test_show_code_only_is_the_script_alone(store_dir):
    out = invoke("show", "orders", TS[0], "--code-only", *common(store_dir))
    assert out.exit_code == 0 and out.output == CODE_1


# ---------------------------------------------------------------------- diff


def test_diff_defaults_to_the_two_latest_scripts(store_dir):
    out = invoke("diff", "orders", *common(store_dir))
    assert out.exit_code == 0, out.output
    expected = difflib.unified_diff(
        CODE_2.splitlines(), CODE_3.splitlines(), lineterm="",
        fromfile=f"{TS[1]}/{SCRIPT}", tofile=f"{TS[2]}/{SCRIPT}")
    assert out.output == "\n".join(expected) + "\n"
    assert "-print('nulls', 3)" in out.output and "+print('nulls', 4)" in out.output


def test_diff_json_between_given_runs(store_dir):
    out = invoke("diff", "orders", TS[0], "best", *common(store_dir), "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert (data["from"], data["to"], data["identical"]) == (TS[0], TS[1], False)
    added = [line for line in data["diff"].splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+print('nulls', 3)"]
    assert data["metrics"] == {"from": METRICS[0], "to": METRICS[1]}
    # only TS_A: against the latest
    data = json.loads(invoke("diff", "orders", TS[0], *common(store_dir), "--json").stdout)
    assert (data["from"], data["to"]) == (TS[0], TS[2])


def test_diff_of_identical_scripts_says_so(store_dir):
    out = invoke("diff", "orders", TS[1], TS[1], *common(store_dir))
    assert out.exit_code == 0 and "identical" in out.output
    data = json.loads(invoke("diff", "orders", TS[1], TS[1], *common(store_dir), "--json").stdout)
    assert data["identical"] is True and data["diff"] == ""


def test_diff_needs_two_scripts(tmp_path):
    store = LocalStore(root=str(tmp_path))
    store.write_script_with_metrics(table_prefix("shop.duckdb", "orders"), TS[0], SCRIPT, CODE_1, METRICS[0])
    out = invoke("diff", "orders", *common(tmp_path))
    assert out.exit_code == 1 and "only one script" in out.output and TS[0] in out.output


# -------------------------------------------------------------------- errors


def test_table_without_scripts_lists_the_tables(store_dir):
    out = invoke("list", "nope", *common(store_dir))
    assert out.exit_code == 1
    assert "'nope'" in out.output and "customers, orders" in out.output
    data = json.loads(invoke("show", "nope", *common(store_dir), "--json").stdout)
    assert data["tables"] == ["customers", "orders"] and "no scripts" in data["error"]
    # a table with runs but no script says so
    out = invoke("diff", "customers", *common(store_dir))
    assert out.exit_code == 1 and "none holds a catalog_script.py" in out.output


def test_empty_store_says_how_to_fill_it(tmp_path):
    out = invoke("list", "orders", *common(tmp_path / "empty"))
    assert out.exit_code == 1 and "cataloger run" in out.output


@pytest.mark.parametrize("command", ["show", "diff"])
def test_unknown_timestamp_lists_the_available_ones(store_dir, command):
    for which in ("2027-01-01T00:00:00Z", "garbage", TS[3], "2026-03-0"):
        out = invoke(command, "orders", which, *common(store_dir), "--json")
        assert out.exit_code == 1, which
        data = json.loads(out.stdout)
        assert data["available"] == [TS[2], TS[1], TS[0]]
        assert all(ts in data["error"] for ts in TS[:3])
    assert "holds no catalog_script.py" in json.loads(
        invoke(command, "orders", TS[3], *common(store_dir), "--json").stdout)["error"]
    assert "matches 3 runs" in invoke(command, "orders", "2026-03-0", *common(store_dir)).output


def test_bad_store_url_is_a_clear_error(tmp_path):
    out = invoke("list", "orders", "--database", DB_URL, "--store", "gs://bucket/x")
    assert out.exit_code == 1 and "unsupported store URL" in out.output


# ------------------------------------------------------------------------ S3


@pytest.fixture
def s3_env(s3_server, monkeypatch):
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": s3_server}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def test_scripts_on_s3(s3_env):
    bucket = f"test-{uuid.uuid4().hex[:12]}"
    url = f"s3://{bucket}/team/catalog"
    store = store_from_url(url)
    store.s3_resource().get_client().create_bucket(Bucket=bucket)
    fill(store)

    data = json.loads(invoke("list", "orders", "--database", DB_URL, "--store", url, "--json").stdout)
    assert data["best"] == TS[1] and [r["timestamp"] for r in data["runs"]] == [TS[2], TS[1], TS[0]]
    assert data["runs"][0]["uri"] == f"{url}/shop.duckdb/orders/{TS[2]}/{SCRIPT}"
    out = invoke("show", "orders", "latest", "--code-only", "--database", DB_URL, "--store", url)
    assert out.exit_code == 0 and out.output == CODE_3
    out = invoke("diff", "orders", "--database", DB_URL, "--store", url)
    assert out.exit_code == 0 and "+print('nulls', 4)" in out.output

    out = invoke("list", "orders", "--database", DB_URL, "--store", f"s3://missing-{bucket}/x")
    assert out.exit_code == 1 and f"missing-{bucket}" in out.output


# ------------------------------------------- "best" is what the next run uses


def test_best_is_the_script_the_next_run_starts_from(tmp_path, local_sandbox):
    """Real runs of the real assets on a DuckDB file: the table changes under the script
    fed forward (the next run relearns part of it), a relearning run (explore) follows,
    and the CLI's "best" must be the script that the run after that starts from."""
    import dagster as dg
    import duckdb

    from cataloger_dagster.cli.runner import catalog_database
    from shop import make_shop

    db = make_shop(tmp_path / "shop.duckdb", "events")
    store_root = tmp_path / "store"
    store = LocalStore(root=str(store_root))
    prefix = table_prefix("shop.duckdb", "events")

    def run(explore: bool = False) -> dict:
        report = catalog_database(database=f"duckdb://{db}", store=str(store_root), sandbox="local",
                                  tables=["events"], explore=explore, exploration_rate=0.0,
                                  instance=instance)
        assert not report.failed, report.failed
        return store.read_metrics(prefix, report.tables[0].run, SCRIPT)

    def best() -> str:
        out = invoke("show", "events", "best", "--database", f"duckdb://{db}", "--store",
                     str(store_root), "--json")
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)["timestamp"]

    with dg.instance_for_test() as instance:
        run()
        run()
        with duckdb.connect(str(db)) as con:
            con.execute("ALTER TABLE events DROP COLUMN x")   # the duplicate-rows check compares it
        broke = run()
        failed = broke["based_on"]
        assert failed and broke["relearned"] == ["events_duplicate_rows"]
        # by its own metrics the script that failed is still perfect: only a ranking that
        # counts the later run's relearned issues passes it over
        assert store.read_metrics(prefix, failed, SCRIPT)["pass_rate"] == 1.0
        relearn = run(explore=True)
        assert relearn["explored"] and relearn["pass_rate"] == 1.0
        shown = best()
        assert shown != failed
        following = run()
        assert following["based_on"] == shown and not following["explored"]
        # and again with that run in the history too
        shown = best()
        assert run()["based_on"] == shown


# -------------------------------------------------------------------- origin


def test_a_script_saved_through_mcp_shows_its_origin_and_is_never_fed_forward(store_dir):
    """The newest script claims a perfect pass rate, but an MCP client wrote it: the listing
    and `show` say who, and the script fed forward stays the catalog's best."""
    prefix = table_prefix("shop.duckdb", "orders")
    claimed = "2026-03-05T10:00:00.000000Z"
    LocalStore(root=str(store_dir)).write_script_with_metrics(
        prefix, claimed, SCRIPT, CODE_1, {"cells": 1, "seconds": 0.01, "pass_rate": 1.0, "coverage": 1.0,
                                          "origin": "mcp", "session": "f" * 32})
    out = invoke("list", "orders", *common(store_dir))
    row = next(line for line in out.output.splitlines() if claimed in line)
    assert not row.startswith("*") and f"mcp session {'f' * 32}" in row and "never ranked" in row
    data = json.loads(invoke("list", "orders", *common(store_dir), "--json").stdout)
    assert data["best"] == TS[1]
    assert {r["timestamp"]: r["origin"] for r in data["runs"]}[claimed] == "mcp"
    shown = invoke("show", "orders", claimed, *common(store_dir))
    assert shown.exit_code == 0 and f"# written by: mcp session {'f' * 32}" in shown.output
    assert json.loads(invoke("show", "orders", *common(store_dir), "--json").stdout)["timestamp"] == TS[1]


def test_best_when_only_outside_scripts_are_stored_says_what_to_ask_for(tmp_path):
    store = LocalStore(root=str(tmp_path))
    store.write_script_with_metrics(table_prefix("shop.duckdb", "orders"), TS[0], SCRIPT, CODE_1,
                                    {"pass_rate": 1.0, "origin": "mcp", "session": "s"})
    out = invoke("show", "orders", *common(tmp_path))
    assert out.exit_code == 1 and "no script of the catalog's own" in out.output and "'latest'" in out.output
    listed = json.loads(invoke("list", "orders", *common(tmp_path), "--json").stdout)
    assert listed["best"] is None and listed["runs"][0]["origin"] == "mcp"
